"""Every second counted once: which finding owns which seconds of a job's I/O time.

A file's time is split into pools of slowest-rank seconds: its read, write and metadata time
in the calls that move the bytes (POSIX, STDIO), "wait", the MPI-IO time beyond them (the
two-phase exchange, ranks waiting for each other inside collective calls), and "library",
the HDF5 or PnetCDF time beyond that (metadata caches flushed at close, fill values). A
waste finding claims a share of the pools of the files and operations its rule names
(``Hit.claims``): the share its gross cost is of the slowest rank's time in them. Findings
take their shares in the order of the rule table's tiers (the mechanism that explains a
second, then the access shape it shows as, then the file system's layout), costliest first
within a tier; what a finding obtains is its net cost, never more than the time of its
operations. The net costs together never exceed the slowest rank's I/O time: seconds on
other ranks' files ran beside the slowest rank's, not after them. Experiments (settings to
try), information-only rules and costs that are only upper bounds claim nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, cycle, repeat
from operator import itemgetter

import numpy as np

from iolab.diagnose.rules.base import Finding
from iolab.model.files import APP
from iolab.model.job import Model

# A claim's kind draws from its own pools first, then from those it may spill into: an
# MPI-IO write claim is the POSIX writes plus the waiting around them; "*" all of the file.
OPERATIONS = ("read", "write", "meta", "wait", "library")
COVERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "read": (("read",), ("wait", "library")), "write": (("write",), ("wait", "library")),
    "meta": (("meta",), ("library",)), "wait": (("wait",), ()), "*": (OPERATIONS, ())}
TIERS = ("mechanism", "symptom", "layout")

Key = tuple[str, str]  # (file path, operation)


@dataclass
class TimePools:
    """(file, operation) -> the slowest rank's seconds in it, and the one rank whose file
    it is (a file of several ranks, or unknown, is absent from ``rank``)."""

    seconds: dict[Key, float] = field(default_factory=dict)
    rank: dict[str, int] = field(default_factory=dict)

    def slowest_rank_time(self, keys: list[Key]) -> float:
        """The slowest rank's time in these operations: a shared file's time is every
        rank's; the files of one rank add up, and the ranks run side by side."""
        shared, own = 0.0, dict[int, float]()
        for key in dict.fromkeys(keys):
            sec = self.seconds.get(key, 0.0)
            r = self.rank.get(key[0])
            if r is None:
                shared += sec
            else:
                own[r] = own.get(r, 0.0) + sec
        return shared + max(own.values(), default=0.0)


def time_pools(model: Model) -> TimePools:
    """The pools of the application's files. Read, write and metadata: per layer that moves
    bytes (POSIX, STDIO; MPI-IO for a file no lower layer recorded), the slowest rank's time
    on the file split by the layer's read/write/metadata shares, the largest layer; "wait":
    the slowest rank's MPI-IO time beyond its POSIX time; "library": the slowest rank's HDF5
    or PnetCDF time beyond both."""
    L = model.layers
    paths = model.files.paths
    n = len(paths)
    app = model.files.category == APP
    below = L.posix.present | L.stdio.present
    # Whole columns at once (per file and operation, a loop in Python cost seconds on a
    # 64,000-file log); the same float64 arithmetic, and the dict in the order a walk over
    # the layers and then the files would fill it.
    split = {k: np.zeros(n) for k in ("read", "write", "meta")}
    seen = np.zeros(n, dtype=bool)
    order = []
    for lay, alone in ((L.posix, False), (L.stdio, False), (L.mpiio, True)):
        total = lay.time_s["read"] + lay.time_s["write"] + lay.time_s["meta"]
        rows = app & ~(total <= 0) & ~(below & alone)
        with np.errstate(divide="ignore", invalid="ignore"):
            for k, col in split.items():
                sec = lay.slowest_rank_time_s * lay.time_s[k] / total
                bigger = rows & (sec > col)  # max(earlier, sec): the earlier unless larger
                col[bigger] = sec[bigger]
        order.append(np.nonzero(rows & ~seen)[0])
        seen |= rows
    files = np.concatenate(order).tolist()
    named = [paths[i] for i in files]
    seconds = np.stack([split["read"][files], split["write"][files], split["meta"][files]],
                       axis=1).ravel().tolist()
    pools = TimePools(dict(zip(zip(chain.from_iterable(zip(named, named, named)),
                                   cycle(("read", "write", "meta"))), seconds)))
    mpiio_t, posix_t = L.mpiio.slowest_rank_time_s, L.posix.slowest_rank_time_s
    wait = mpiio_t - posix_t
    lib = L.library_slowest_rank_time_s - np.where(posix_t > mpiio_t, posix_t, mpiio_t)
    has_wait = app & L.mpiio.present & below & (wait > 0)
    has_lib = app & (L.library != "") & (lib > 0)
    either = np.nonzero(has_wait | has_lib)[0]
    for i, w, li in zip(either.tolist(), has_wait[either].tolist(), has_lib[either].tolist()):
        if w:
            pools.seconds[(paths[i], "wait")] = float(wait[i])
        if li:
            pools.seconds[(paths[i], "library")] = float(lib[i])
    pools.rank = _file_ranks(model)
    return pools


