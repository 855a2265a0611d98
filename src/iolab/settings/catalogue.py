"""Every I/O setting iolab reads, recommends, tunes or applies, as rows of data.

One row per setting, of one *kind* (KINDS: how it is applied):
- ``hint``: MPI_Info hints: ROMIO's (MPICH, Intel MPI, Open MPI's ROMIO component), their
  Cray MPICH and Lustre-driver variants;
- ``mca``: Open MPI's MCA parameters (OMPIO's, with the ROMIO hints each one stands for, and
  Open MPI's switch to ROMIO);
- ``pnetcdf``: PnetCDF's hints (MPI_Info given to ncmpi_create/ncmpi_open, or PNETCDF_HINTS);
- ``hdf5``: HDF5 file/dataset properties, set by H5P calls in the program (a code change);
- ``lfs``: Lustre layouts (``lfs setstripe`` on a file or a folder);
- ``env``: environment variables (iolab's IOLAB_BUFFER, MPICH/Cray MPICH's, ROMIO's);
- ``srun``: Slurm placement (srun/sbatch options, or srun's input environment);
- ``engine``: the engine's workload options, made at load time from the engine's own table
  (:func:`engine_rows` of ``iolab-bench --list-options``), never typed here.

diagnose's fix writers, tune's knobs, ``iolab bench`` and the engine's value check
(engine/src/hint_forms.def, generated from these rows by :mod:`iolab.settings.c_table`) all
read them: adding a hint is adding a row.

A row says
- where it exists: ``libraries`` ("romio", "cray", "ompio") and ``driver`` ("lustre": read
  only by ROMIO's Lustre driver, or a Lustre layout; "" every file system);
- its domain: ``domain`` (see DOMAINS) and, for "choice", the words (``choices``);
  :func:`parse` accepts exactly the values of the domain;
- its default per library (``defaults``; a library missing from it: none recorded, or none
  for every file, e.g. ``cb_nodes``), from MPICH's adio/common/ad_hints.c and
  ad_lustre_hints.c and OMPIO's MCA defaults;
- how it is applied (:func:`applied_by`; :mod:`iolab.settings.apply` writes the lines) and
  how its effective value is read back (:func:`read_back`);
- how a command line or the program writes it: ``flag`` (``lfs setstripe -c``, ``srun
  --cpu-bind``), ``env`` (the environment variable that carries it: PNETCDF_HINTS,
  SLURM_CPU_BIND...), ``calls`` (the H5P calls of an HDF5 property);
- for tune: ``knob`` (the name ``iolab tune`` uses) and ``explore`` (what a preset tries;
  empty: not a knob), ``knob_choices`` (the values tune offers for a config list).

Defaults that do not depend on the MPI library (a Lustre stripe size, HDF5's) are keyed
``"*"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from iolab.units import LUSTRE_STRIPE_UNIT

LIBRARIES = ("romio", "cray", "ompio")

# The value forms. Numbers are written in bytes or counts, with no suffix (ROMIO's atoi reads
# "1m" as 1).
DOMAINS = {
    "mode": "enable, disable or automatic",
    "bool": "true or false",
    "bytes": "a whole number of bytes, at least 1",
    "count": "a whole number, at least 1",
    "number": "a whole number, 0 or more",
    "config": "*:N (N aggregators per node, N >= 1) or *:* (every rank)",
    "stripe": "a Lustre stripe size in bytes, a multiple of 64 KiB",
    "osts": "a Lustre stripe count, at least 1",
    "choice": "one of the row's words",
    "lfs_count": "a Lustre stripe count: 1 or more, or -1 for every OST",
    "pfl_end": "the end of a Lustre PFL component in bytes, a multiple of 64 KiB, or -1 "
               "(to the end of the file)",
    "text": "any value: its reader checks it (a path, a spec, a list)",
}
KINDS = {
    "hint": "MPI_Info hint (ROMIO / Cray MPICH)",
    "mca": "Open MPI MCA parameter",
    "pnetcdf": "PnetCDF hint",
    "hdf5": "HDF5 property (H5P call)",
    "lfs": "Lustre layout (lfs setstripe)",
    "env": "environment variable",
    "srun": "Slurm placement (srun / sbatch option)",
    "engine": "iolab-bench workload option",
}
MODE = ("automatic", "enable", "disable")
BOOL = ("true", "false")
NUMERIC = ("bytes", "count", "number", "stripe", "osts")
# Lustre's layout unit (iolab.units.LUSTRE_STRIPE_UNIT, the one name for it, 64 KiB): stripe
# sizes and PFL component ends are multiples of it. The largest stripe size Lustre takes
# (below 4 GiB):
LUSTRE_STRIPE_MAX = (4 << 30) - LUSTRE_STRIPE_UNIT
# The numeric domains as (least value, multiple of): what parse accepts and what the engine
# checks (engine/src/hint_forms.def, generated from the rows).
NUMERIC_BOUNDS = {"bytes": (1, 1), "count": (1, 1), "number": (0, 1), "osts": (1, 1),
                  "stripe": (LUSTRE_STRIPE_UNIT, LUSTRE_STRIPE_UNIT)}

KiB, MiB = 1 << 10, 1 << 20


@dataclass(frozen=True)
class OmpioFrom:
    """How an OMPIO parameter stands for one ROMIO hint: the value as it is, a ROMIO value
    mapped to an OMPIO one (``values``; ``notes``: a ROMIO value OMPIO already does, said in a
    comment), or a per-node count times the nodes (``per_node``)."""

    romio: str
    values: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    per_node: bool = False
    comment: str = ""


@dataclass(frozen=True)
class Setting:
    name: str  # the key the library reads: hint name, or MCA parameter (OMPI_MCA_<name>)
    libraries: tuple[str, ...]
    domain: str
    doc: str
    defaults: Mapping[str, str] = field(default_factory=dict)
    choices: tuple[str, ...] = ()
    driver: str = ""
    knob: str = ""
    explore: tuple[str, ...] = ()
    knob_choices: tuple[str, ...] = ()
    collective_only: bool = False  # read only inside collective calls
    ompio_from: tuple[OmpioFrom, ...] = ()
    # one of KINDS; "" for the MPI library's own rows: "mca" with "ompio", else "hint"
    kind: str = ""
    flag: str = ""  # the command-line option that sets it (lfs, srun, the engine)
    env: str = ""  # the environment variable that carries it, where one does
    calls: tuple[str, ...] = ()  # the library calls that set it in a program (HDF5)

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", "mca" if "ompio" in self.libraries else "hint")

    @property
    def is_hint(self) -> bool:
        """An MPI_Info hint of the MPI library (ROMIO or Cray MPICH)."""
        return self.kind == "hint"

    @property
    def knob_name(self) -> str:
        return self.knob or self.name

    def accepted(self) -> tuple[str, ...]:
        """The words of a word domain (empty for numbers and cb_config_list)."""
        return {"mode": MODE, "bool": BOOL, "choice": self.choices}.get(self.domain, ())

    def numeric_bounds(self) -> tuple[int, int] | None:
        """(least value, multiple of) of a numeric domain (NUMERIC_BOUNDS), else None."""
        return NUMERIC_BOUNDS.get(self.domain)

    def engine_form(self) -> str | None:
        """What the engine checks for this hint (engine/src/hint_forms.def): "number", the
        '|'-separated words, or None when it takes anything (a config list)."""
        if self.domain in NUMERIC:
            return "number"
        # the engine's message has always listed a switch's words in this order
        words = ("enable", "disable", "automatic") if self.domain == "mode" else self.accepted()
        return "|".join(words) if words else None


_TRI = MODE
_HINT = ("romio", "cray")
_OMPIO = ("ompio",)
_ANY = LIBRARIES
_LUSTRE_DEFAULT_SIZE = str(1 << 20)  # Lustre's default stripe size (lustre/include)

# The settings outside the MPI library: PnetCDF, HDF5, Lustre layouts, environment, Slurm.
OTHER_ROWS: tuple[Setting, ...] = (
    # PnetCDF's hints (PnetCDF's own docs; mpinetcdf.c reads them from the MPI_Info given to
    # ncmpi_create/ncmpi_open, then from PNETCDF_HINTS="key=value;key=value", which wins).
    *(Setting(name, _ANY, domain, doc, defaults=dict(defaults), kind="pnetcdf",
              env="PNETCDF_HINTS", choices=choices)
      for name, domain, doc, defaults, choices in (
          ("nc_header_align_size", "bytes", "alignment of the file header's extent "
           "(room to add metadata later without moving data)", {}, ()),
          ("nc_var_align_size", "bytes", "alignment of the first fixed-size variable (set it "
           "to the file system's block or stripe size)", {"*": "512"}, ()),
          ("nc_record_align_size", "bytes", "alignment of the record variables' section",
           {}, ()),
          ("nc_header_read_chunk_size", "bytes", "bytes read at a time when the header is read",
           {"*": str(256 * KiB)}, ()),
          ("nc_ibuf_size", "bytes", "buffer for nonblocking requests' type conversion",
           {"*": str(16 * MiB)}, ()),
          ("nc_in_place_swap", "choice", "byte swap in the user's buffer (no copy)",
           {"*": "auto"}, ("enable", "disable", "auto")))),
    # HDF5 properties: H5P calls in the program (a code change); the engine's option stands
    # for one on a proxy workload (knob).
    Setting("hdf5.alignment", _ANY, "bytes", "objects above the threshold start at a "
            "multiple of this (file access property)", defaults={"*": "1"}, kind="hdf5",
            calls=("H5Pset_alignment",), knob="hdf5.align"),
    Setting("hdf5.meta_block_size", _ANY, "bytes", "metadata aggregation block (file access "
            "property)", defaults={"*": "2048"}, kind="hdf5", calls=("H5Pset_meta_block_size",)),
    Setting("hdf5.coll_metadata_ops", _ANY, "bool", "metadata reads done collectively (one "
            "rank reads, broadcasts)", defaults={"*": "false"}, kind="hdf5",
            calls=("H5Pset_all_coll_metadata_ops",), knob="hdf5.coll-metadata"),
    Setting("hdf5.coll_metadata_write", _ANY, "bool", "metadata writes done collectively",
            defaults={"*": "false"}, kind="hdf5", calls=("H5Pset_coll_metadata_write",),
            knob="hdf5.coll-metadata"),
    Setting("hdf5.chunk_cache", _ANY, "bytes", "raw-data chunk cache per dataset (rdcc_nbytes)",
            defaults={"*": str(1 * MiB)}, kind="hdf5",
            calls=("H5Pset_chunk_cache", "H5Pset_cache")),
    Setting("hdf5.fill_time", _ANY, "choice", "when a dataset's fill value is written "
            "(never: the program writes every element)", defaults={"*": "ifset"},
            choices=("ifset", "alloc", "never"), kind="hdf5", calls=("H5Pset_fill_time",)),
    # Lustre layouts: lfs setstripe on a file (before it is written) or a folder (its new
    # files inherit it); PFL components with -E END before each component's -c/-S.
    Setting("lfs.stripe_count", _ANY, "lfs_count", "Lustre stripe count (OSTs per file)",
            driver="lustre", kind="lfs", flag="-c",
            explore=("1", "2", "4", "8")),
    Setting("lfs.stripe_size", _ANY, "stripe", "Lustre stripe size, a multiple of 64 KiB",
            defaults={"*": _LUSTRE_DEFAULT_SIZE}, driver="lustre", kind="lfs", flag="-S",
            explore=("1M", "4M", "16M")),
    Setting("lfs.component_end", _ANY, "pfl_end", "end of a progressive file layout "
            "component (the next one starts there)", driver="lustre", kind="lfs", flag="-E"),
    # Environment variables.
    Setting("IOLAB_BUFFER", _ANY, "text", "iolab's buffering of small POSIX/stdio requests "
            "(PATTERN:size=...:count=..., docs/buffer.md; the library checks it)",
            kind="env", env="IOLAB_BUFFER"),
    Setting("ROMIO_HINTS", ("romio",), "text", "the hints file ROMIO reads at each open",
            kind="env", env="ROMIO_HINTS"),
    Setting("ROMIO_PRINT_HINTS", ("romio",), "choice", "ROMIO prints the hints of each open",
            choices=("0", "1"), kind="env", env="ROMIO_PRINT_HINTS"),
    Setting("MPICH_MPIIO_HINTS", ("cray",), "text", "Cray MPICH's hints per file pattern "
            "(PATTERN:key=value:..., comma-separated)", kind="env", env="MPICH_MPIIO_HINTS"),
    Setting("MPICH_MPIIO_HINTS_DISPLAY", ("cray",), "choice",
            "Cray MPICH prints the hints of each open", defaults={"cray": "0"},
            choices=("0", "1"), kind="env", env="MPICH_MPIIO_HINTS_DISPLAY"),
    Setting("MPICH_MPIIO_STATS", ("cray",), "choice", "Cray MPICH's MPI-IO statistics at "
            "close (1: summary, 2: per-rank files too)", defaults={"cray": "0"},
            choices=("0", "1", "2"), kind="env", env="MPICH_MPIIO_STATS"),
    *(Setting(f"MPIO_DIRECT_{d.upper()}", ("cray",), "choice", f"O_DIRECT {d}s in MPI-IO "
              "(aligned requests only)", defaults={"cray": "FALSE"}, choices=("TRUE", "FALSE"),
              kind="env", env=f"MPIO_DIRECT_{d.upper()}") for d in ("read", "write")),
    # More of Open MPI's MCA parameters (ompi_info --level 9, Open MPI 4.1).
    Setting("fs_ufs_lock_algorithm", _OMPIO, "choice", "OMPIO's file locking on ufs (0: "
            "auto, 1: never, 2: whole file, 3: ranges)", choices=("0", "1", "2", "3"),
            defaults={"ompio": "0"}),
    Setting("io_ompio_cycle_buffer_size", _OMPIO, "bytes",
            "OMPIO's bytes per call of an individual read/write (larger ones are split)",
            defaults={"ompio": str(512 * MiB)}),
    # Slurm placement: srun/sbatch options, or srun's input environment (SLURM_*), which
    # the user's own srun line takes without a change.
    Setting("ntasks-per-node", _ANY, "count", "ranks per node", kind="srun",
            flag="--ntasks-per-node", env="SLURM_NTASKS_PER_NODE"),
    Setting("cpus-per-task", _ANY, "count", "CPUs for each rank", kind="srun",
            flag="--cpus-per-task", env="SLURM_CPUS_PER_TASK"),
    Setting("cpu-bind", _ANY, "choice", "binding of ranks to CPUs", kind="srun",
            choices=("cores", "threads", "sockets", "none", "rank"), flag="--cpu-bind",
            env="SLURM_CPU_BIND"),
    Setting("core-spec", _ANY, "number", "cores per node kept for the OS (-S; asked when "
            "the allocation is made)", kind="srun", flag="--core-spec"),
    Setting("hint", _ANY, "choice", "one task per core, or per hardware thread", kind="srun",
            choices=("nomultithread", "multithread", "compute_bound", "memory_bound"),
            flag="--hint", env="SLURM_HINT"),
)

SETTINGS: tuple[Setting, ...] = (
    # ROMIO hints (ROMIO's users guide, MPICH adio/common/ad_hints.c; Cray's intro_mpi lists
    # the same names). Tune's knobs keep this order.
    Setting("cb_buffer_size", _HINT, "bytes",
            "collective buffer per aggregator (ROMIO default 16 MiB)",
            defaults={"romio": str(16 * MiB)}, explore=("1M", "4M", "16M", "64M"),
            collective_only=True),
    Setting("cb_nodes", _HINT, "count", "number of collective-buffering aggregators",
            explore=("1", "2", "4"), collective_only=True),
    Setting("cb_config_list", _HINT, "config", "aggregators per node (ROMIO default *:1)",
            defaults={"romio": "*:1"}, explore=("*:1", "*:2", "*:4"),
            knob_choices=("*:1", "*:2", "*:4", "*:8", "*:*"), collective_only=True),
    Setting("romio_cb_write", _HINT, "mode", "collective buffering for writes",
            defaults={"romio": "automatic"}, explore=_TRI, collective_only=True),
    Setting("romio_cb_read", _HINT, "mode", "collective buffering for reads",
            defaults={"romio": "automatic"}, explore=_TRI, collective_only=True),
    Setting("romio_ds_write", _HINT, "mode", "data sieving for independent writes",
            defaults={"romio": "automatic"}, explore=_TRI),
    Setting("romio_ds_read", _HINT, "mode", "data sieving for independent reads",
            defaults={"romio": "automatic"}, explore=_TRI),
    Setting("romio_no_indep_rw", _HINT, "bool",
            "only aggregators open the file (deferred open; collective I/O only)",
            defaults={"romio": "false"}, explore=("true", "false")),
    Setting("ind_wr_buffer_size", _HINT, "bytes",
            "data-sieving buffer for independent writes (ROMIO default 512 KiB)",
            defaults={"romio": str(512 * KiB)}, explore=("512K", "4M")),
    Setting("ind_rd_buffer_size", _HINT, "bytes",
            "data-sieving buffer for independent reads (ROMIO default 4 MiB)",
            defaults={"romio": str(4 * MiB)}, explore=("4M", "16M")),
    Setting("striping_factor", _HINT, "osts",
            "Lustre stripe count of a new file (ROMIO's Lustre driver)", driver="lustre",
            explore=("1", "2", "4", "8")),
    # ROMIO's common code reads striping_unit on every file system (ad_hints.c)
    Setting("striping_unit", _HINT, "stripe",
            "Lustre stripe size of a new file; multiples of 64 KiB", explore=("1M", "4M")),
    Setting("start_iodevice", _HINT, "number", "first OST of a new file's stripes",
            driver="lustre"),
    Setting("romio_cb_alltoall", _HINT, "mode",
            "two-phase exchange by all-to-all or point to point",
            defaults={"romio": "automatic"}, collective_only=True),
    Setting("romio_cb_pfr", _HINT, "mode", "persistent file realms",
            defaults={"romio": "disable"}, collective_only=True),
    Setting("romio_cb_ds_threshold", _HINT, "number",
            "data sieving in collective I/O above this size/extent percentage",
            defaults={"romio": "0"}, collective_only=True),
    Setting("romio_min_fdomain_size", _HINT, "bytes",
            "smallest file domain an aggregator gets", collective_only=True),
    # ROMIO's Lustre driver (ad_lustre_hints.c): its defaults when it opens a file.
    Setting("romio_lustre_co_ratio", _HINT, "count", "I/O clients per OST",
            defaults={"romio": "1"}, driver="lustre", collective_only=True),
    Setting("romio_lustre_coll_threshold", _HINT, "number",
            "requests above this many bytes skip collective buffering (0: never)",
            defaults={"romio": "0"}, driver="lustre", collective_only=True),
    Setting("romio_lustre_ds_in_coll", _HINT, "mode",
            "data sieving (read-modify-write of holes) inside collective writes",
            defaults={"romio": "enable"}, driver="lustre", collective_only=True),
    # ROMIO reports "aar" (and a realm size once realms persist); it reads its own forms
    Setting("romio_cb_fr_types", _HINT, "text",
            "how persistent file realms are assigned (aar, or a realm size)",
            defaults={"romio": "aar"}, collective_only=True),
    # Cray MPICH only (intro_mpi).
    Setting("direct_io", ("cray",), "bool", "O_DIRECT for the file (Cray MPICH)",
            defaults={"cray": "false"}),
    Setting("cray_cb_nodes_multiplier", ("cray",), "count",
            "aggregators per OST (Cray's Lustre collective buffering)", driver="lustre",
            collective_only=True),
    Setting("cray_cb_write_lock_mode", ("cray",), "number",
            "Lustre lock mode of collective writes (0, 1 or 2)", driver="lustre",
            collective_only=True),
    # Open MPI OMPIO's MCA parameters (ompi_info --param io ompio / fcoll / fs --level 9), as
    # the environment variables mpirun and srun pass on, with the ROMIO hints they stand for.
    Setting("io_ompio_num_aggregators", _OMPIO, "count",
            "OMPIO aggregators (-1: OMPIO decides)", defaults={"ompio": "-1"},
            knob="ompio.num_aggregators", explore=("1", "2", "4"), collective_only=True,
            ompio_from=(OmpioFrom("cb_nodes"), OmpioFrom("cb_config_list", per_node=True))),
    Setting("io_ompio_bytes_per_agg", _OMPIO, "bytes",
            "OMPIO bytes per aggregator cycle (default 32 MiB)",
            defaults={"ompio": str(32 * MiB)}, knob="ompio.bytes_per_agg",
            explore=("4M", "32M", "128M"), collective_only=True,
            ompio_from=(OmpioFrom("cb_buffer_size"),)),
    Setting("fcoll", _OMPIO, "choice", "OMPIO collective-I/O algorithm (fcoll component)",
            choices=("dynamic", "dynamic_gen2", "two_phase", "individual", "vulcan"),
            knob="ompio.fcoll", explore=("dynamic", "dynamic_gen2", "two_phase", "vulcan"),
            collective_only=True,
            ompio_from=tuple(OmpioFrom(
                key, values={"disable": "individual"},
                notes={"enable": "OMPIO aggregates collective calls by default (fcoll vulcan; "
                                 "dynamic_gen2 on Lustre)"},
                comment="collective calls done independently")
                for key in ("romio_cb_write", "romio_cb_read"))),
    Setting("fs_lustre_stripe_size", _OMPIO, "stripe", "Lustre stripe size of a new file",
            driver="lustre",
            ompio_from=(OmpioFrom("striping_unit", comment="new files on Lustre"),)),
    Setting("fs_lustre_stripe_width", _OMPIO, "osts", "Lustre stripe count of a new file",
            driver="lustre",
            ompio_from=(OmpioFrom("striping_factor", comment="new files on Lustre"),)),
    # Open MPI's choice of MPI-IO component: "^ompio" or "romio321" (4.x; romio341 in 5.x)
    # makes ROMIO read the hints above.
    Setting("io", _OMPIO, "choice", "Open MPI's MPI-IO component (ROMIO instead of OMPIO)",
            choices=("ompio", "^ompio", "romio321", "romio341")),
    *OTHER_ROWS,
)

ROMIO_SWITCH = "io"


def settings() -> tuple[Setting, ...]:
    """Every row (read at call time, so that a row added to SETTINGS is seen everywhere)."""
    return SETTINGS


def setting(name: str) -> Setting | None:
    """The row of ``name`` (hint name or MCA parameter), None when iolab does not know it."""
    return next((s for s in settings() if s.name == name), None)


def hints() -> tuple[Setting, ...]:
    """The MPI_Info hints (ROMIO's and Cray MPICH's)."""
    return tuple(s for s in settings() if s.is_hint)


def ompio_parameters() -> tuple[Setting, ...]:
    return tuple(s for s in settings() if s.kind == "mca")


# The engine's option types (engine/src/options.h) as domains: its own parser reads sizes,
# lists, signed integers (-1 meaning "not set") and fractions, so those take "text" here.
_ENGINE_DOMAINS = {"bool": "bool", "enum": "choice"}


def engine_rows(table: Iterable[Mapping[str, Any]]) -> tuple[Setting, ...]:
    """The engine's workload options as rows (kind "engine"), made from its own option table
    (``iolab-bench --list-options``: ``{name, key, type, owner, default, unit, choices,
    help}``), never typed here. Actions (``--help``) are not settings."""
    rows = []
    for opt in table:
        if opt["type"] == "action":
            continue
        choices = tuple(map(str, opt.get("choices") or ()))
        domain = _ENGINE_DOMAINS.get(str(opt["type"]), "text")
        if domain == "choice" and not choices:
            domain = "text"
        default = opt.get("default")
        rows.append(Setting(str(opt["name"]), LIBRARIES, domain, str(opt.get("help") or ""),
                            defaults={"*": str(default)} if default is not None else {},
                            choices=choices if domain == "choice" else (), kind="engine",
                            flag=f"--{opt['name']}"))
    return tuple(rows)


def of_kind(*kinds: str) -> tuple[Setting, ...]:
    """The rows of these kinds (KINDS)."""
    return tuple(s for s in settings() if s.kind in kinds)


def default(row: Setting, library: str = "romio") -> str | None:
    """The library's own value when nothing sets it (None: none recorded); ``"*"`` keys a
    default that is the same under every MPI library (Lustre's, HDF5's, PnetCDF's)."""
    return row.defaults.get(library, row.defaults.get("*"))


def parse(row: Setting, value: str) -> str | None:
    """``value`` as the library reads it when it is in the row's domain, else None.
    Words are exact (ROMIO compares with strcmp: "Enable" is not "enable")."""
    v = str(value).strip()
    words = row.accepted()
    if words:
        return v if v in words else None
    if row.domain == "config":
        host, sep, per = v.partition(":")
        ok = host == "*" and sep and (per == "*" or (per.isdigit() and int(per) >= 1))
        return v if ok else None
    if row.domain == "text":
        return v or None
    if row.domain in ("lfs_count", "pfl_end") and v == "-1":
        return v
    if row.domain == "lfs_count":
        return str(int(v)) if v.isdigit() and int(v) >= 1 else None
    if row.domain == "pfl_end":
        ok = v.isdigit() and int(v) >= 1 and int(v) % LUSTRE_STRIPE_UNIT == 0
        return str(int(v)) if ok else None
    if row.domain in NUMERIC and v.isdigit():
        n = int(v)
        least, multiple = NUMERIC_BOUNDS[row.domain]
        if n >= least and n % multiple == 0:
            return str(n)
    return None


def mca_env(row: Setting) -> str:
    """The environment variable Open MPI reads the parameter from."""
    return f"OMPI_MCA_{row.name}"


_APPLIED_OTHER = {
    "pnetcdf": lambda r: (f"MPI_Info_set(info, \"{r.name}\", VALUE) before ncmpi_create/"
                          "ncmpi_open", f"{r.env}='{r.name}=VALUE;...' (wins over the code)"),
    "hdf5": lambda r: (f"{' / '.join(r.calls)} on the property list (a code change)",),
    "lfs": lambda r: (f"lfs setstripe {r.flag} VALUE FILE_OR_FOLDER (a file before it is "
                      "written; a folder's new files inherit it)",),
    "env": lambda r: (f"export {r.env}=VALUE before the launch",),
    "srun": lambda r: (f"srun/sbatch {r.flag}=VALUE",
                       *([f"export {r.env}=VALUE (srun's input environment)"] if r.env
                         else [])),
    "engine": lambda r: (f"iolab bench / iolab-bench {r.flag} VALUE",),
}
_READ_BACK_OTHER = {
    "pnetcdf": "ncmpi_inq_file_info (the hints PnetCDF uses)",
    "hdf5": "the H5Pget_ call of the property, on the file's own property list",
    "lfs": "lfs getstripe -y (engine JSON environment.striping for iolab bench)",
    "env": "the launch environment (engine JSON environment; iolab hints for the MPI's)",
    "srun": "SLURM_* variables inside the job (scontrol show job)",
    "engine": "engine JSON config",
}


def applied_by(row: Setting) -> tuple[str, ...]:
    """How a user applies the setting, per library (what :mod:`iolab.settings.apply`
    writes)."""
    if row.kind in _APPLIED_OTHER:
        return tuple(_APPLIED_OTHER[row.kind](row))
    out = []
    if "romio" in row.libraries:
        out += [f"hints file line '{row.name} VALUE' named by ROMIO_HINTS",
                "MPI_Info_set before MPI_File_open"]
    if "cray" in row.libraries:
        out.append(f"MPICH_MPIIO_HINTS='PATTERN:{row.name}=VALUE' (no ':' or ',' in VALUE)")
    if "ompio" in row.libraries:
        out.append(f"export {mca_env(row)}=VALUE, or mpirun --mca {row.name} VALUE")
    return tuple(out)


def read_back(row: Setting) -> str:
    """Where the effective value is read: MPI_File_get_info for hints (the engine's
    ``hints.effective``, shown by ``iolab hints``), ompi_info for MCA parameters (Open MPI
    echoes hints, so ``iolab hints`` lists these instead)."""
    if row.kind in _READ_BACK_OTHER:
        return _READ_BACK_OTHER[row.kind]
    if row.is_hint:
        return "MPI_File_get_info (engine JSON hints.effective; iolab hints)"
    return f"ompi_info --param all all --level 9 --parsable: {row.name} (iolab hints)"
