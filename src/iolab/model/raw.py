"""The contract between loaders and the job model.

A loader (pydarshan for Darshan logs, :mod:`iolab.profile` for iolab profiles) turns its
source into one :class:`RawJob`: job metadata plus per-module records whose counters carry
**Darshan's names** (``POSIX_OPENS``, ``POSIX_F_READ_TIME``, ``MPIIO_COLL_WRITES``...). The
model (:mod:`iolab.model.job`) derives everything else from a RawJob, once, the same way for
every source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Module names as pydarshan spells them.
POSIX = "POSIX"
STDIO = "STDIO"
MPIIO = "MPI-IO"
H5F = "H5F"
H5D = "H5D"
PNETCDF_FILE = "PNETCDF_FILE"
PNETCDF_VAR = "PNETCDF_VAR"
LUSTRE = "LUSTRE"
DXT_POSIX = "DXT_POSIX"
DXT_MPIIO = "DXT_MPIIO"

SHARED_RANK = -1  # a record reduced over all ranks that opened the file (Darshan convention)


@dataclass
class RawRecord:
    """One (module, file, rank) record."""

    module: str
    rank: int  # SHARED_RANK for a record reduced over all ranks
    record_id: int
    path: str
    counters: dict[str, int] = field(default_factory=dict)
    fcounters: dict[str, float] = field(default_factory=dict)


@dataclass
class RecordTable:
    """All records of one module as columns (optional, for speed and memory).

    A loader that reads many records (a 64,000-file Darshan log) fills this instead of
    thousands of :class:`RawRecord` dicts: ``counters[i, j]`` is counter ``counter_names[j]``
    of record ``i``. The model accepts both shapes; :meth:`RawJob.module_tables` merges them.
    ``counters``/``fcounters`` are numpy arrays (int64 / float64), typed ``Any`` so that this
    contract does not force numpy on a loader that produces only RawRecords.
    """

    module: str
    counter_names: list[str]
    fcounter_names: list[str]
    record_ids: Any  # numpy uint64, one per record
    ranks: Any  # numpy int64, SHARED_RANK for reduced records
    counters: Any  # numpy int64 (n_records, len(counter_names))
    fcounters: Any  # numpy float64 (n_records, len(fcounter_names))
    paths: dict[int, str] = field(default_factory=dict)  # record id -> name


@dataclass
class TraceSegment:
    """One traced operation (DXT or ``iolab profile --trace``)."""

    module: str  # DXT_POSIX or DXT_MPIIO
    rank: int
    path: str
    op: str  # "read" or "write"
    offset: int
    length: int
    start_s: float  # seconds since job start
    end_s: float


@dataclass
class TraceTable:
    """Traced operations as columns (a Darshan log's DXT records): one row per operation.

    Columns are numpy arrays (typed ``Any`` like :class:`RecordTable`); ``record_id`` is the
    id of the file's POSIX / MPI-IO record, ``module`` indexes :data:`TRACE_MODULES`.
    """

    module: Any  # int8: 0 DXT_POSIX, 1 DXT_MPIIO
    rank: Any  # int64
    record_id: Any  # uint64
    write: Any  # bool: a write (else a read)
    offset: Any  # int64
    length: Any  # int64
    start_s: Any  # float64, seconds since job start
    end_s: Any  # float64
    truncated: bool = False  # the loader stopped at its segment limit: the trace is partial

    def __len__(self) -> int:
        return int(len(self.rank))


TRACE_MODULES = (DXT_POSIX, DXT_MPIIO)


@dataclass
class RawJob:
    """A whole job as one source describes it, before any derivation."""

    source: str  # "darshan" or "iolab-profile"
    source_paths: list[str]
    nprocs: int
    start_time: float  # Unix seconds
    end_time: float
    run_time_s: float
    exe: str = ""
    jobid: str = ""
    uid: int | None = None
    nodes: int | None = None  # when the source knows it
    hosts: list[str] = field(default_factory=list)
    format_version: str = ""  # e.g. Darshan "3.41"
    metadata: dict[str, str] = field(default_factory=dict)  # job key=value (lib_ver, hints...)
    mounts: list[tuple[str, str]] = field(default_factory=list)  # (mount point, fs type)
    records: list[RawRecord] = field(default_factory=list)
    trace: list[TraceSegment] = field(default_factory=list)
    partial_modules: list[str] = field(default_factory=list)  # modules that ran out of memory
    notes: list[str] = field(default_factory=list)  # what the loader could not read, and why
    # Optional columnar records (module -> table), added after the first contract; a loader
    # may fill ``records``, ``tables`` or both (different modules).
    tables: dict[str, RecordTable] = field(default_factory=dict)
    # Lustre layout per record id (stripe_size, stripe_count), when known.
    stripes: dict[int, tuple[int, int]] = field(default_factory=dict)
    node_memory_bytes: int | None = None  # when the source knows it
    # Columnar trace (Darshan DXT); a loader fills ``trace`` (segments) or this, or neither.
    trace_table: TraceTable | None = None
    # Host name of each rank, when the source knows it (iolab profiles; DXT records).
    rank_hosts: dict[int, str] = field(default_factory=dict)
    # Lustre OST indices each file is striped over (record id -> OST indices), when known
    # (Darshan's LUSTRE module): what the job saw of the file system's OSTs.
    lustre_osts: dict[int, tuple[int, ...]] = field(default_factory=dict)