def _file_ranks(model: Model) -> dict[str, int]:
    """The rank of each file that only one rank's records touch (a reduced record, rank -1,
    makes a file shared)."""
    pairs = [(md.file_index, md.ranks) for md in model.mods.values()
             if md is not None and len(md) and hasattr(md, "file_index")]
    if not pairs:
        return {}
    # (file, rank) pairs made unique in numpy, not a set per file in Python
    files, ranks = (np.concatenate([p[0] for p in pairs]).astype(np.int64),
                    np.concatenate([p[1] for p in pairs]).astype(np.int64))
    pair = np.unique(np.stack([files, ranks], axis=1), axis=0)
    f, first = np.unique(files, return_index=True)
    n = np.unique(pair[:, 0], return_counts=True)[1]  # ranks per file (f's order)
    one = pair[np.isin(pair[:, 0], f[n == 1]) & (pair[:, 1] >= 0)
               & (pair[:, 0] < len(model.files.paths))]
    # in the order the files first appear, as a walk over the records made it (a dataset
    # outside every file, index -1, keys the last path: the same dict as before)
    one = one[np.argsort(first[np.searchsorted(f, one[:, 0])], kind="stable")]
    return {model.files.paths[i]: r for i, r in one.tolist()}


@dataclass
class _Want:
    """What a finding asks of each pool, in pool seconds, and the gross seconds that ask
    stands for (a group: its claims' own operations, then those they spill into). The
    pools are numbered keys of a :class:`_Keys` (``ids``, unique, in the claims' order)."""

    ids: np.ndarray
    seconds: np.ndarray
    gross: float


_NOBODY = np.iinfo(np.int64).min  # the rank of a file of several ranks (or unknown)


class _Keys:
    """(file, operation) keys numbered file * len(OPERATIONS) + operation, so that a
    finding's claims on 64,000 files are arrays, not 64,000 dict look-ups and tuples in
    Python (seconds on such a log). Sums keep the order and float64 arithmetic of a walk
    over the keys (np.cumsum, np.add.at add one element after the other), so the costs are
    the same to the last bit."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.index: dict[str, int] = {}

    def files(self, paths: list[str]) -> np.ndarray:
        """The files' numbers (a new file gets the next one)."""
        got = np.fromiter(map(self.index.get, paths, repeat(-1)), dtype=np.int64,
                          count=len(paths))
        if (got < 0).any():
            new = [p for p in dict.fromkeys(paths) if p not in self.index]
            self.index.update(zip(new, range(len(self.paths), len(self.paths) + len(new))))
            self.paths += new
            got = np.fromiter(map(self.index.__getitem__, paths), dtype=np.int64,
                              count=len(paths))
        return got

    def ids(self, keys: list[Key]) -> np.ndarray:
        files = self.files(list(map(itemgetter(0), keys)))
        ops = np.fromiter(map(_OP.__getitem__, map(itemgetter(1), keys)), dtype=np.int64,
                          count=len(keys))
        return files * len(OPERATIONS) + ops

    def claim_ids(self, claims: list[tuple[str, str]], group: int) -> np.ndarray:
        """The keys of a group of claims (each claim's operations, ``COVERS``), in the
        claims' order."""
        files = self.files(list(map(itemgetter(0), claims)))
        kinds = list(map(itemgetter(1), claims))
        pos, sub, ids = [], [], []
        distinct = list(dict.fromkeys(kinds))
        kind_of = np.array(kinds, dtype=object) if len(distinct) > 1 else None
        for kind in distinct:
            at = np.arange(len(kinds)) if kind_of is None else np.nonzero(kind_of == kind)[0]
            for j, op in enumerate(COVERS.get(kind, (OPERATIONS, ()))[group]):
                pos.append(at)
                sub.append(np.full(len(at), j))
                ids.append(files[at] * len(OPERATIONS) + _OP[op])
        if not ids:
            return np.zeros(0, dtype=np.int64)
        order = np.lexsort((np.concatenate(sub), np.concatenate(pos)))
        return np.concatenate(ids)[order]

    def size(self) -> int:
        return len(self.paths) * len(OPERATIONS)

    def seconds(self, pools: TimePools, ids: np.ndarray | None = None) -> np.ndarray:
        """The pools' seconds by key number (0 for a key they lack); ``ids``: their keys'
        numbers, when known."""
        ids = self.ids(list(pools.seconds)) if ids is None else ids
        out = np.zeros(self.size())
        out[ids] = np.fromiter(pools.seconds.values(), dtype=np.float64, count=len(ids))
        return out

    def ranks(self, pools: TimePools) -> np.ndarray:
        """The one rank of each key's file (_NOBODY: several ranks, or unknown)."""
        per_file = np.fromiter(map(pools.rank.get, self.paths, repeat(_NOBODY)),
                               dtype=np.int64, count=len(self.paths))
        return np.repeat(per_file, len(OPERATIONS))

    def named(self, ids: np.ndarray) -> tuple[list[str], list[str]]:
        """The (files, operations) of key numbers."""
        f, o = np.divmod(ids, len(OPERATIONS))
        return (list(map(self.paths.__getitem__, f.tolist())),
                list(map(OPERATIONS.__getitem__, o.tolist())))


