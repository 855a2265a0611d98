"""Several logs of one job (a workflow): how their times add up.

Logs that ran one after the other add their I/O times; logs that ran at the same time (the
processes of one step) overlap, so within a group of overlapping logs only the slowest
counts. The run time adds up the same way: the span of each group of overlapping logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LogSpan:
    """One log of a job: where its ranks sit in the model and when it ran."""

    source: str
    jobid: str
    exe: str
    start_time: float  # Unix seconds
    end_time: float
    run_time_s: float
    first_rank: int  # its rank r is the model's rank first_rank + r
    nprocs: int


def overlapping_groups(spans: Sequence[LogSpan]) -> list[list[int]]:
    """Indices of ``spans`` grouped into runs of logs whose time intervals overlap."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i].start_time, spans[i].end_time))
    groups: list[list[int]] = []
    end = float("-inf")
    for i in order:
        s = spans[i]
        if groups and s.start_time < end:
            groups[-1].append(i)
            end = max(end, s.end_time)
        else:
            groups.append([i])
            end = s.end_time
    return groups


def log_io_times(spans: Sequence[LogSpan], rank_io_time_s: Any) -> list[float]:
    """Each log's own I/O time: its slowest rank's (ranks ``first_rank`` onwards)."""
    return [float(rank_io_time_s[s.first_rank:s.first_rank + s.nprocs].max(initial=0.0))
            for s in spans]


def workflow_run_time(spans: Sequence[LogSpan]) -> float:
    """The time the workflow's processes ran: the span of each group of overlapping logs,
    summed (idle time between logs that ran one after another is not run time)."""
    total = 0.0
    for g in overlapping_groups(spans):
        total += max(spans[i].end_time for i in g) - min(spans[i].start_time for i in g)
    return max(total, 0.0)


def workflow_io_time(spans: Sequence[LogSpan], io_time_s: Sequence[float]) -> float:
    """The workflow's I/O time from each log's own (slowest rank's) I/O time: the slowest
    of each group of overlapping logs, summed over the groups that ran one after another."""
    return sum(max(io_time_s[i] for i in g) for g in overlapping_groups(spans))
