"""Several logs on one command line: which of them are one job.

Logs are one job only when they belong together: the same job id (and user), written within
a day of each other (schedulers and Darshan's PID-based ids recycle numbers). Anything else
is diagnosed alone, and one line says so; ``--as-one-job`` merges them on request,
``--each`` splits even logs of one job. Merging unrelated jobs made nonsense: "5 processes,
136968806 s" for logs years apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from iolab.model.raw import RawJob

SAME_JOB_MAX_GAP_S = 86400.0  # logs of one job id further apart than this are two jobs
_NO_ID = ("", "0", "-1")


def _key(raw: RawJob) -> tuple[str, int | None] | None:
    jobid = str(raw.jobid).strip()
    return None if jobid in _NO_ID else (jobid, raw.uid)


def _joins(group: list[RawJob], raw: RawJob) -> bool:
    start = min(r.start_time for r in group) - SAME_JOB_MAX_GAP_S
    end = max(r.end_time for r in group) + SAME_JOB_MAX_GAP_S
    return _key(group[0]) == _key(raw) and start <= raw.start_time <= end


def group_logs(raws: Sequence[RawJob], as_one_job: bool = False, each: bool = False
               ) -> tuple[list[list[RawJob]], str]:
    """The logs grouped into jobs (in the order given) and a one-line note ("" when there is
    nothing to say)."""
    raws = list(raws)
    if len(raws) <= 1:
        return [raws], ""
    if each:
        return [[r] for r in raws], ""
    ids = sorted({str(r.jobid) or "none" for r in raws})
    if as_one_job:
        note = "" if len(ids) == 1 else (
            f"{len(raws)} logs of {len(ids)} job ids ({_list(ids)}) merged into one job as "
            "asked (--as-one-job)")
        return [raws], note
    groups: list[list[RawJob]] = []
    for r in raws:
        home = next((g for g in groups if _key(r) is not None and _joins(g, r)), None)
        if home is None:
            groups.append([r])
        else:
            home.append(r)
    if len(groups) == 1:
        return groups, ""
    return groups, (f"{len(raws)} logs are {len(groups)} different jobs (job ids {_list(ids)}):"
                    " each job is diagnosed alone; --as-one-job merges them")


def _list(ids: list[str], most: int = 5) -> str:
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")