_OP = {op: i for i, op in enumerate(OPERATIONS)}


def _seq_sum(a: np.ndarray) -> float:
    """``sum(a)`` added in order, as a Python loop adds (np.sum adds pairwise)."""
    return float(np.cumsum(a)[-1]) if a.size else 0.0


def _unique_in_order(ids: np.ndarray) -> np.ndarray:
    """``dict.fromkeys(ids)``: each id once, where it first appears."""
    _, first = np.unique(ids, return_index=True)
    return ids[np.sort(first)]


def _slowest_rank_time(ids: np.ndarray, seconds: np.ndarray, ranks: np.ndarray) -> float:
    """:meth:`TimePools.slowest_rank_time` over numbered keys (unique, in order)."""
    sec, rk = seconds[ids], ranks[ids]
    shared_at = rk == _NOBODY
    shared = _seq_sum(sec[shared_at])
    own_r, own_s = rk[~shared_at], sec[~shared_at]
    if not own_r.size:
        return shared + 0.0
    uniq, inv = np.unique(own_r, return_inverse=True)
    own = np.zeros(len(uniq))
    np.add.at(own, inv, own_s)  # per rank, in the keys' order
    return shared + max(own.tolist())


def _wants(gross_s: float, group_ids: list[np.ndarray], seconds: np.ndarray,
           ranks: np.ndarray) -> list[_Want]:
    """The finding's gross cost as shares of its claimed pools: first its claims' own
    operations (the share its gross is of the slowest rank's time in them), then, for what
    exceeds them, the operations they spill into."""
    gross = max(gross_s, 0.0)
    out = []
    for ids in group_ids:
        if not ids.size or gross <= 0:
            continue
        ids = _unique_in_order(ids)
        time = _slowest_rank_time(ids, seconds, ranks)
        if time <= 0:
            continue
        part = min(gross, time)
        share = part / time
        out.append(_Want(ids, share * seconds[ids], part))
        gross -= part
    return out


def _with_claimed_files(pools: TimePools, findings: list[Finding]) -> TimePools:
    """The pools, and for each claimed file the model has no time for (no model: the
    attribution of bare findings) its largest claim spread evenly over its operations."""
    known = set(map(itemgetter(0), pools.seconds))
    out = TimePools(dict(pools.seconds), dict(pools.rank))
    for f in findings:
        claims = f.hit.claimed()
        if known.issuperset(map(itemgetter(0), claims)):
            continue  # every file known (a model's files): nothing to add
        for p, kind in claims:
            if p in known:
                continue
            first = COVERS.get(kind, (OPERATIONS, ()))[0]
            each = max(f.gross_s or 0.0, 0.0) / len(claims) / len(first)
            for k in first:
                out.seconds[(p, k)] = max(out.seconds.get((p, k), 0.0), each)
    return out


def _numbered(findings: list[Finding], pools: TimePools) -> tuple[
        _Keys, np.ndarray, list[list[tuple[str, str]]], list[list[np.ndarray]]]:
    """The keys of the pools and of the findings' claims numbered: the numbers of the
    pools' keys, each finding's claims and its key numbers by group."""
    keys = _Keys()
    pool_ids = keys.ids(list(pools.seconds))
    claimed = [f.hit.claimed() for f in findings]
    groups = [[keys.claim_ids(c, g) for g in (0, 1)] if c else [] for c in claimed]
    return keys, pool_ids, claimed, groups


