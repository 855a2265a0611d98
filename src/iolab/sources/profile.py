"""iolab profiles -> :class:`iolab.model.raw.RawJob`, the same tables a Darshan log is loaded
into, so ``iolab diagnose`` treats both alike.

Per-process timestamps become job-relative; MPI jobs get shared files reduced (rank -1);
processes of a non-MPI job (fork/exec, multiprocessing) become ranks 0..N-1 by start time.
Records are gathered one by one (a profile holds one process's records per part, and
shared files are reduced record by record), then handed over as columns.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from pathlib import Path
from typing import Any

from iolab import counters as ctr
from iolab.model.raw import RawJob, RawRecord, TraceSegment, TraceTable, tables_from_records
from iolab.sources.profile_format import Part, ProfileData, decode_path, read
from iolab.sources.profile_reduce import reduce_shared

FORMAT_VERSION = "iolab-profile 1"
_DXT = {"POSIX": "DXT_POSIX", "MPI-IO": "DXT_MPIIO"}


def _ranks(parts: list[Part]) -> tuple[dict[int, int], int, bool]:
    """Rank of each part (by position) and the job's process count."""
    mpi = any(p.header.get("mpi") for p in parts)
    if mpi:
        ranks = {i: int(p.header.get("rank", 0)) for i, p in enumerate(parts)}
        nprocs = max([int(p.header.get("nprocs", 1)) for p in parts] + [len(set(ranks.values()))])
        return ranks, nprocs, True
    order = sorted(
        range(len(parts)),
        key=lambda i: (parts[i].header.get("start_unix", 0.0), parts[i].header.get("pid", 0)),
    )
    return {i: r for r, i in enumerate(order)}, max(len(parts), 1), False


def _shift(fc: dict[str, float], offset: float, timestamp_names: set[str]) -> dict[str, float]:
    return {k: (v + offset if k in timestamp_names and v > 0 else v) for k, v in fc.items()}


def _left_out(part: Part) -> dict[str, int]:
    lo = part.header.get("left_out", {})
    return {k: int(v) for k, v in lo.items() if int(v) > 0} if isinstance(lo, dict) else {}


def _add_part(part: Part, rank: int, start: float, tsnames: set[str],
              records: list[RawRecord], trace: list[TraceSegment]) -> None:
    """Append one process's records and trace segments, times made relative to start
    (records reduced at MPI_Finalize carry their own rank -1 and time base)."""
    off = float(part.header.get("start_unix", start)) - start
    by_idx: dict[tuple[str, int], tuple[str, int]] = {}
    for pr in part.records:
        by_idx[(pr.module, pr.idx)] = (pr.path, pr.record_id)
        if pr.merged:
            continue
        shift = off if pr.time_base is None else pr.time_base - start
        records.append(
            RawRecord(
                module=pr.module,
                rank=rank if pr.rank is None else pr.rank,
                record_id=pr.record_id,
                path=pr.path,
                counters=dict(pr.counters),
                fcounters=_shift(pr.fcounters, shift, tsnames),
            )
        )
    for mod, idx, op, o, n, t0, t1 in part.segments:
        if mod in _DXT:
            path, rid = by_idx.get((mod, int(idx)), ("?", 0))
            trace.append(
                TraceSegment(
                    _DXT[mod],
                    rank,
                    path,
                    "write" if op == "w" else "read",
                    int(o),
                    int(n),
                    float(t0) + off,
                    float(t1) + off,
                    rid,
                )
            )


