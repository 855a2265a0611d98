"""Every knob ``iolab tune`` can turn, as data: what it is, its domain, how a user applies it.

A knob belongs to one *kind*, and the kind says both how a trial sets it and how the user
applies the winner:

- ``romio``: a ROMIO MPI-IO hint (MPICH, Cray MPICH, Intel MPI, Open MPI with
  ``--mca io romio321``): a hints file / ``ROMIO_HINTS`` / ``MPICH_MPIIO_HINTS``, no code change.
- ``ompio``: an Open MPI OMPIO MCA parameter (OMPIO ignores ROMIO hints): ``OMPI_MCA_*``
  environment variables, no code change.
- ``engine``: an option of the workload itself (POSIX mode, transfer size, threads, layout,
  collective calls, HDF5 alignment): in an application this is a code change.
- ``lfs``: Lustre striping of the output directory: an ``lfs setstripe`` command.
- ``launch``: Slurm placement (``--cpu-bind``): a launch option.

Sizes are written as the user writes them (``4M``) and normalised to bytes for hints.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from iolab import backends
from iolab.errors import UsageError
from iolab.settings import catalogue
from iolab.units import LUSTRE_STRIPE_UNIT, parse_size

KINDS = ("romio", "ompio", "engine", "lfs", "launch")

# The ROMIO and OMPIO lines are written by iolab.settings.apply (one writer with diagnose).
HOW_APPLIED = {
    "romio": "hints file / ROMIO_HINTS / MPICH_MPIIO_HINTS (no code change)",
    "ompio": "environment: OMPI_MCA_* (no code change)",
    "engine": "the application's own I/O calls (a code change)",
    "lfs": "a command before the files are created: lfs setstripe",
    "launch": "a launch option (srun)",
}

@dataclass(frozen=True)
class Knob:
    """One tunable setting.

    ``value_type``: "size" (bytes, K/M/G suffixes), "int", "enum" (one of ``choices``) or
    "bool". ``explore`` is what a preset tries when the user names no values. ``minimum``
    bounds sizes and ints. ``key`` is the name the library or the engine knows it by.
    """

    name: str
    kind: str
    value_type: str
    explore: tuple[str, ...]
    doc: str
    key: str = ""
    choices: tuple[str, ...] = ()
    minimum: int = 0
    multiple_of: int = 1  # sizes: e.g. Lustre's 64 KiB stripe unit
    # read only inside collective MPI-IO calls (ROMIO's collective buffering, OMPIO's fcoll):
    # nothing to a workload whose calls are all independent
    collective_only: bool = False
    # the library's own default (ROMIO's ad_hints.c, OMPIO's MCA defaults), where it has one
    # for every file: a winner setting this value changes nothing, so it is not listed
    default: str = ""

    @property
    def library_key(self) -> str:
        return self.key or self.name

    @property
    def config_key(self) -> str:
        """Engine knobs: the key in the engine JSON's "config" (docs/engine-json.md)."""
        return self.key or self.name.replace(".", "_").replace("-", "_")

    @property
    def applied_by(self) -> str:
        return HOW_APPLIED[self.kind]

    def is_default(self, value: str) -> bool:
        """Whether ``value`` (normalised) is the library's own default for this knob (the
        catalogue's, for the library's settings)."""
        return bool(self.default) and value == self.normalise(self.default)

    def normalise(self, value: str) -> str:
        """The value as the library or engine takes it; UsageError when outside the domain."""
        v = value.strip()
        where = f"knob {self.name}: value {value!r}"
        if self.value_type == "enum":
            if v not in self.choices:
                raise UsageError(f"{where} is not one of {', '.join(self.choices)}")
            return v
        if self.value_type == "bool":
            low = v.lower()
            if low in ("1", "true", "yes", "on"):
                return "true"
            if low in ("0", "false", "no", "off"):
                return "false"
            raise UsageError(f"{where} is not true or false")
        try:
            n = parse_size(v) if self.value_type == "size" else int(v)
        except ValueError:
            unit = "a size like 4M" if self.value_type == "size" else "an integer"
            raise UsageError(f"{where} is not {unit}") from None
        if n < self.minimum:
            raise UsageError(f"{where} is below the minimum {self.minimum}")
        if self.multiple_of > 1 and n % self.multiple_of:
            raise UsageError(f"{where} is not a multiple of {self.multiple_of}")
        return str(n)


_UNIT = LUSTRE_STRIPE_UNIT
# The knobs of the MPI library's settings and of Lustre's layout come from the catalogue
# (iolab.settings): its rows with values to explore. Their value forms, as tune writes and
# checks them: domain -> (value_type, minimum, multiple_of).
_FORM = {"bytes": ("size", 4096, 1), "count": ("int", 1, 1), "osts": ("int", 1, 1),
         "number": ("int", 0, 1), "stripe": ("size", _UNIT, _UNIT),
         "lfs_count": ("int", -1, 1)}
# The catalogue's kinds tune turns, and the knob kind of each.
_ROW_KINDS = {"hint": "romio", "mca": "ompio", "lfs": "lfs"}


def _knob_of(row: catalogue.Setting) -> Knob:
    """The knob of a catalogue row (``row.explore`` not empty)."""
    value_type, minimum, multiple = _FORM.get(row.domain, ("enum", 0, 1))
    choices = (row.knob_choices or row.accepted()) if value_type == "enum" else ()
    kind = _ROW_KINDS[row.kind]
    plain = catalogue.default(row, kind) or "" if kind != "lfs" else ""
    # an lfs knob says the command that applies it, as its help always did
    doc = f"lfs setstripe {row.flag}" if kind == "lfs" else row.doc
    knob = Knob(row.knob_name, kind, value_type, row.explore, doc,
                key=row.name if row.knob else "", choices=choices, minimum=minimum,
                multiple_of=multiple, collective_only=row.collective_only)
    try:  # a default outside the knob's range (OMPIO's -1: "OMPIO decides") is not a value
        knob.normalise(plain) if plain else None
    except UsageError:
        plain = ""
    return dataclasses.replace(knob, default=plain)