def attribute_time(findings: list[Finding], order: dict[str, int],
                   pools: TimePools | None = None, io_time_s: float | None = None) -> None:
    """Set each waste finding's net cost (``net_s``), what it owns (``owned``) and whose
    seconds it found taken (``same_time_as``); see the module's text."""
    # A bound (Hit.cost_bound) owns no seconds: its time may belong to anything else.
    problems = [f for f in findings if not f.rule.overview and f.rule.severity != "info"
                and not f.rule.experiment and not f.hit.cost_bound and (f.gross_s or 0.0) > 0]
    full = _with_claimed_files(pools or TimePools(), problems)
    problems.sort(key=lambda f: (TIERS.index(f.rule.tier), -(f.gross_s or 0.0),
                                 order[f.rule.id]))
    keys, pool_ids, claimed, groups = _numbered(problems, full)
    full_s, ranks = keys.seconds(full, pool_ids), keys.ranks(full)
    left = full_s.copy()
    holders: list[tuple[str, np.ndarray]] = []
    for f, claims, ids in zip(problems, claimed, groups):
        if not claims:  # no file named (a rank's or the job's time): all its own
            f.net_s, f.same_time_as, f.owned = f.gross_s, [], [("", "*", f.gross_s or 0.0)]
            continue
        _take(f, _wants(f.gross_s or 0.0, ids, full_s, ranks), left, holders, keys)
    if io_time_s is not None:
        _within_io_time(problems, io_time_s)
    left_pools = dict(zip(full.seconds, left[pool_ids].tolist()))
    _experiment_ranges(findings, full, TimePools(left_pools, full.rank))


def _experiment_ranges(findings: list[Finding], full: TimePools, left: TimePools) -> None:
    """Each experiment's worst plausible gain: its estimate on the seconds of its claims the
    waste findings left (nothing is taken: an experiment owns no time)."""
    exps = [f for f in findings if f.rule.experiment and (f.gross_s or 0.0) > 0]
    if not exps:
        return
    full_e, left_e = _with_claimed_files(full, exps), _with_claimed_files(left, exps)
    keys, pool_ids, claimed, groups = _numbered(exps, full_e)
    full_s, left_s = keys.seconds(full_e, pool_ids), keys.seconds(left_e)
    ranks = keys.ranks(full_e)
    for f, claims, ids in zip(exps, claimed, groups):
        if not claims:
            continue  # a rank's or the job's time: no waste finding names it
        low = 0.0
        for want in _wants(f.gross_s or 0.0, ids, full_s, ranks):
            asked = _seq_sum(want.seconds)
            if asked > 0:
                got = _seq_sum(np.minimum(want.seconds, left_s[want.ids]))
                low += want.gross * got / asked
        f.estimate_low_s = min(low, f.gross_s or 0.0)


def _take(f: Finding, wants: list[_Want], left: np.ndarray,
          holders: list[tuple[str, np.ndarray]], keys: _Keys) -> None:
    """Take the finding's wants from the seconds ``left``; ``holders``: the findings before
    it, each with the keys it took (a mask), to which this one's is added."""
    net, short, mine = 0.0, [], []
    f.owned = []
    for want in wants:
        asked = _seq_sum(want.seconds)
        if asked <= 0:
            continue
        take = np.minimum(want.seconds, left[want.ids])
        short.append(want.ids[take < want.seconds * 0.995])
        pos = take > 0
        ids, take = want.ids[pos], take[pos]
        left[ids] -= take
        f.owned.extend(zip(*keys.named(ids), (take * want.gross / asked).tolist()))
        mine.append(ids)
        net += want.gross * _seq_sum(take) / asked
    gross = f.gross_s or 0.0
    if abs(net - gross) <= 1e-9 * max(gross, 1.0):
        net = gross  # all of it, not a rounding of the shares
    f.net_s = net
    f.same_time_as = _same_time_as(f.key, short, holders)
    took = np.zeros(keys.size(), dtype=bool)
    if mine:
        took[np.concatenate(mine)] = True
    holders.append((f.key, took))


def _same_time_as(fkey: str, short: list[np.ndarray],
                  holders: list[tuple[str, np.ndarray]]) -> list[str]:
    """The findings that had taken the keys a finding could not get all of: in the order of
    those keys, and at one key in the order they took it."""
    if not short:
        return []
    at = np.concatenate(short)
    first = []
    for n, (hkey, took) in enumerate(holders):
        there = took[at]
        if hkey != fkey and there.any():
            first.append((int(np.argmax(there)), n, hkey))
    return list(dict.fromkeys(hkey for _, _, hkey in sorted(first)))


def _within_io_time(problems: list[Finding], io_time_s: float) -> None:
    """The net costs together at most the slowest rank's I/O time. The costliest keep
    theirs; the rest keep what is left, naming the findings whose time they ran beside."""
    left = io_time_s
    ahead: list[str] = []
    for f in sorted(problems, key=lambda f: -(f.net_s or 0.0)):
        net = f.net_s or 0.0
        keep = min(net, max(left, 0.0))
        if keep < net * 0.995:
            scale = keep / net if net > 0 else 0.0
            f.owned = [(p, k, sec * scale) for p, k, sec in f.owned if sec * scale > 0]
            f.net_s = keep
            f.beside = ahead[:3]
        left -= keep
        if keep > 0:
            ahead.append(f.key)
