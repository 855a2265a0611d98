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

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, cycle, repeat
from operator import itemgetter

import numpy as np

from iolab.diagnose.rules.base import FileClaims, Finding, OwnedSeconds
from iolab.model.files import APP
from iolab.model.job import Model
from iolab.model.tables import unique_values

# A claim's kind draws from its own pools first, then from those it may spill into: an
# MPI-IO write claim is the POSIX writes plus the waiting around them; "*" all of the file.
OPERATIONS = ("read", "write", "meta", "wait", "library")
COVERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "read": (("read",), ("wait", "library")), "write": (("write",), ("wait", "library")),
    "meta": (("meta",), ("library",)), "wait": (("wait",), ()), "*": (OPERATIONS, ())}
TIERS = ("mechanism", "symptom", "layout")

Key = tuple[str, str]  # (file path, operation)


@dataclass
class PoolTable:
    """The pools of :func:`time_pools` as columns: per file of ``paths`` and operation
    (OPERATIONS' order) its seconds and whether the pool exists. The attribution reads
    these; a dict of every (file, operation) is made only when asked for (192,000 tuples
    on a 64,000-file log)."""

    paths: list[str]
    seconds: np.ndarray  # (files, operations)
    present: np.ndarray  # (files, operations) bool
    first_files: list[int]  # the files with read/write/meta pools, in the dict's order

    def as_dict(self) -> dict[Key, float]:
        """The dict :func:`time_pools` made: read, write, meta of each file in
        ``first_files``' order, then wait and library by file."""
        named = [self.paths[i] for i in self.first_files]
        rwm = self.seconds[self.first_files, :3].ravel().tolist()
        out = dict(zip(zip(chain.from_iterable(zip(named, named, named)),
                           cycle(OPERATIONS[:3])), rwm))
        for i in np.nonzero(self.present[:, 3:].any(axis=1))[0].tolist():
            for j in (3, 4):
                if self.present[i, j]:
                    out[(self.paths[i], OPERATIONS[j])] = float(self.seconds[i, j])
        return out


class TimePools:
    """(file, operation) -> the slowest rank's seconds in it, and the one rank whose file
    it is (a file of several ranks, or unknown, is absent from ``rank``). ``table``: the
    same seconds as columns (:func:`time_pools`), the dict then made when first read."""

    def __init__(self, seconds: dict[Key, float] | None = None,
                 rank: dict[str, int] | None = None, table: PoolTable | None = None) -> None:
        self._seconds = seconds
        self._rank = rank
        self.table = table
        # the one-rank files as (indices of table.paths, their ranks): ``rank`` then made
        # when first read (64,000 names on a log of a file per rank)
        self.rank_of: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def rank(self) -> dict[str, int]:
        if self._rank is None:
            self._rank = {}
            if self.rank_of is not None and self.table is not None:
                files, ranks = self.rank_of
                self._rank = dict(zip(map(self.table.paths.__getitem__, files.tolist()),
                                      ranks.tolist()))
        return self._rank

    @rank.setter
    def rank(self, value: dict[str, int]) -> None:
        self._rank, self.rank_of = value, None

    @property
    def seconds(self) -> dict[Key, float]:
        if self._seconds is None:
            self._seconds = self.table.as_dict() if self.table is not None else {}
        return self._seconds

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
    table = np.zeros((n, len(OPERATIONS)))
    present = np.zeros((n, len(OPERATIONS)), dtype=bool)
    seen = np.zeros(n, dtype=bool)
    order = []
    for lay, alone in ((L.posix, False), (L.stdio, False), (L.mpiio, True)):
        total = lay.time_s["read"] + lay.time_s["write"] + lay.time_s["meta"]
        rows = app & ~(total <= 0) & ~(below & alone)
        with np.errstate(divide="ignore", invalid="ignore"):
            for j, k in enumerate(("read", "write", "meta")):
                sec = lay.slowest_rank_time_s * lay.time_s[k] / total
                bigger = rows & (sec > table[:, j])  # max(earlier, sec): the earlier unless larger
                table[bigger, j] = sec[bigger]
        order.append(np.nonzero(rows & ~seen)[0])
        seen |= rows
    present[:, :3] = seen[:, None]
    mpiio_t, posix_t = L.mpiio.slowest_rank_time_s, L.posix.slowest_rank_time_s
    wait = mpiio_t - posix_t
    lib = L.library_slowest_rank_time_s - np.where(posix_t > mpiio_t, posix_t, mpiio_t)
    present[:, 3] = app & L.mpiio.present & below & (wait > 0)
    present[:, 4] = app & (L.library != "") & (lib > 0)
    table[present[:, 3], 3] = wait[present[:, 3]]
    table[present[:, 4], 4] = lib[present[:, 4]]
    # the model's own list: claims (FileClaims) index it, the attribution then reads them as is
    pools = TimePools(table=PoolTable(paths, table, present,
                                      np.concatenate(order).tolist()))
    pools.rank_of = _file_ranks(model)
    return pools