def _losses(part: Part, rank: int, mods: dict[str, ctr.ModuleCounters], job: RawJob) -> None:
    """What a process left out, or a profile cut short by a signal: notes and partial modules."""
    who = f"rank {rank} (pid {part.header.get('pid')})"
    for key, n in _left_out(part).items():
        limit = "iolab's record limit was reached (IOLAB_TRACE_MAX_RECORDS)"
        if key in mods:
            job.partial_modules.append(key)
            job.partial_why.setdefault(key, limit)
        elif key == "segments":
            job.partial_modules.append("DXT_POSIX")
            job.partial_why.setdefault("DXT_POSIX", "iolab's trace limit was reached "
                                                    "(IOLAB_TRACE_SEGMENTS)")
        job.notes.append(
            f"{who}: {n} {key} left out (limit reached; raise "
            "IOLAB_TRACE_MAX_RECORDS / IOLAB_TRACE_SEGMENTS)"
        )
    if part.header.get("partial"):
        job.notes.append(f"{who}: partial profile, ended by {part.header.get('end')}")
        job.partial_modules.extend(mods)
        for mod in mods:  # a crash explains a module before any limit does
            job.partial_why[mod] = ("the run did not finish: the records of ranks cut "
                                    "short by a signal")


# Signals that mean the program crashed (those the tracer's handler writes a profile for);
# SIGTERM and SIGINT end a process from outside (the launcher after another rank's crash,
# a time limit, Ctrl-C).
CRASH_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT")
END_SIGNALS = ("SIGTERM", "SIGINT")


def _ranks_text(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, sorted(ranks)))


def _unfinished(
    job: dict[str, Any], parts: list[Part], ranks: dict[int, int], nprocs: int, raw: RawJob
) -> None:
    """A run that did not finish: ranks killed by a crash signal, ranks ended by SIGTERM or
    SIGINT, ranks that left no profile at all. Said in metadata (``crashed_ranks``
    "1:SIGSEGV,...", ``run_incomplete``, the sentence) and in a note, so that every report
    says the run crashed and what is missing."""
    ends = {ranks[i]: str(p.header.get("end", "")) for i, p in enumerate(parts)
            if p.header.get("partial")}
    crashed = {r: e for r, e in ends.items() if e in CRASH_SIGNALS}
    stopped = sorted(r for r, e in ends.items() if e in END_SIGNALS)
    expected = job.get("np") or nprocs
    missing = sorted(set(range(int(expected))) - set(ranks.values())) if parts else []
    rc = int(job.get("exit_code") or 0)
    killed = rc < 0 or rc > 128
    if not (crashed or stopped or missing or (killed and not parts)):
        return
    said = []
    if crashed:
        said.append("; ".join(f"rank {r} killed by {e}" for r, e in sorted(crashed.items())))
        raw.metadata["crashed_ranks"] = ",".join(f"{r}:{e}" for r, e in sorted(crashed.items()))
    if stopped:
        said.append(f"{_ranks_text(stopped)} ended by "
                    + "/".join(sorted({ends[r] for r in stopped})))
    if missing:
        said.append(f"{_ranks_text(missing)} left no profile (killed without a chance to "
                    "write, e.g. SIGKILL)")
    if not parts:
        said.append(f"no process left a profile (exit status {rc})")
    what = "crashed" if crashed or killed else "did not finish"
    text = (f"the run {what}: {'; '.join(said)}. The counters cover what happened until "
            "then (partial profiles, written by the tracer's signal handler); the rest of the "
            "run is missing and was not judged")
    raw.metadata["run_incomplete"] = text
    raw.notes.insert(0, text)


def _outside_ranks(parts: list[Part]) -> tuple[list[Part], str | None]:
    """An MPI job's ranks, and a note on the processes outside them (the job script's shell,
    the commands it runs, the launcher itself): they carry no rank, and counting their files
    on rank 0 would misplace them, so they are left out of the ranks, as Darshan's MPI log
    leaves them out (its non-MPI mode writes them logs of their own)."""
    if not any(p.header.get("mpi") for p in parts):
        return parts, None
    inside = [p for p in parts if p.header.get("mpi")]
    outside = [p for p in parts if not p.header.get("mpi")]
    if not outside:
        return parts, None
    names = sorted({Path(str((p.header.get("cmdline") or ["?"])[0])).name for p in outside})
    n = sum(1 for p in outside for r in p.records if not r.merged)
    return inside, (f"{len(outside)} process(es) outside the MPI ranks ({', '.join(names)}: "
                    f"the job script and what it runs besides the ranks) left out of the "
                    f"ranks with their {n} record(s) (the profile file keeps them)")


