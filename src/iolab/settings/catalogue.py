"""Every MPI-IO setting iolab reads, recommends, tunes or applies, as rows of data.

One row per setting the MPI library knows: ROMIO hints (MPICH, Intel MPI, Open MPI's ROMIO
component), their Cray MPICH and Lustre-driver variants, Open MPI OMPIO's MCA parameters
(with the ROMIO hints each one stands for) and Open MPI's switch to ROMIO. diagnose's hints
writer, tune's knobs and the engine's value check (engine/src/hints.c, compared by
tests/settings) all read these rows: adding a hint is adding a row.

A row says
- where it exists: ``libraries`` ("romio", "cray", "ompio") and ``driver`` ("lustre": read
  only by ROMIO's Lustre driver; "" every file system);
- its domain: ``domain`` (see DOMAINS) and, for "choice", the words (``choices``);
  :func:`parse` accepts exactly the values of the domain;
- its default per library (``defaults``; a library missing from it: none recorded, or none
  for every file, e.g. ``cb_nodes``), from MPICH's adio/common/ad_hints.c and
  ad_lustre_hints.c and OMPIO's MCA defaults;
- how it is applied (:func:`applied_by`; :mod:`iolab.settings.apply` writes the lines) and
  how its effective value is read back (:func:`read_back`);
- for tune: ``knob`` (the name ``iolab tune`` uses) and ``explore`` (what a preset tries;
  empty: not a knob), ``knob_choices`` (the values tune offers for a config list).

Left for later slices (issue #30): Lustre layouts (``lfs``), PnetCDF/HDF5 settings,
environment (IOBUF, Cray's MPIO_DIRECT_*), Slurm placement, engine options, GPFS hints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

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
}
MODE = ("automatic", "enable", "disable")
BOOL = ("true", "false")
NUMERIC = ("bytes", "count", "number", "stripe", "osts")

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

    @property
    def is_hint(self) -> bool:
        """An MPI_Info hint (ROMIO or Cray MPICH), not an MCA parameter."""
        return "ompio" not in self.libraries

    @property
    def knob_name(self) -> str:
        return self.knob or self.name

    def accepted(self) -> tuple[str, ...]:
        """The words of a word domain (empty for numbers and cb_config_list)."""
        return {"mode": MODE, "bool": BOOL, "choice": self.choices}.get(self.domain, ())

    def engine_form(self) -> str | None:
        """What engine/src/hints.c checks for this hint: "number", the '|'-separated words,
        or None when it takes anything (a config list)."""
        if self.domain in NUMERIC:
            return "number"
        words = self.accepted()
        return "|".join(words) if words else None


_TRI = MODE
_HINT = ("romio", "cray")
_OMPIO = ("ompio",)

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
    # Cray MPICH only (intro_mpi).
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
    return tuple(s for s in settings() if not s.is_hint)


def default(row: Setting, library: str = "romio") -> str | None:
    """The library's own value when nothing sets it (None: none recorded)."""
    return row.defaults.get(library)


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
    if row.domain in NUMERIC and v.isdigit():
        n = int(v)
        if row.domain == "number" or (n >= 1 and (
                row.domain != "stripe" or n % LUSTRE_STRIPE_UNIT == 0)):
            return str(n)
    return None


def mca_env(row: Setting) -> str:
    """The environment variable Open MPI reads the parameter from."""
    return f"OMPI_MCA_{row.name}"


def applied_by(row: Setting) -> tuple[str, ...]:
    """How a user applies the setting, per library (what :mod:`iolab.settings.apply`
    writes)."""
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
    if row.is_hint:
        return "MPI_File_get_info (engine JSON hints.effective; iolab hints)"
    return f"ompi_info --param all all --level 9 --parsable: {row.name} (iolab hints)"
