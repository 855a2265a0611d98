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

import numpy as np

from iolab.diagnose.rules.base import Finding
from iolab.model.files import APP
from iolab.model.job import Model
from iolab.model.tables import unique_rows

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
    pools = TimePools()
    paths = model.files.paths
    app = np.nonzero(model.files.category == APP)[0]
    below = L.posix.present | L.stdio.present
    # Columns become lists once, then one pass per file: indexing numpy arrays element by
    # element cost seconds on a 64,000-file log. Same float64 arithmetic, same order.
    for lay, alone in ((L.posix, False), (L.stdio, False), (L.mpiio, True)):
        total = lay.time_s["read"] + lay.time_s["write"] + lay.time_s["meta"]
        rows = app[~(total[app] <= 0) & ~(below[app] & alone)]
        slow, tot = lay.slowest_rank_time_s[rows].tolist(), total[rows].tolist()
        shares = [(k, lay.time_s[k][rows].tolist()) for k in ("read", "write", "meta")]
        for j, i in enumerate(rows.tolist()):
            path = paths[i]
            for k, part in shares:
                sec = slow[j] * part[j] / tot[j]
                pools.seconds[(path, k)] = max(pools.seconds.get((path, k), 0.0), sec)
    mpiio_t, posix_t = (L.mpiio.slowest_rank_time_s[app].tolist(),
                        L.posix.slowest_rank_time_s[app].tolist())
    lib_t, in_lib = L.library_slowest_rank_time_s[app].tolist(), L.library[app].tolist()
    mpiio_below = (L.mpiio.present & below)[app].tolist()
    for j, i in enumerate(app.tolist()):
        wait = mpiio_t[j] - posix_t[j]
        if mpiio_below[j] and wait > 0:
            pools.seconds[(paths[i], "wait")] = wait
        lib = lib_t[j] - max(mpiio_t[j], posix_t[j])
        if in_lib[j] and lib > 0:
            pools.seconds[(paths[i], "library")] = lib
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
    pair = unique_rows(np.stack([files, ranks], axis=1))
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
    stands for (a group: its claims' own operations, then those they spill into)."""

    keys: dict[Key, float]
    gross: float


def _wants(f: Finding, pools: TimePools) -> list[_Want]:
    """The finding's gross cost as shares of its claimed pools: first its claims' own
    operations (the share its gross is of the slowest rank's time in them), then, for what
    exceeds them, the operations they spill into."""
    gross = max(f.gross_s or 0.0, 0.0)
    claims = f.hit.claimed()
    out = []
    for group in (0, 1):
        keys = [(p, k) for p, kind in claims for k in COVERS.get(kind, (OPERATIONS, ()))[group]]
        if not keys or gross <= 0:
            continue
        time = pools.slowest_rank_time(keys)
        if time <= 0:
            continue
        part = min(gross, time)
        share = part / time
        out.append(_Want({k: share * pools.seconds.get(k, 0.0) for k in dict.fromkeys(keys)},
                         part))
        gross -= part
    return out


def _with_claimed_files(pools: TimePools, findings: list[Finding]) -> TimePools:
    """The pools, and for each claimed file the model has no time for (no model: the
    attribution of bare findings) its largest claim spread evenly over its operations."""
    known = {p for p, _ in pools.seconds}
    out = TimePools(dict(pools.seconds), dict(pools.rank))
    for f in findings:
        claims = f.hit.claimed()
        for p, kind in claims:
            if p in known:
                continue
            first = COVERS.get(kind, (OPERATIONS, ()))[0]
            each = max(f.gross_s or 0.0, 0.0) / len(claims) / len(first)
            for k in first:
                out.seconds[(p, k)] = max(out.seconds.get((p, k), 0.0), each)
    return out


def attribute_time(findings: list[Finding], order: dict[str, int],
                   pools: TimePools | None = None, io_time_s: float | None = None) -> None:
    """Set each waste finding's net cost (``net_s``), what it owns (``owned``) and whose
    seconds it found taken (``same_time_as``); see the module's text."""
    # A bound (Hit.cost_bound) owns no seconds: its time may belong to anything else.
    problems = [f for f in findings if not f.rule.overview and f.rule.severity != "info"
                and not f.rule.experiment and not f.hit.cost_bound and (f.gross_s or 0.0) > 0]
    full = _with_claimed_files(pools or TimePools(), problems)
    left = TimePools(dict(full.seconds), full.rank)
    owners: dict[Key, list[str]] = {}
    problems.sort(key=lambda f: (TIERS.index(f.rule.tier), -(f.gross_s or 0.0),
                                 order[f.rule.id]))
    for f in problems:
        if not f.hit.claimed():  # no file named (a rank's or the job's time): all its own
            f.net_s, f.same_time_as, f.owned = f.gross_s, [], [("", "*", f.gross_s or 0.0)]
            continue
        _take(f, _wants(f, full), left, owners)
    if io_time_s is not None:
        _within_io_time(problems, io_time_s)
    _experiment_ranges(findings, full, left)


def _experiment_ranges(findings: list[Finding], full: TimePools, left: TimePools) -> None:
    """Each experiment's worst plausible gain: its estimate on the seconds of its claims the
    waste findings left (nothing is taken: an experiment owns no time)."""
    exps = [f for f in findings if f.rule.experiment and (f.gross_s or 0.0) > 0]
    if not exps:
        return
    full_e, left_e = _with_claimed_files(full, exps), _with_claimed_files(left, exps)
    for f in exps:
        if not f.hit.claimed():
            continue  # a rank's or the job's time: no waste finding names it
        low = 0.0
        for want in _wants(f, full_e):
            asked = sum(want.keys.values())
            if asked > 0:
                got = sum(min(sec, left_e.seconds.get(k, 0.0)) for k, sec in want.keys.items())
                low += want.gross * got / asked
        f.estimate_low_s = min(low, f.gross_s or 0.0)


def _take(f: Finding, wants: list[_Want], left: TimePools, owners: dict[Key, list[str]]) -> None:
    net, shared = 0.0, []
    f.owned = []
    for want in wants:
        asked = sum(want.keys.values())
        if asked <= 0:
            continue
        got = 0.0
        # names bound once: this loop runs once per (file, operation) a finding claims
        seconds, owned, fkey = left.seconds, f.owned, f.key
        for key, sec in want.keys.items():
            take = min(sec, seconds.get(key, 0.0))
            if take < sec * 0.995:
                shared += owners.get(key, [])
            if take <= 0:
                continue
            seconds[key] -= take
            got += take
            owned.append((key[0], key[1], take * want.gross / asked))
            holders = owners.setdefault(key, [])
            if fkey not in holders:
                holders.append(fkey)
        net += want.gross * got / asked
    gross = f.gross_s or 0.0
    if abs(net - gross) <= 1e-9 * max(gross, 1.0):
        net = gross  # all of it, not a rounding of the shares
    f.net_s = net
    f.same_time_as = list(dict.fromkeys(o for o in shared if o != f.key))


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
