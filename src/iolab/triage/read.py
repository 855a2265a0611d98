"""One log -> one job row and its finding rows: the work each process of the pool does.

Everything here runs in a worker (or in the command's own process with ``-j 1``) and returns
plain data (:class:`LogResult`), so the pool sends back a few hundred bytes, never a model.
A log that cannot be read (empty, cut, corrupt, missing) is a row with ``status`` =
``unreadable`` and the reason, never an exception.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab import __version__
from iolab.errors import UsageError
from iolab.triage.discover import content_hash, stat_key

STATUS_READ = "read"
STATUS_UNREADABLE = "unreadable"
UNKNOWN_DAY = "unknown"


@dataclass
class LogResult:
    job: dict[str, Any]
    findings: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)  # its costliest files per layer
    duplicate: bool = False  # its content is already in the store: nothing to write
    mounts: list[str] = field(default_factory=list)  # the log's mount points (--anonymize)

    @property
    def day(self) -> str:
        return str(self.job["day"])


def day_of(start_unix_s: float | None) -> str:
    """The store's partition: the UTC day of the job's start."""
    if start_unix_s is None:
        return UNKNOWN_DAY
    return _dt.datetime.fromtimestamp(start_unix_s, tz=_dt.timezone.utc).strftime("%Y-%m-%d")


def application(exe: str) -> str:
    """The application a job ran: its executable's base name, without the arguments."""
    first = exe.strip().split(" ", 1)[0] if exe.strip() else ""
    return os.path.basename(first) or "(unknown)"


def _empty_job(path: Path) -> dict[str, Any]:
    return {"job_key": "", "source_path": str(path), "source_kind": "", "file_size": None,
            "file_mtime_ns": None, "status": STATUS_UNREADABLE, "reason": None, "job_id": None,
            "uid": None, "exe": None, "application": None, "nprocs": None, "nodes": None,
            "nodes_source": "unknown", "start_unix_s": None, "end_unix_s": None,
            "run_time_s": None, "io_time_s": None, "waste_s": None, "bytes_read": None,
            "bytes_written": None, "mpi_library": None, "format_version": None,
            "read_time_s": None, "iolab_version": __version__, "day": UNKNOWN_DAY}


# A log's reader that has not answered in this long is stopped and the log is a row with the
# reason (libdarshan-util looping on a damaged log, a file system that stopped answering):
# one such log never stops a centre's run. The biggest real logs (GBs of DXT) read in
# minutes here; a second per MiB on top keeps them clear of it. --log-time-limit overrides.
LIMIT_BASE_S = 600.0
LIMIT_S_PER_MIB = 1.0


def time_limit_s(size: int, given: float | None = None) -> float:
    """The seconds a log of ``size`` bytes may take to read: ``given`` (--log-time-limit),
    else by its size."""
    if given is not None:
        return given
    return LIMIT_BASE_S + LIMIT_S_PER_MIB * size / (1 << 20)


def read_log(path_text: str, known_hashes: frozenset[str] = frozenset(),
             isolate: bool = True, given_limit_s: float | None = None) -> LogResult:
    """Read one log (Darshan or iolab profile), diagnose it, and return its rows.
    ``isolate=False``: libdarshan-util reads in this process, no fork: only in a process
    whose crash the caller survives (a pool worker, a Dask task; iolab.triage.scale), and
    which the caller stops when it hangs. Else the forked reader is stopped at the log's
    time limit (:func:`time_limit_s`; ``given_limit_s``: --log-time-limit)."""
    path = Path(path_text)
    job = _empty_job(path)
    t0 = time.perf_counter()
    try:
        size, mtime = stat_key(path)
        key = content_hash(path)
    except OSError as exc:
        job["job_key"] = "missing:" + str(path)
        job["reason"] = f"cannot open ({exc.strerror or exc})"
        return LogResult(job)
    job.update(job_key=key, file_size=size, file_mtime_ns=mtime)
    if key in known_hashes:
        return LogResult(job, duplicate=True)
    if size == 0:
        job["reason"] = "empty file (0 bytes)"
        return LogResult(job)
    mounts: list[str] = []
    try:
        findings, files = _read_and_diagnose(path, job, mounts, isolate,
                                             time_limit_s(size, given_limit_s))
    except UsageError as exc:
        job["reason"] = _without_path(str(exc), path)
        return LogResult(job)
    except Exception as exc:  # noqa: BLE001 - one bad log never stops the others
        job["reason"] = f"cannot analyse ({type(exc).__name__}: {exc})"
        return LogResult(job)
    job["read_time_s"] = round(time.perf_counter() - t0, 6)
    return LogResult(job, findings, files, mounts=mounts)


