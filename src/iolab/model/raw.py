"""The contract between loaders and the job model.

A loader (:mod:`iolab.sources`: Darshan logs, iolab profiles) turns its source into one
:class:`RawJob`: job metadata plus per-module record tables whose counters carry **Darshan's
names** (``POSIX_OPENS``, ``POSIX_F_READ_TIME``, ``MPIIO_COLL_WRITES``...) and, when traced,
one trace table. One shape: columns. :class:`RawRecord` and :class:`TraceSegment` are the
row-by-row view, for code that builds a job record by record (:meth:`RawJob.build`,
:func:`tables_from_records`: tests, the profile loader) or writes one out
(:meth:`RawJob.rows`: ``iolab profile show``, the Darshan export). The
model (:mod:`iolab.model.job`) derives everything else from a RawJob, once, the same way for
every source.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# numpy is imported by the functions that build arrays, not here: the Darshan reader forked
# by diagnose builds a RawJob without numpy while its parent imports numpy and the rules
# (iolab.sources.darshan.start_darshan_read).

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


# How a source's note starts when a DXT section is present but cannot be read; the I/O-bound
# advice looks for it (no "record DXT" for a log that has DXT).
DXT_UNREADABLE = "DXT trace present but unreadable"


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
    """All records of one module as columns.

    ``counters[i, j]`` is counter ``counter_names[j]`` of record ``i``: a 64,000-file Darshan
    log costs a few arrays, not 64,000 dicts. ``counters``/``fcounters`` are numpy arrays
    (int64 / float64), typed ``Any`` because the Darshan loader hands over zero-copy views of
    libdarshan-util's structs (and empties them to send the job between processes).
    """

    module: str
    counter_names: list[str]
    fcounter_names: list[str]
    record_ids: Any  # numpy uint64, one per record
    ranks: Any  # numpy int64, SHARED_RANK for reduced records
    counters: Any  # numpy int64 (n_records, len(counter_names))
    fcounters: Any  # numpy float64 (n_records, len(fcounter_names))
    paths: dict[int, str] = field(default_factory=dict)  # record id -> name

    @classmethod
    def from_records(cls, module: str, recs: list[RawRecord]) -> RecordTable:
        """Records of one module as columns: counters named by the union of the records'
        names (sorted), a counter a record lacks reads as zero."""
        cnames = sorted({k for r in recs for k in r.counters})
        fnames = sorted({k for r in recs for k in r.fcounters})
        import numpy as np  # deferred: see the imports

        c = np.zeros((len(recs), len(cnames)), dtype=np.int64)
        f = np.zeros((len(recs), len(fnames)), dtype=np.float64)
        ci = {n: i for i, n in enumerate(cnames)}
        fi = {n: i for i, n in enumerate(fnames)}
        paths: dict[int, str] = {}
        for row, r in enumerate(recs):
            for k, v in r.counters.items():
                c[row, ci[k]] = v
            for k, fv in r.fcounters.items():
                f[row, fi[k]] = fv
            paths.setdefault(int(r.record_id), r.path)
        return cls(module=module, counter_names=cnames, fcounter_names=fnames,
                   record_ids=np.array([r.record_id for r in recs], dtype=np.uint64),
                   ranks=np.array([r.rank for r in recs], dtype=np.int64),
                   counters=c, fcounters=f, paths=paths)

    def rows(self) -> list[RawRecord]:
        """The records one by one (for writers and tests; the model reads the columns)."""
        out = []
        for i, (rid, rank) in enumerate(zip(self.record_ids, self.ranks)):
            out.append(RawRecord(
                module=self.module, rank=int(rank), record_id=int(rid),
                path=self.paths.get(int(rid), ""),
                counters={n: int(v) for n, v in zip(self.counter_names, self.counters[i])},
                fcounters={n: float(v) for n, v in zip(self.fcounter_names, self.fcounters[i])},
            ))
        return out


@dataclass
class TraceSegment:
    """One traced operation (DXT or ``iolab profile --trace``), row by row."""

    module: str  # DXT_POSIX or DXT_MPIIO
    rank: int
    path: str
    op: str  # "read" or "write"
    offset: int
    length: int
    start_s: float  # seconds since job start
    end_s: float
    record_id: int = 0  # the id of the file's POSIX / MPI-IO record


@dataclass
class TraceTable:
    """Traced operations as columns (DXT, ``iolab profile --trace``): one row per operation.

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

    @classmethod
    def from_segments(cls, segs: list[TraceSegment], truncated: bool = False) -> TraceTable:
        """Segments (of :data:`TRACE_MODULES`) as columns, in their order."""
        import numpy as np  # deferred: see the imports

        return cls(
            module=np.array([TRACE_MODULES.index(s.module) for s in segs], dtype=np.int8),
            rank=np.array([s.rank for s in segs], dtype=np.int64),
            record_id=np.array([s.record_id for s in segs], dtype=np.uint64),
            write=np.array([s.op == "write" for s in segs], dtype=bool),
            offset=np.array([s.offset for s in segs], dtype=np.int64),
            length=np.array([s.length for s in segs], dtype=np.int64),
            start_s=np.array([s.start_s for s in segs], dtype=np.float64),
            end_s=np.array([s.end_s for s in segs], dtype=np.float64),
            truncated=truncated,
        )

    def rows(self, paths: dict[int, str]) -> list[TraceSegment]:
        """The operations one by one, files named from ``paths`` (record id -> name)."""
        return [
            TraceSegment(TRACE_MODULES[int(m)], int(r), paths.get(int(rid), "?"),
                         "write" if w else "read", int(o), int(n), float(t0), float(t1),
                         int(rid))
            for m, r, rid, w, o, n, t0, t1 in zip(
                self.module, self.rank, self.record_id, self.write, self.offset,
                self.length, self.start_s, self.end_s)
        ]


