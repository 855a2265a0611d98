"""How many stripes a file should get, computed from the job's own numbers and the centres'
guidance, with the origin of every number (it goes into the fix's comment).

- By file size, NERSC's Lustre striping guidance (the page the Cori KNL best practices point
  to, "General Lustre striping ... still apply"): under 1 GB one stripe, 1-10 GB 8, 10-100 GB
  24, 100 GB-1 TB 72, more 144 (KAUST's WRF run: 144 OSTs, I/O 12x faster).
- By writers: an OST serves its writers in turn, and a stripe nobody writes to in parallel
  buys nothing: no more stripes than the processes that write the file at the POSIX layer.
  For collective MPI-IO those are the aggregators (``cb_nodes`` from the log's hints, else
  ROMIO's default of one per node, CSC: "by default there is one MPI I/O aggregator per
  compute node"); for independent I/O the ranks that write it.
- Never fewer stripes than the file already has (the fix is "more stripes"; a file already
  as wide is left alone), at least 2 for a shared file on one OST (the smallest change that
  spreads it: CSC's BTIO doubled from 1 to 2 OSTs).
- Never more than the OSTs the file system has: the log proves at least as many as its
  highest OST index + 1 (or the widest layout it saw); above that the script asks ``lfs df``
  when it runs and takes the smaller number.
- Files larger than 100 GB must be striped whatever the writers (KAUST: they fill single
  OSTs): the size's count alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose.jobfacts import job_facts

if TYPE_CHECKING:
    from iolab.model.job import Model

GB = 10**9
# NERSC: (upper bound of the file size, stripe count), the last row for everything larger.
BY_SIZE = ((1 * GB, 1), (10 * GB, 8), (100 * GB, 24), (1000 * GB, 72), (None, 144))


def count_by_size(size: int) -> tuple[int, str]:
    """NERSC's stripe count for a file of ``size`` bytes, and where it comes from."""
    lo = 0
    for hi, count in BY_SIZE:
        if hi is None or size < hi:
            span = f"{lo // GB}-{hi // GB} GB" if hi else f"over {lo // GB} GB"
            return count, f"{count} by size ({size / GB:.1f} GB, in NERSC's {span} row)"
        lo = hi
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class StripeCount:
    """The stripe count for one file, and why."""

    count: int  # stripes wanted (before the run-time OST check)
    current: int  # stripes the file has now (0: not in the log)
    osts_known: int  # the log proves the file system has at least this many OSTs
    reasons: tuple[str, ...]  # where each number came from, in order

    @property
    def ask_lfs_df(self) -> bool:
        """The log does not prove the file system has ``count`` OSTs: ask ``lfs df``."""
        return self.count > self.osts_known

    @property
    def comment(self) -> str:
        ost = (f"at most the OSTs `lfs df` shows when the script runs (the log saw "
               f"{self.osts_known})" if self.ask_lfs_df else
               f"the log saw at least {self.osts_known} OSTs")
        return "; ".join((*self.reasons, ost))


def _writers(model: Model, i: int) -> tuple[int | None, str]:
    """Processes that write file ``i`` at the POSIX layer, and how that was found (None:
    unknown)."""
    f = model.files
    path = f.paths[i]
    calls = model.layers.calls.of("write")
    collective = int(calls["COLL"][i] + calls["SPLIT"][i]) > 0
    ranks = int(f.nranks[i])
    if collective:
        hints = model.job.hints.get(path, {})
        cb = hints.get("cb_nodes", "")
        if cb.isdigit() and int(cb) > 0:
            return min(int(cb), max(ranks, 1)), f"{cb} aggregators (cb_nodes in the log's hints)"
        nodes = job_facts(model).nodes
        if nodes:
            per = hints.get("cb_config_list", "*:1").partition(":")[2]
            per_node = int(per) if per.isdigit() and int(per) > 0 else 1
            k = min(nodes * per_node, max(ranks, 1))
            return k, (f"{k} aggregators: collective writes, {per_node} per node on {nodes} "
                       "node(s) (ROMIO's default is one per node, CSC)")
        return (ranks or None), (f"{ranks} ranks write it collectively (node count unknown: "
                                 "the aggregators are at most these)")
    if ranks > 0:
        return ranks, f"{ranks} ranks write it"
    return None, "writers unknown"


def stripe_count(model: Model, i: int, *, by_writers: bool = True,
                 at_least: int = 1) -> StripeCount:
    """The stripe count for file ``i`` of ``model`` (``by_writers``: capped by the
    processes that write it; ``at_least``: the smallest count that changes anything)."""
    facts = job_facts(model)
    px = model.layers.posix
    size = int(max(px.max_byte["write"][i], px.max_byte["read"][i]) + 1)
    want, why = count_by_size(max(size, 0))
    reasons = [why]
    if by_writers:
        w, how = _writers(model, i)
        if w is not None and w < want:
            want = w
            reasons.append(f"{w} by writers: {how}")
        else:
            reasons.append(f"writers do not lower it: {how}")
    if want < at_least:
        want = at_least
        reasons.append(f"at least {at_least} (the smallest change off one OST; CSC: 1 -> 2 "
                       "OSTs doubled BTIO)")
    cur = facts.layouts.get(model.files.paths[i], (0, 0))[1]
    if cur > want:
        reasons.append(f"never fewer than the {cur} it has")
    return StripeCount(count=max(want, cur, 1), current=cur, osts_known=facts.osts_known,
                       reasons=tuple(reasons))


def stripe_counts(model: Model, sel: np.ndarray, **kw: object) -> dict[str, StripeCount]:
    """:func:`stripe_count` of every selected file, by path."""
    return {model.files.paths[i]: stripe_count(model, int(i), **kw)  # type: ignore[arg-type]
            for i in np.nonzero(sel)[0]}