def _without_path(message: str, path: Path) -> str:
    """The loader's one line names the file; the row has the path in its own column."""
    for prefix in (f"{path}: ", f"{path} "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def _nodes(raw: Any, model: Any) -> tuple[int | None, str]:
    """The job's node count and where it comes from; None when nothing in the log says."""
    if raw.nodes:
        return int(raw.nodes), "log"
    if raw.hosts:
        return len(set(raw.hosts)), "hosts"
    if model.job.nodes:
        return int(model.job.nodes), "trace-hosts"  # every rank's host, from DXT
    return None, "unknown"


@functools.cache
def _rules() -> list[Any]:
    """diagnose's rules, built once a process: registry() builds them on each call, 0.7 ms
    CPU of the ~12.5 ms a small log-farm log takes in a worker (measured on a loaded
    machine); the rules are frozen dataclasses with stateless predicates, so one list
    serves every log (the same rows stored, checked on 83 log-farm logs)."""
    # deferred: the diagnosis (numpy) only where logs are read, not at triage --help or report
    from iolab.diagnose.rules import registry

    return registry()


def _read_and_diagnose(path: Path, job: dict[str, Any], mounts: list[str], isolate: bool,
                       limit_s: float | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    # deferred: the readers, model and diagnosis (numpy) only where logs are read
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import judge
    from iolab.model.job import build_model
    from iolab.model.mpilib import mpi_library
    from iolab.sources import load_source
    from iolab.triage.columns import job_columns

    raw = load_source(path, isolate=isolate, limit_s=limit_s)
    model = build_model([raw])
    # findings only: no report summary, no fix of an overview finding (none is stored)
    findings, _ = judge(model, Thresholds(), _rules(), overview_fixes=False)
    m, j = model.metrics, model.job
    mounts.extend(point for point, _ in j.mounts)
    nodes, nodes_source = _nodes(raw, model)
    job.update(
        source_kind=raw.source, status=STATUS_READ, job_id=raw.jobid or None, uid=raw.uid,
        exe=j.exe, application=application(j.exe), nprocs=int(j.nprocs), nodes=nodes,
        nodes_source=nodes_source, start_unix_s=float(j.start_time),
        end_unix_s=float(j.end_time), run_time_s=round(float(j.run_time_s), 6),
        io_time_s=round(float(m.io_time_s), 6), bytes_read=int(m.bytes_by_dir["read"]),
        bytes_written=int(m.bytes_by_dir["write"]), mpi_library=mpi_library(model).label,
        format_version=raw.format_version or None, day=day_of(j.start_time))
    layer_cols, files = job_columns(model, job["job_key"], job["day"])
    job.update(layer_cols)
    rows = []
    for f in findings:
        if f.rule.overview:
            continue  # the job's I/O share itself: the jobs table has io_time_s
        rows.append({
            "job_key": job["job_key"], "rule_id": f.rule.id, "direction": f.hit.direction or None,
            "kind": "experiment" if f.rule.experiment else "waste", "tier": f.rule.tier,
            "severity": f.severity,
            # an upper bound is no owned time: not in the job's summed waste
            "net_cost_s": None if f.cost_s is None or f.hit.cost_bound
            else round(float(f.cost_s), 6),
            "estimated_gain_s": None if f.estimate_s is None else round(float(f.estimate_s), 6),
            "title": f.rule.title, "fix_text": f.fix.text, "day": job["day"]})
    job["waste_s"] = round(sum(r["net_cost_s"] or 0.0 for r in rows if r["kind"] == "waste"), 6)
    return rows, files
