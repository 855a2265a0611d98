"""Shared-file reduction, as Darshan does at MPI_Finalize: one record (rank -1) for a file
that every rank of an MPI job opened, with the fastest/slowest rank and the variance of
bytes and time over ranks. Which rule applies to a counter follows from its kind in the
counter list, so a new counter needs no code here.
"""

from __future__ import annotations

from collections.abc import Sequence

from iolab.counters import ModuleCounters
from iolab.model.raw import SHARED_RANK, RawRecord

_PREFIX = {"POSIX": "POSIX", "STDIO": "STDIO", "MPI-IO": "MPIIO", "H5F": "H5F", "H5D": "H5D",
           "PNETCDF_FILE": "PNETCDF_FILE", "PNETCDF_VAR": "PNETCDF_VAR"}
# Modules whose common accesses are (size, 5 lengths, 5 strides) tuples.
_TUPLE_MODULES = ("H5D", "PNETCDF_VAR")
_H5D_TUPLE = ["ACCESS", *(f"LENGTH_D{d}" for d in range(1, 6)),
              *(f"STRIDE_D{d}" for d in range(1, 6))]


def _merge_common(
    out: dict[str, int], recs: Sequence[RawRecord], p: str, what: str, cnt: str
) -> None:
    """The 4 most common values over the ranks: each value's counts add up over every
    rank's list, then the 4 largest are kept in Darshan's order (count, then value, both
    descending). Folding each rank's list into a running top 4 lost counts: a value every
    rank had once fell out behind values each rank had twice (1968 x 2 shown where the
    truth was 1920 x 4)."""
    freq: dict[int, int] = {}
    for r in recs:
        for i in range(1, 5):
            v = r.counters.get(f"{p}_{what}{i}_{cnt}", 0)
            n = r.counters.get(f"{p}_{what}{i}_COUNT", 0)
            if v and n > 0:
                freq[v] = freq.get(v, 0) + n
    top = sorted(freq.items(), key=lambda vn: (-vn[1], -vn[0]))[:4]
    top += [(0, 0)] * (4 - len(top))
    for i, (v, n) in enumerate(top):
        out[f"{p}_{what}{i + 1}_{cnt}"] = v
        out[f"{p}_{what}{i + 1}_COUNT"] = n


def _merge_tuple_access(out: dict[str, int], recs: Sequence[RawRecord], p: str) -> None:
    """H5D's and PNETCDF_VAR's common accesses are (size, 5 lengths, 5 strides) tuples: counts
    of equal tuples add up over the ranks; the 4 most frequent are kept (ties to the larger
    size)."""
    freq: dict[tuple[int, ...], int] = {}
    for r in recs:
        for i in range(1, 5):
            key = tuple(r.counters.get(f"{p}_ACCESS{i}_{k}", 0) for k in _H5D_TUPLE)
            n = r.counters.get(f"{p}_ACCESS{i}_COUNT", 0)
            if n and key[0]:
                freq[key] = freq.get(key, 0) + n
    top = sorted(freq.items(), key=lambda kv: (-kv[1], -kv[0][0], kv[0]))[:4]
    for i in range(4):
        key, n = top[i] if i < len(top) else ((0,) * len(_H5D_TUPLE), 0)
        for k, v in zip(_H5D_TUPLE, key, strict=True):
            out[f"{p}_ACCESS{i + 1}_{k}"] = v
        out[f"{p}_ACCESS{i + 1}_COUNT"] = n


def _io_time(r: RawRecord, p: str) -> float:
    f = r.fcounters
    return (
        f.get(f"{p}_F_READ_TIME", 0.0)
        + f.get(f"{p}_F_WRITE_TIME", 0.0)
        + f.get(f"{p}_F_META_TIME", 0.0)
    )


def _io_bytes(r: RawRecord, p: str) -> int:
    return r.counters.get(f"{p}_BYTES_READ", 0) + r.counters.get(f"{p}_BYTES_WRITTEN", 0)


def _pvariance(xs: Sequence[float]) -> float:
    n = len(xs)
    mean = sum(xs) / n
    return sum((x - mean) ** 2 for x in xs) / n


def reduce_shared(recs: Sequence[RawRecord], mc: ModuleCounters) -> RawRecord:
    """One rank -1 record from the records of every rank (sorted by rank)."""
    p = _PREFIX[mc.module]
    recs = sorted(recs, key=lambda r: r.rank)
    ci: dict[str, int] = {}
    for c in mc.ints:
        vals = [r.counters.get(c.name, 0) for r in recs]
        if c.kind in ("count", "bytes"):
            ci[c.name] = sum(vals)
        elif c.kind == "offset":
            ci[c.name] = max(vals)
        else:  # flags, size (alignment, mode): the first rank's non-zero value
            ci[c.name] = next((v for v in vals if v), 0)
    if p in _TUPLE_MODULES:
        _merge_tuple_access(ci, recs, p)
    else:
        for what, cnt in (("ACCESS", "ACCESS"), ("STRIDE", "STRIDE")):
            if f"{p}_{what}1_{cnt}" in ci:
                _merge_common(ci, recs, p, what, cnt)
    cf: dict[str, float] = {}
    for c in mc.floats:
        vals_f = [r.fcounters.get(c.name, 0.0) for r in recs]
        if c.kind == "timestamp" and "_START_" in c.name:
            nz = [v for v in vals_f if v > 0]
            cf[c.name] = min(nz) if nz else 0.0
        elif c.kind == "timestamp" or c.name.startswith(f"{p}_F_MAX_"):
            cf[c.name] = max(vals_f)
        else:
            cf[c.name] = sum(vals_f)
    for d in ("READ", "WRITE"):  # the slowest operation's size goes with its time
        key = f"{p}_F_MAX_{d}_TIME"
        if key in cf and recs:
            slow = max(recs, key=lambda r, k=key: r.fcounters.get(k, 0.0))  # type: ignore[misc]
            ci[f"{p}_MAX_{d}_TIME_SIZE"] = slow.counters.get(f"{p}_MAX_{d}_TIME_SIZE", 0)
    if f"{p}_FASTEST_RANK" not in ci:  # H5F: no rank statistics in Darshan's record
        return _shared(mc, recs, ci, cf)
    times = [_io_time(r, p) for r in recs]
    nbytes = [_io_bytes(r, p) for r in recs]
    fast = min(range(len(recs)), key=lambda i: (times[i], recs[i].rank))
    slow_i = max(range(len(recs)), key=lambda i: (times[i], -recs[i].rank))
    ci[f"{p}_FASTEST_RANK"] = recs[fast].rank
    ci[f"{p}_FASTEST_RANK_BYTES"] = nbytes[fast]
    ci[f"{p}_SLOWEST_RANK"] = recs[slow_i].rank
    ci[f"{p}_SLOWEST_RANK_BYTES"] = nbytes[slow_i]
    cf[f"{p}_F_FASTEST_RANK_TIME"] = times[fast]
    cf[f"{p}_F_SLOWEST_RANK_TIME"] = times[slow_i]
    cf[f"{p}_F_VARIANCE_RANK_TIME"] = _pvariance(times)
    cf[f"{p}_F_VARIANCE_RANK_BYTES"] = _pvariance([float(b) for b in nbytes])
    return _shared(mc, recs, ci, cf)


def _shared(
    mc: ModuleCounters, recs: Sequence[RawRecord], ci: dict[str, int], cf: dict[str, float]
) -> RawRecord:
    return RawRecord(
        module=mc.module,
        rank=SHARED_RANK,
        record_id=recs[0].record_id,
        path=recs[0].path,
        counters=ci,
        fcounters=cf,
    )