def to_raw_job(data: ProfileData) -> RawJob:
    """The RawJob of a profile read by :func:`iolab.sources.profile_format.read`."""
    parts, outside_note = _outside_ranks(data.parts)
    job = data.job
    mods = ctr.load()
    tsnames = {c.name for mc in mods.values() for c in mc.floats if c.kind == "timestamp"}
    ranks, nprocs, mpi = _ranks(parts)
    starts = [float(p.header.get("start_unix", 0.0)) for p in parts]
    ends = [float(p.header.get("end_unix", 0.0)) for p in parts]
    # The application's processes, not the launcher around them (like Darshan's run time).
    start = min(starts) if starts else float(job.get("start_unix", 0.0))
    end = max(ends) if ends else float(job.get("end_unix", start))
    cmd = job.get("cmdline") or (parts[0].header.get("cmdline") if parts else [])
    hosts = sorted({str(p.header.get("host", "")) for p in parts} - {""})
    raw = RawJob(
        source="iolab-profile",
        source_paths=list(data.sources),
        nprocs=nprocs,
        start_time=start,
        end_time=end,
        run_time_s=max(end - start, 0.0),
        exe=shlex.join(cmd) if isinstance(cmd, list) else str(cmd),
        jobid=str(job.get("jobid") or (parts[0].header.get("jobid", "") if parts else "")),
        uid=int(parts[0].header["uid"]) if parts and "uid" in parts[0].header else None,
        nodes=len(hosts) or None,
        hosts=hosts,
        rank_hosts={ranks[i]: str(p.header["host"]) for i, p in enumerate(parts)
                    if p.header.get("host")},
        host_cpus=({str(job["host"]): int(job["host_cpus"])}
                   if job.get("host") and job.get("host_cpus") else {}),
        format_version=FORMAT_VERSION,
        metadata=_metadata(job, parts),
        notes=list(data.notes) + ([outside_note] if outside_note else []),
    )
    records: list[RawRecord] = []
    trace: list[TraceSegment] = []
    for i, part in enumerate(parts):
        _add_part(part, ranks[i], start, tsnames, records, trace)
        _losses(part, ranks[i], mods, raw)
    raw.partial_modules = sorted(set(raw.partial_modules))
    _unfinished(job, parts, ranks, nprocs, raw)
    if mpi and nprocs > 1:
        records = _reduce(records, nprocs, mods)
    raw.tables = tables_from_records(records)
    raw.trace_table = TraceTable.from_segments(trace) if trace else None
    return raw


def _metadata(job: dict[str, Any], parts: list[Part]) -> dict[str, str]:
    """Job key=value pairs: exit code, launch line, and the MPI-IO hints in effect at open
    (``hints:<path>`` -> ``key=value;...``, as the lowest rank that opened the file saw them)."""
    meta = {"tool": "iolab profile"}
    for key in ("exit_code", "np", "trace"):
        if job.get(key) is not None:
            meta[key] = str(job[key])
    if job.get("launch"):
        meta["launch"] = shlex.join(str(a) for a in job["launch"])
    for part in sorted(parts, key=lambda p: int(p.header.get("rank", 0))):
        hints = part.header.get("hints")
        if isinstance(hints, dict):
            for path, text in hints.items():
                if text:
                    meta.setdefault(f"hints:{decode_path(path)}", str(text))
    return meta


def _reduce(
    records: list[RawRecord], nprocs: int, mods: dict[str, ctr.ModuleCounters]
) -> list[RawRecord]:
    groups: dict[tuple[str, str], list[RawRecord]] = defaultdict(list)
    for r in records:
        groups[(r.module, r.path)].append(r)
    out: list[RawRecord] = []
    for (mod, _path), recs in groups.items():
        if len({r.rank for r in recs}) == nprocs and len(recs) == nprocs and mod in mods:
            out.append(reduce_shared(recs, mods[mod]))
        else:
            out.extend(recs)
    return out


def load(path: str | Path) -> RawJob:
    """Load an iolab profile (job file, part, or folder of parts) as a RawJob."""
    return to_raw_job(read(path))
