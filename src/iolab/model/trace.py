"""Traced operations (Darshan DXT, ``iolab profile --trace``) and what they measure exactly.

Counters can only estimate some things: how many requests jumped backward or forward, the
exact request sizes around 1 MiB, how long each rank of a shared file was busy, when the I/O
happened. A trace says it exactly, **for the files it holds completely**: a file counts as
covered in a direction when its POSIX trace holds as many operations as its POSIX counters
(a trace cut short by Darshan's memory limit, by iolab's segment limit or by
``IOLAB_TRACE_SEGMENTS`` then falls back to the estimates, and the report says it is partial).

:func:`build_trace` merges the traces of one or more sources into columns;
:func:`derive_trace` computes the metrics once (vectorised: a 1,000,000-operation trace
costs a few sorts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from iolab.model.files import APP
from iolab.model.raw import TRACE_MODULES, RawJob

if TYPE_CHECKING:
    from iolab.model.columns import Columns, FileTable

POSIX_CODE, MPIIO_CODE = 0, 1
DIRECTIONS = ("read", "write")
# Darshan's size bins: upper bounds (inclusive) of 0_100 ... 100M_1G; above is 1G_PLUS.
BIN_EDGES = np.array([100, 1024, 10240, 102400, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30])
MIB = 1 << 20
MAX_PHASES = 20  # phases listed (all are counted)
PHASE_GAP_MIN_S = 0.1  # idle time that separates two I/O phases: at least this...
PHASE_GAP_SHARE = 0.02  # ...and at least this share of the run


@dataclass
class Trace:
    """All traced operations of a job as columns, times in seconds since the job start."""

    module: np.ndarray  # int8, index into TRACE_MODULES
    rank: np.ndarray  # int64, ranks renumbered like the records
    file_index: np.ndarray  # int64, index into the model's FileTable
    write: np.ndarray  # bool
    offset: np.ndarray  # int64
    length: np.ndarray  # int64
    start: np.ndarray  # float64
    end: np.ndarray  # float64
    partial_reasons: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.rank.shape[0])


@dataclass
class TraceAccess:
    """Jumps between successive requests of one rank on one file, one direction (POSIX)."""

    ops: int
    consecutive: int  # starts where the previous request ended
    strided: int  # forward jump of the same size as the previous or next jump
    random_forward: int  # any other forward jump
    backward: int  # starts before the previous request's end (not at the same offset)
    repeated: int  # the same offset again (a re-read / rewrite, not a seek)
    files: int

    @property
    def random(self) -> int:
        return self.backward + self.random_forward

    @property
    def random_share(self) -> float:
        return self.random / self.ops if self.ops else 0.0


@dataclass
class TraceSizes:
    """Exact request sizes of one direction (POSIX)."""

    ops: int
    small: int  # strictly below 1 MiB
    exactly_1mib: int
    bins: list[int]  # Darshan's ten size bins, counted from the lengths
    common: list[tuple[int, int]]  # (size in bytes, requests), most common first
    values: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def below(self, limit: int) -> int:
        """Requests strictly shorter than ``limit`` bytes."""
        return int(self.counts[self.values < limit].sum())


@dataclass
class RankBusy:
    """How long each rank was busy on one shared file (sum of its operations' durations)."""

    file_index: int
    module: str  # DXT_MPIIO when the file is accessed through MPI-IO, else DXT_POSIX
    ranks: int
    slowest_rank: int
    slowest_s: float
    slowest_bytes: int
    fastest_rank: int
    fastest_s: float
    fastest_bytes: int
    median_s: float
    last_end_s: float  # when the last rank finished with the file
    first_end_s: float  # when the first rank finished with the file
    covered: bool  # the trace holds every operation of this file at this layer


@dataclass
class Phase:
    start_s: float
    end_s: float
    ops: int
    bytes_read: int
    bytes_written: int
    ranks: int


@dataclass
class Timeline:
    """When the I/O happened: phases separated by idle gaps, and how many ranks at once."""

    phases: list[Phase]  # the first MAX_PHASES
    n_phases: int
    phase_gap_s: float  # idle time that separated phases
    busy_fraction: float  # share of the run with at least one operation in flight
    max_concurrency: int  # most ranks with an operation in flight at the same time
    mean_concurrency: float  # ranks in flight on average while any is
    first_s: float
    last_s: float


@dataclass
class TraceMetrics:
    operations: int
    by_module: dict[str, int]
    complete: bool  # no loss reported and every application POSIX operation is in the trace
    partial_reasons: list[str]
    exact: dict[str, bool]  # per direction: every POSIX op of every app file is in the trace
    access: dict[str, TraceAccess]  # over covered application files
    sizes: dict[str, TraceSizes]
    busy: list[RankBusy]  # shared files touched by at least two ranks in the trace
    timeline: Timeline


def _from_raw(raw: RawJob, files: FileTable, rank_off: int, t_off: float) -> dict[str, np.ndarray]:
    """One source's trace as columns (empty dict when it has none)."""
    t = raw.trace_table
    if t is not None and len(t):
        pos = np.searchsorted(files.ids, np.asarray(t.record_id, dtype=np.uint64))
        pos = np.minimum(np.maximum(pos, 0), max(len(files) - 1, 0))
        ok = (files.ids[pos] == t.record_id) if len(files) else np.zeros(len(t), dtype=bool)
        every = bool(ok.all())

        def take(a: Any, dtype: Any, add: float = 0) -> np.ndarray:
            """Column ``a`` without the rows of unknown files; shifted by ``add``; no copy
            when nothing is removed or shifted (the columns can be large)."""
            col = np.asarray(a, dtype=dtype)
            col = col if every else col[ok]
            return col + add if add else col
        return {"module": take(t.module, np.int8), "rank": take(t.rank, np.int64, rank_off),
                "file_index": pos if every else pos[ok], "write": take(t.write, bool),
                "offset": take(t.offset, np.int64), "length": take(t.length, np.int64),
                "start": take(t.start_s, np.float64, t_off),
                "end": take(t.end_s, np.float64, t_off)}
    return {}


def build_trace(raws: Sequence[RawJob], offsets: Sequence[int], files: FileTable) -> Trace | None:
    """The traces of all sources as one Trace (ranks and times shifted like the records)."""
    start = min(r.start_time for r in raws)
    parts, reasons = [], []
    for raw, off in zip(raws, offsets):
        cols = _from_raw(raw, files, off, max(raw.start_time - start, 0.0))
        if not cols:
            continue
        parts.append(cols)
        why = ("ran out of memory at run time" if raw.source == "darshan" else
               "is incomplete in the profile (segment limit or interrupted process: see notes)")
        for mod in TRACE_MODULES:
            if mod in raw.partial_modules:
                reasons.append(f"{mod} {why} ({raw.source_paths[0]})")
        if raw.trace_table is not None and raw.trace_table.truncated:
            reasons.append(f"iolab read only part of the trace of {raw.source_paths[0]} "
                           "(see the notes)")
    if not parts:
        return None
    cols = parts[0] if len(parts) == 1 else {k: np.concatenate([p[k] for p in parts])
                                             for k in parts[0]}
    return Trace(**cols, partial_reasons=reasons)


def _coverage(model: Columns, tr: Trace) -> dict[str, np.ndarray]:
    """Per file and direction (and MPI-IO): does the trace hold every counted operation?"""
    n = len(model.files)
    out = {}
    for d in DIRECTIONS:
        sel = (tr.module == POSIX_CODE) & (tr.write == (d == "write"))
        got = np.bincount(tr.file_index[sel], minlength=n)[:n]
        want = model.per_file("POSIX", f"POSIX_{d.upper()}S")
        out[d] = (got == want) & (want > 0)
    sel = tr.module == MPIIO_CODE
    got = np.bincount(tr.file_index[sel], minlength=n)[:n]
    want = np.sum([model.per_file("MPI-IO", f"MPIIO_{k}_{d.upper()}S")
                   for k in ("INDEP", "COLL", "SPLIT", "NB") for d in DIRECTIONS], axis=0)
    out["mpiio"] = (got == want) & (want > 0)
    return out


def _access(tr: Trace, rows: np.ndarray) -> TraceAccess:
    """Jumps along each (file, rank) stream of ``rows``, ordered by start time.

    Written for memory: one sort, then 8-byte columns gathered one at a time and 1-byte
    masks (about 50 bytes per operation).
    """
    n = int(rows.size)
    if n == 0:
        return TraceAccess(0, 0, 0, 0, 0, 0, 0)
    nfiles = int(np.unique(tr.file_index[rows]).size)
    o = rows[np.lexsort((tr.start[rows], tr.rank[rows], tr.file_index[rows]))]
    same = np.zeros(n, dtype=bool)
    col = tr.file_index[o]
    same[1:] = col[1:] == col[:-1]
    col = tr.rank[o]
    same[1:] &= col[1:] == col[:-1]
    off = tr.offset[o]
    gap = np.zeros(n, dtype=np.int64)
    gap[1:] = off[1:] - off[:-1]
    repeated = np.zeros(n, dtype=bool)
    repeated[1:] = gap[1:] == 0  # the same offset as the previous request
    del col
    gap[1:] -= tr.length[o[:-1]]
    del off, o
    repeated &= same & (gap != 0)
    consecutive = same & (gap == 0)
    backward = same & (gap < 0) & ~repeated
    forward = same & (gap > 0)
    eq_prev = np.zeros(n, dtype=bool)  # the same jump as the previous request's
    eq_prev[1:] = (gap[1:] == gap[:-1]) & forward[:-1]
    del gap
    strided = eq_prev.copy()
    strided[:-1] |= eq_prev[1:] & forward[1:]  # ... or as the next request's
    strided &= forward
    return TraceAccess(ops=n, consecutive=int(consecutive.sum()), strided=int(strided.sum()),
                       random_forward=int((forward & ~strided).sum()),
                       backward=int(backward.sum()), repeated=int(repeated.sum()),
                       files=nfiles)


def _sizes(lengths: np.ndarray) -> TraceSizes:
    bins = np.bincount(np.searchsorted(BIN_EDGES, lengths, side="left"), minlength=10)[:10]
    vals, counts = np.unique(lengths, return_counts=True)
    top = np.argsort(-counts, kind="stable")[:4]
    return TraceSizes(ops=int(lengths.size), small=int((lengths < MIB).sum()),
                      exactly_1mib=int((lengths == MIB).sum()), bins=[int(b) for b in bins],
                      common=[(int(vals[i]), int(counts[i])) for i in top],
                      values=vals, counts=counts)


def _busy(model: Columns, tr: Trace, app_rows: np.ndarray, cov: dict[str, np.ndarray]
          ) -> list[RankBusy]:
    """Per shared file: each rank's busy time at the file's top layer (MPI-IO if traced)."""
    mpi_files = np.zeros(len(model.files), dtype=bool)
    mpi_files[tr.file_index[app_rows & (tr.module == MPIIO_CODE)]] = True
    layer = np.where(mpi_files[tr.file_index], MPIIO_CODE, POSIX_CODE)
    rows = np.nonzero(app_rows & (tr.module == layer))[0]
    if rows.size == 0:
        return []
    nr = int(tr.rank[rows].max()) + 1
    key = tr.file_index[rows] * nr + tr.rank[rows]
    ukey, inv = np.unique(key, return_inverse=True)
    busy = np.bincount(inv, weights=tr.end[rows] - tr.start[rows])
    moved = np.bincount(inv, weights=tr.length[rows].astype(np.float64))
    last = np.full(ukey.size, -np.inf)
    np.maximum.at(last, inv, tr.end[rows])
    fidx, ranks = ukey // nr, ukey % nr
    out = []
    bounds = np.nonzero(np.diff(np.concatenate([[-1], fidx, [-1]])))[0]
    # POSIX layer complete: every direction with counted operations is in the trace
    posix_full = np.ones(len(model.files), dtype=bool)
    for d in DIRECTIONS:
        posix_full &= (model.per_file("POSIX", f"POSIX_{d.upper()}S") == 0) | cov[d]
    posix_full &= cov["read"] | cov["write"]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi - lo < 2:
            continue
        i = int(fidx[lo])
        b, rk, le, mv = busy[lo:hi], ranks[lo:hi], last[lo:hi], moved[lo:hi]
        mpi = bool(mpi_files[i])
        full = bool(cov["mpiio"][i] if mpi else posix_full[i])
        out.append(RankBusy(file_index=i, module=TRACE_MODULES[MPIIO_CODE if mpi else POSIX_CODE],
                            ranks=int(hi - lo), slowest_rank=int(rk[b.argmax()]),
                            slowest_s=float(b.max()), slowest_bytes=int(mv[b.argmax()]),
                            fastest_rank=int(rk[b.argmin()]), fastest_s=float(b.min()),
                            fastest_bytes=int(mv[b.argmin()]), median_s=float(np.median(b)),
                            last_end_s=float(le.max()), first_end_s=float(le.min()),
                            covered=full))
    return out


def _merge(lo: np.ndarray, hi: np.ndarray, gap: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intervals sorted by start merged when less than ``gap`` apart: (starts, ends, group of
    each input interval, index of each group's first interval)."""
    reach = np.maximum.accumulate(hi)
    new = np.ones(lo.size, dtype=bool)
    new[1:] = lo[1:] > reach[:-1] + gap
    del reach
    grp = np.cumsum(new) - 1
    ends = np.full(int(grp[-1]) + 1, -np.inf)
    np.maximum.at(ends, grp, hi)
    heads = np.nonzero(new)[0]
    return lo[heads], ends, grp, heads


def _timeline(tr: Trace, rows: np.ndarray, run_s: float) -> Timeline:
    o = rows[np.argsort(tr.start[rows], kind="stable")]
    lo = tr.start[o]
    hi = np.maximum(tr.end[o], lo)
    gap = max(PHASE_GAP_MIN_S, PHASE_GAP_SHARE * run_s)
    p_lo, p_hi, grp, _ = _merge(lo, hi, gap)
    n = p_lo.size
    # Each byte once: a file traced at POSIX counts its POSIX segments only (its MPI-IO
    # segments are the same bytes one layer up); MPI-IO segments count where POSIX is absent.
    posix_files = np.zeros(int(tr.file_index.max()) + 1 if tr.file_index.size else 0, dtype=bool)
    posix_files[tr.file_index[rows[tr.module[rows] == POSIX_CODE]]] = True
    once = (tr.module[o] == POSIX_CODE) | ~posix_files[tr.file_index[o]]
    nbytes = tr.length[o].astype(np.float64) * once
    wr = np.bincount(grp, weights=nbytes * tr.write[o], minlength=n)
    rd = np.bincount(grp, weights=nbytes, minlength=n) - wr
    del nbytes
    ops = np.bincount(grp, minlength=n)
    rk = tr.rank[o]
    del o
    nr = int(rk.max()) + 1
    nranks = np.bincount(np.unique(grp * nr + rk) // nr, minlength=n)
    del grp
    phases = [Phase(float(p_lo[k]), float(p_hi[k]), int(ops[k]), int(rd[k]), int(wr[k]),
                    int(nranks[k])) for k in range(min(n, MAX_PHASES))]
    u_lo, u_hi, _, _ = _merge(lo, hi, 0.0)
    union = float((u_hi - u_lo).sum())
    first, last = float(lo[0]), float(hi.max())
    # Per rank: its own busy intervals (a rank counts once however many files it touches);
    # ranks are kept apart by shifting each rank's times (from the first start) by
    # rank x (2 x span), so that one running maximum serves every rank.
    shift = 2.0 * (last - first + 1.0)
    order = np.lexsort((lo, rk))
    rk = rk[order]
    base = rk * shift - first
    r_lo, r_hi, _, heads = _merge(lo[order] + base, hi[order] + base, 0.0)
    del order
    back = base[heads]
    r_lo -= back
    r_hi -= back
    # Ranks in flight at each interval start: starts so far minus ends at or before it.
    starts, ends = np.sort(r_lo), np.sort(r_hi)
    conc = np.arange(1, starts.size + 1) - np.searchsorted(ends, starts, side="right")
    return Timeline(phases=phases, n_phases=int(n), phase_gap_s=gap,
                    busy_fraction=min(union / run_s, 1.0) if run_s > 0 else 0.0,
                    max_concurrency=int(conc.max()) if conc.size else 0,
                    mean_concurrency=float((r_hi - r_lo).sum() / union) if union > 0 else 0.0,
                    first_s=first, last_s=last)


def derive_trace(model: Columns, tr: Trace) -> TraceMetrics | None:
    """Every trace metric, once; ``None`` when no application operation is traced."""
    app = model.files.category[tr.file_index] == APP
    if not app.any():
        return None
    cov = _coverage(model, tr)
    access, sizes, exact = {}, {}, {}
    reasons = list(tr.partial_reasons)
    for d in DIRECTIONS:
        wd = tr.write == (d == "write")
        rows = np.nonzero(app & wd & (tr.module == POSIX_CODE) & cov[d][tr.file_index])[0]
        access[d] = _access(tr, rows)
        sizes[d] = _sizes(tr.length[rows])
        want = model.per_file("POSIX", f"POSIX_{d.upper()}S")
        need = (model.files.category == APP) & (want > 0)
        exact[d] = bool(need.any()) and bool(cov[d][need].all()) and not tr.partial_reasons
        missing = int(want[need & ~cov[d]].sum())
        if missing:
            reasons.append(f"{missing} POSIX {d}s of the counters are not in the trace")
    return TraceMetrics(
        operations=len(tr),
        by_module={m: int((tr.module == k).sum()) for k, m in enumerate(TRACE_MODULES)},
        complete=not reasons, partial_reasons=reasons, exact=exact, access=access,
        sizes=sizes, busy=_busy(model, tr, app, cov),
        timeline=_timeline(tr, np.nonzero(app)[0], model.job.run_time_s))


def traced_request_time(model: Columns, files: np.ndarray,
                        pick: Callable[[Trace, np.ndarray], np.ndarray],
                        weight: Callable[[Trace, np.ndarray], np.ndarray] | None = None
                        ) -> float | None:
    """The slowest rank's time in the POSIX requests ``pick`` chooses (a mask over the trace
    rows it is given) on the files of the mask ``files``, summed per rank from the traced
    durations, each times ``weight`` (the share of its time the problem costs; 1 without);
    ``None`` unless the trace holds every POSIX read and write of those files (then only a
    bound from the counters is possible)."""
    tr = model.trace
    if tr is None or tr.partial_reasons or not files.any():
        return None
    cov = _coverage(model, tr)
    for d in DIRECTIONS:
        has = files & (model.per_file("POSIX", f"POSIX_{d.upper()}S") > 0)
        if not cov[d][has].all():
            return None
    rows = np.nonzero((tr.module == POSIX_CODE) & files[tr.file_index])[0]
    chosen = rows[pick(tr, rows)]
    if chosen.size == 0:
        return 0.0
    chosen = chosen[tr.rank[chosen] >= 0]
    if chosen.size == 0:
        return 0.0
    dur = tr.end[chosen] - tr.start[chosen]
    if weight is not None:
        dur = dur * weight(tr, chosen)
    return float(np.bincount(tr.rank[chosen], weights=dur).max())


def off_alignment(tr: Trace, rows: np.ndarray, align: np.ndarray) -> np.ndarray:
    """Which trace ``rows`` start off their file's alignment (``align`` per file, bytes):
    Darshan's POSIX_FILE_NOT_ALIGNED, request by request."""
    a = align[tr.file_index[rows]].astype(np.int64)
    return (a > 0) & (tr.offset[rows] % np.maximum(a, 1) != 0)


def misalignment_share(tr: Trace, rows: np.ndarray, align: np.ndarray) -> np.ndarray:
    """The share of each request's time that starting off the alignment can cost: each unit
    (page, block, stripe) it touches costs its share of the time, and alignment can save the
    extra unit it touches (a 16 MiB write at 2 KiB touches 4097 4 KiB units instead of 4096)
    and the units at its ends that another rank's request also partly covers (locks,
    contention: KAUST, "not stripe aligned: some stripes are accessed by more than one
    process"). A 64 KiB piece whose two end units other ranks share costs 3/17 of its time,
    a 1 KiB piece inside another rank's page all of it."""
    a_all = np.maximum(align.astype(np.int64), 1)
    a = a_all[tr.file_index[rows]]
    off, ln = tr.offset[rows], np.maximum(tr.length[rows], 1)
    first, last = off // a, (off + ln - 1) // a
    touched = last - first + 1
    need = -(-ln // a)
    # End units of every POSIX request of these files, and whether two ranks touch each
    # (one lexsort: a million requests take a fraction of a second).
    px = np.nonzero((tr.module == POSIX_CODE) & np.isin(tr.file_index, tr.file_index[rows]))[0]
    pa = a_all[tr.file_index[px]]
    f = np.concatenate([tr.file_index[px]] * 2)
    u = np.concatenate([tr.offset[px] // pa,
                        (tr.offset[px] + np.maximum(tr.length[px], 1) - 1) // pa])
    r = np.concatenate([tr.rank[px]] * 2)
    span = int(u.max()) + 1 if u.size else 1
    if u.size and (int(f.max()) + 1) * span < 1 << 62:  # one int64 key: a faster sort
        order = np.argsort(f * span + u, kind="stable")
    else:
        order = np.lexsort((u, f))
    fs, us, rs = f[order], u[order], r[order]
    new_unit = np.r_[True, (fs[1:] != fs[:-1]) | (us[1:] != us[:-1])]
    unit_id = np.cumsum(new_unit) - 1
    starts = np.nonzero(new_unit)[0]
    two_ranks = (np.minimum.reduceat(rs, starts) != np.maximum.reduceat(rs, starts)
                 if starts.size else np.zeros(0, dtype=bool))
    end_shared = np.empty(f.size, dtype=bool)
    end_shared[order] = two_ranks[unit_id]
    at = np.searchsorted(px, rows)  # rows are among these files' POSIX requests
    first_shared, last_shared = end_shared[at], end_shared[px.size + at]
    n_shared = first_shared.astype(np.int64) + (last_shared & (last != first))
    return np.minimum((touched - need + n_shared) / touched, 1.0)