def _file_ranks(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """The files (indices of model.files.paths) that only one rank's records touch, and that
    rank (a reduced record, rank -1, makes a file shared), in the order the files first
    appear in the records."""
    pairs = [(md.file_index, md.ranks) for md in model.mods.values()
             if md is not None and len(md) and hasattr(md, "file_index")]
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # (file, rank) pairs made unique in numpy, not a set per file in Python
    files, ranks = (np.concatenate([p[0] for p in pairs]).astype(np.int64),
                    np.concatenate([p[1] for p in pairs]).astype(np.int64))
    # one int64 per pair (file, rank + 1 >= 0 in the low 32 bits): a 1-D sort, in the
    # pairs' order, not np.unique(axis=0)'s slow row sort
    key = unique_values(files * (1 << 32) + (ranks + 1))  # a sort (np.unique hashes first)
    pair = np.stack([key >> 32, (key & 0xFFFFFFFF) - 1], axis=1)
    # The pairs are sorted by file: each file's pairs are one run, its length the file's
    # ranks, read from the runs' starts (was np.unique twice and np.isin: hashing and
    # sorting again what is sorted, ~0.1 ms a small log, issue 31).
    starts = _run_starts(pair[:, 0])
    f = pair[starts, 0]
    n = np.diff(np.append(starts, len(pair)))  # ranks per file (f's order)
    by_file = np.argsort(files, kind="stable")  # np.unique(files, return_index=True)'s way
    first = by_file[_run_starts(files[by_file])]  # each file's first record
    one = pair[(np.repeat(n, n) == 1) & (pair[:, 1] >= 0)
               & (pair[:, 0] < len(model.files.paths))]
    # in the order the files first appear, as a walk over the records made it (a dataset
    # outside every file, index -1, stands for the last path: the same dict as before)
    one = one[np.argsort(first[np.searchsorted(f, one[:, 0])], kind="stable")]
    return one[:, 0], one[:, 1]


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted array starts."""
    first = np.empty(len(ordered), dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return np.flatnonzero(first)


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

    def __init__(self, paths: list[str] | None = None) -> None:
        self.paths: list[str] = [] if paths is None else list(paths)
        self._index: dict[str, int] | None = None
        # the list whose names are the first numbers (the model's files): a FileClaims of
        # it is numbered by its indices, without a look-up per name
        self.base: list[str] | None = None

    def claim_files(self, claims: Sequence[tuple[str, str]]) -> np.ndarray:
        """The numbers of the claims' files, in order."""
        if isinstance(claims, FileClaims) and self.base is not None and (
                claims.paths is self.base):
            return claims.files()
        return self.files(list(map(itemgetter(0), claims)))

    @property
    def index(self) -> dict[str, int]:
        """Name -> number, made when a name is first looked up (claims that are file
        indices of the model need none)."""
        if self._index is None:
            self._index = dict(zip(self.paths, range(len(self.paths))))
        return self._index

    def files(self, paths: list[str]) -> np.ndarray:
        """The files' numbers (a new file gets the next one)."""
        if self._index is None and len(paths) <= 16:
            # a few names (a finding's evidence files): a scan of the names each, not a
            # dict of all of them (30 ms on 64,000 files); the names are unique
            numbers = []
            for p in paths:
                try:
                    numbers.append(self.paths.index(p))
                except ValueError:
                    numbers.append(len(self.paths))
                    self.paths.append(p)
            return np.array(numbers, dtype=np.int64)
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

    def claim_ids(self, claims: Sequence[tuple[str, str]], group: int) -> np.ndarray:
        """The keys of a group of claims (each claim's operations, ``COVERS``), in the
        claims' order."""
        files = self.claim_files(claims)
        pos, sub, ids = [], [], []
        for kind, at in _claims_by_kind(claims):
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

    def ranks(self, pools: TimePools) -> np.ndarray:
        """The one rank of each key's file (_NOBODY: several ranks, or unknown)."""
        if (pools.rank_of is not None and pools.table is not None
                and pools.table.paths is self.base and not (pools.rank_of[0] < 0).any()):
            # by the files' numbers, not a look-up per name (-1, a dataset outside every
            # file, goes the dict's way: it names the last path)
            per_file = np.full(len(self.paths), _NOBODY, dtype=np.int64)
            per_file[pools.rank_of[0]] = pools.rank_of[1]
        else:
            per_file = np.fromiter(map(pools.rank.get, self.paths, repeat(_NOBODY)),
                                   dtype=np.int64, count=len(self.paths))
        return np.repeat(per_file, len(OPERATIONS))


_OP = {op: i for i, op in enumerate(OPERATIONS)}


def _kind_at(claims: Sequence[tuple[str, str]], j: int) -> str:
    """The kind of claim ``j`` (of a FileClaims: without making its pairs)."""
    if isinstance(claims, FileClaims):
        for kind, f in claims.blocks:
            if j < len(f):
                return kind
            j -= len(f)
    return claims[j][1]


def _claims_by_kind(claims: Sequence[tuple[str, str]]) -> list[tuple[str, np.ndarray]]:
    """Each kind of the claims with the positions of its claims, kinds as they first
    appear."""
    if isinstance(claims, FileClaims):
        at = np.cumsum([0] + [len(f) for _, f in claims.blocks])
        spans: dict[str, list[np.ndarray]] = {}
        for (kind, _), lo, hi in zip(claims.blocks, at[:-1].tolist(), at[1:].tolist()):
            if hi > lo:
                spans.setdefault(kind, []).append(np.arange(lo, hi))
        return [(kind, np.concatenate(a)) for kind, a in spans.items()]
    kinds = list(map(itemgetter(1), claims))
    distinct = list(dict.fromkeys(kinds))
    if len(distinct) == 1:
        return [(distinct[0], np.arange(len(kinds)))]
    kind_of = np.array(kinds, dtype=object)
    return [(kind, np.nonzero(kind_of == kind)[0]) for kind in distinct]


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


def _numbered(pools: TimePools, *findings: list[Finding]) -> tuple[
        _Keys, np.ndarray, np.ndarray, list[list[Sequence[tuple[str, str]]]],
        list[list[list[np.ndarray]]]]:
    """The pools' and the findings' claims' keys numbered: the pools' seconds and which
    exist, as arrays; for each list of findings, their claims and key numbers by group."""
    table = pools.table
    if table is not None and len(set(table.paths)) == len(table.paths):
        keys = _Keys(table.paths)
        keys.base = table.paths
        pool_ids = None
    else:  # a dict (or a table whose paths repeat: the dict merges their pools)
        keys = _Keys()
        pool_ids = keys.ids(list(pools.seconds))
    claimed = [[f.hit.claimed() for f in fs] for fs in findings]
    groups = [[[keys.claim_ids(c, g) for g in (0, 1)] if c else [] for c in cs]
              for cs in claimed]
    seconds, present = np.zeros(keys.size()), np.zeros(keys.size(), dtype=bool)
    if pool_ids is None:
        assert table is not None
        seconds[:table.seconds.size] = table.seconds.ravel()
        present[:table.present.size] = table.present.ravel()
    else:
        seconds[pool_ids] = np.fromiter(pools.seconds.values(), dtype=np.float64,
                                        count=len(pool_ids))
        present[pool_ids] = True
    return keys, seconds, present, claimed, groups


def _with_claimed_files(keys: _Keys, seconds: np.ndarray, known: np.ndarray,
                        findings: list[Finding], claimed: list[Sequence[tuple[str, str]]]) -> None:
    """Into ``seconds``: for each claimed file the pools have no time for (``known``, per
    file; no model: the attribution of bare findings) its largest claim spread evenly over
    its operations."""
    for f, claims in zip(findings, claimed):
        if not claims:
            continue
        files = keys.claim_files(claims)
        for j in np.nonzero(~known[files])[0].tolist():
            first = COVERS.get(_kind_at(claims, j), (OPERATIONS, ()))[0]
            each = max(f.gross_s or 0.0, 0.0) / len(claims) / len(first)
            for k in first:
                at = files[j] * len(OPERATIONS) + _OP[k]
                if each > seconds[at]:  # max(earlier, each)
                    seconds[at] = each


def attribute_time(findings: list[Finding], order: dict[str, int],
                   pools: TimePools | None = None, io_time_s: float | None = None) -> None:
    """Set each waste finding's net cost (``net_s``), what it owns (``owned``) and whose
    seconds it found taken (``same_time_as``); see the module's text."""
    # A bound (Hit.cost_bound) owns no seconds: its time may belong to anything else.
    problems = [f for f in findings if not f.rule.overview and f.rule.severity != "info"
                and not f.rule.experiment and not f.hit.cost_bound and (f.gross_s or 0.0) > 0]
    exps = [f for f in findings if f.rule.experiment and (f.gross_s or 0.0) > 0]
    pools = pools or TimePools()
    keys, full, present, (claimed, exp_claimed), (groups, exp_groups) = _numbered(
        pools, problems, exps)
    known = np.asarray(present.reshape(-1, len(OPERATIONS)).any(axis=1))
    _with_claimed_files(keys, full, known, problems, claimed)
    ranks = keys.ranks(pools)
    left = full.copy()
    holders: list[tuple[str, np.ndarray]] = []
    ranked = sorted(range(len(problems)), key=lambda n: (
        TIERS.index(problems[n].rule.tier), -(problems[n].gross_s or 0.0),
        order[problems[n].rule.id]))
    for n in ranked:
        f = problems[n]
        if not claimed[n]:  # no file named (a rank's or the job's time): all its own
            f.net_s, f.same_time_as, f.owned = f.gross_s, [], [("", "*", f.gross_s or 0.0)]
            continue
        _take(f, _wants(f.gross_s or 0.0, groups[n], full, ranks), left, holders, keys)
    if io_time_s is not None:
        _within_io_time([problems[n] for n in ranked], io_time_s)
    if exps:
        # the files the waste findings claim are known to the experiments' claims too
        for c in claimed:
            known[keys.claim_files(c)] = True
        _experiment_ranges(exps, exp_claimed, exp_groups, keys, full, left, known, ranks)


def _experiment_ranges(exps: list[Finding], claimed: list[Sequence[tuple[str, str]]],
                       groups: list[list[np.ndarray]], keys: _Keys, full: np.ndarray,
                       left: np.ndarray, known: np.ndarray, ranks: np.ndarray) -> None:
    """Each experiment's worst plausible gain: its estimate on the seconds of its claims the
    waste findings left (nothing is taken: an experiment owns no time)."""
    full_e, left_e = full.copy(), left.copy()
    _with_claimed_files(keys, full_e, known, exps, claimed)
    _with_claimed_files(keys, left_e, known, exps, claimed)
    for f, claims, ids in zip(exps, claimed, groups):
        if not claims:
            continue  # a rank's or the job's time: no waste finding names it
        low = 0.0
        for want in _wants(f.gross_s or 0.0, ids, full_e, ranks):
            asked = _seq_sum(want.seconds)
            if asked > 0:
                got = _seq_sum(np.minimum(want.seconds, left_e[want.ids]))
                low += want.gross * got / asked
        f.estimate_low_s = min(low, f.gross_s or 0.0)


def _take(f: Finding, wants: list[_Want], left: np.ndarray,
          holders: list[tuple[str, np.ndarray]], keys: _Keys) -> None:
    """Take the finding's wants from the seconds ``left``; ``holders``: the findings before
    it, each with the keys it took (a mask), to which this one's is added."""
    net, short, mine, owned = 0.0, [], [], []
    for want in wants:
        asked = _seq_sum(want.seconds)
        if asked <= 0:
            continue
        take = np.minimum(want.seconds, left[want.ids])
        short.append(want.ids[take < want.seconds * 0.995])
        pos = take > 0
        ids, take = want.ids[pos], take[pos]
        left[ids] -= take
        owned.append(take * want.gross / asked)
        mine.append(ids)
        net += want.gross * _seq_sum(take) / asked
    gross = f.gross_s or 0.0
    if abs(net - gross) <= 1e-9 * max(gross, 1.0):
        net = gross  # all of it, not a rounding of the shares
    f.net_s = net
    f.same_time_as = _same_time_as(f.key, short, holders)
    took = np.zeros(keys.size(), dtype=bool)
    f.owned = []
    if mine:
        took[np.concatenate(mine)] = True
        # as arrays: (file, operation, seconds) tuples only when read (64,000 on such a log)
        f.owned = OwnedSeconds(keys.paths, OPERATIONS, np.concatenate(mine),
                               np.concatenate(owned))
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
            f.owned = (f.owned.scaled(scale) if isinstance(f.owned, OwnedSeconds) else
                       [(p, k, sec * scale) for p, k, sec in f.owned if sec * scale > 0])
            f.net_s = keep
            f.beside = ahead[:3]
        left -= keep
        if keep > 0:
            ahead.append(f.key)