TRACE_MODULES = (DXT_POSIX, DXT_MPIIO)


def tables_from_records(records: Iterable[RawRecord]) -> dict[str, RecordTable]:
    """Records given one by one as one table per module (in order of first appearance)."""
    by_mod: dict[str, list[RawRecord]] = {}
    for r in records:
        by_mod.setdefault(r.module, []).append(r)
    return {mod: RecordTable.from_records(mod, recs) for mod, recs in by_mod.items()}


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
    partial_modules: list[str] = field(default_factory=list)  # modules with records left out
    # Why each partial module is partial, in words a report can quote: Darshan's record memory
    # ran out, iolab's record limit was reached, or a process was killed before it finished.
    partial_why: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the loader could not read, and why
    unread_modules: list[str] = field(default_factory=list)  # modules in the log no rule reads
    # The records, one table per module (module -> table).
    tables: dict[str, RecordTable] = field(default_factory=dict)
    # Lustre layout per record id (stripe_size, stripe_count), when known.
    stripes: dict[int, tuple[int, int]] = field(default_factory=dict)
    node_memory_bytes: int | None = None  # when the source knows it
    # Traced operations (Darshan DXT, iolab profile --trace), when the source has any.
    trace_table: TraceTable | None = None
    # Host name of each rank, when the source knows it (iolab profiles; DXT records).
    rank_hosts: dict[int, str] = field(default_factory=dict)
    # CPUs the job could use on a host (host -> count), when the source knows it: iolab
    # profile records its own CPU set (the cpuset its ranks on that host inherit); Darshan
    # logs do not record it.
    host_cpus: dict[str, int] = field(default_factory=dict)
    # Lustre OST indices each file is striped over (record id -> OST indices), when known
    # (Darshan's LUSTRE module): what the job saw of the file system's OSTs.
    lustre_osts: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def build(cls, records: Iterable[RawRecord] = (), trace: Iterable[TraceSegment] = (),
              **fields: Any) -> RawJob:
        """A job from records and trace segments given one by one (synthetic jobs in tests):
        the records become one table per module (in order of first appearance), the
        segments the trace table. ``fields`` are the other fields of RawJob."""
        job = cls(**fields)
        job.tables = tables_from_records(records)
        segs = list(trace)
        if segs:
            job.trace_table = TraceTable.from_segments(segs)
        return job

    def paths(self) -> dict[int, str]:
        """Record id -> file name, over every module."""
        out: dict[int, str] = {}
        for t in self.tables.values():
            if not out:
                out = dict(t.paths)  # a copy in C: one module holds most logs' 64,000 names
            elif not t.paths.keys() <= out.keys():  # the same files seen by another layer
                out.update({rid: path for rid, path in t.paths.items() if rid not in out})
        return out

    def rows(self) -> list[RawRecord]:
        """Every record one by one, module by module (for writers and tests)."""
        return [r for t in self.tables.values() for r in t.rows()]

    def segments(self) -> list[TraceSegment]:
        """Every traced operation one by one (for writers and tests)."""
        return self.trace_table.rows(self.paths()) if self.trace_table is not None else []