_ENGINE_KNOBS: tuple[Knob, ...] = (
    # The workload's own settings (engine options).
    Knob("posix.mode", "engine", "enum", ("buffered", "sync", "direct"),
         "POSIX I/O mode: page cache, O_DSYNC, O_DIRECT",
         choices=("buffered", "sync", "fsync", "direct")),
    Knob("transfer", "engine", "size", ("64K", "256K", "1M", "4M"),
         "bytes per I/O call (must divide the block)", key="transfer_bytes", minimum=1),
    Knob("threads", "engine", "int", ("1", "2", "4"), "I/O threads per rank (POSIX)",
         minimum=1),
    Knob("layout", "engine", "enum", ("fpp", "segmented", "strided", "subset"),
         "file per process, one shared file (segmented/strided), N:M subset files",
         choices=("fpp", "segmented", "strided", "serial", "subset")),
    Knob("collective", "engine", "bool", ("false", "true"),
         "collective MPI-IO / HDF5 transfers"),
    Knob("file-view", "engine", "bool", ("false", "true"),
         "one MPI-IO call per rank through a file view"),
    Knob("hdf5.align", "engine", "size", ("64K", "1M", "4M"), "H5Pset_alignment", minimum=1),
    Knob("hdf5.chunk", "engine", "size", ("1M", "4M"), "chunked dataset, bytes per chunk",
         minimum=1),
    Knob("hdf5.coll-metadata", "engine", "bool", ("false", "true"),
         "collective metadata reads and writes (H5Pset_all_coll_metadata_ops, "
         "H5Pset_coll_metadata_write)"),
)
_LAUNCH_KNOBS: tuple[Knob, ...] = (
    # Placement under Slurm: bench workloads through iolab bench's own launch options, a
    # command through srun's input environment (see LAUNCH).
    Knob("slurm.cpu_bind", "launch", "enum", ("cores", "threads", "none"), "srun --cpu-bind",
         choices=("cores", "threads", "sockets", "none", "rank")),
    Knob("slurm.ranks_per_node", "launch", "int", ("1", "2", "4"),
         "srun --ntasks-per-node (ranks per node; the allocation must hold the nodes)",
         minimum=1),
    Knob("slurm.cpus_per_rank", "launch", "int", ("1", "2", "4"),
         "srun --cpus-per-task (CPUs for each rank)", minimum=1),
)

# The catalogue's Slurm row of each launch knob, and iolab bench's own option for it.
LAUNCH_ROWS = {"slurm.cpu_bind": ("cpu-bind", "--cpu-bind"),
               "slurm.ranks_per_node": ("ntasks-per-node", "--ppn"),
               "slurm.cpus_per_rank": ("cpus-per-task", "--cpus-per-rank")}


def _launch(row_name: str, bench_option: str) -> tuple[str, str, str]:
    row = catalogue.setting(row_name)
    assert row is not None and row.kind == "srun", row_name
    return bench_option, row.env, row.flag


# How a launch knob is applied: (iolab bench option, srun input environment variable, srun
# option for the user's job script), the last two from the catalogue's Slurm rows.
LAUNCH: dict[str, tuple[str, str, str]] = {
    knob: _launch(*how) for knob, how in LAUNCH_ROWS.items()}



def all_knobs() -> tuple[Knob, ...]:
    """Every knob: the catalogue's MPI settings (read now, so a row added there is
    tunable), then the workload's, Lustre's (catalogue rows too) and the launch's."""
    rows = [r for r in catalogue.settings() if r.explore and r.kind in _ROW_KINDS]
    hint_knobs = tuple(_knob_of(r) for r in rows if r.kind != "lfs")
    lfs_knobs = tuple(_knob_of(r) for r in rows if r.kind == "lfs")
    return hint_knobs + _ENGINE_KNOBS + lfs_knobs + _LAUNCH_KNOBS

# What ``--preset`` explores, per workload family (MPI-IO presets by implementation).
PRESETS: dict[str, tuple[str, ...]] = {
    "posix": ("posix.mode", "transfer", "threads"),
    "mpiio": ("cb_buffer_size", "cb_nodes", "romio_cb_write", "romio_ds_write",
              "collective", "file-view"),
    "mpiio-ompio": ("ompio.num_aggregators", "ompio.bytes_per_agg", "ompio.fcoll",
                    "collective", "file-view"),
    "hdf5": ("hdf5.align", "hdf5.chunk", "hdf5.coll-metadata", "collective",
             "cb_buffer_size"),
    "pnetcdf": ("cb_buffer_size", "cb_nodes", "romio_cb_write", "collective"),
    "lustre": ("lfs.stripe_count", "lfs.stripe_size", "striping_factor", "striping_unit"),
}
# a preset per backend with settings of its own (iolab.backends), and the file system's
PRESET_NAMES = (*(b for b in backends.LABELS if b != "null"), "lustre")


def knob(name: str) -> Knob:
    """The knob called ``name``; unknown names are refused with the list of known ones."""
    by_name = {k.name: k for k in all_knobs()}
    try:
        return by_name[name]
    except KeyError:
        raise UsageError(f"unknown knob {name!r}; known knobs: {', '.join(by_name)} "
                         "(iolab tune --list-knobs describes them)") from None
