"""Read the new logs into the store: on a process pool by default, in batches.

A log already stored is skipped by its (path, size, modification time) without being opened,
else by its content hash (a copy or a renamed log is not read twice). Logs are handed to
the pool in the order found; results are written as they come back, a batch at a time, so
a killed run loses at most the batch in flight and the next run goes on from there.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.triage import store
from iolab.triage.discover import Found, stat_key
from iolab.triage.read import STATUS_READ, LogResult, read_log

BATCH_LOGS = 64  # logs per batch written: the most a kill can lose


@dataclass
class Ingested:
    found: int = 0
    skipped_files: int = 0  # files in the folders that are not logs
    already: int = 0  # stored by an earlier run
    read: int = 0  # new logs read
    unreadable: int = 0  # new logs that could not be read (rows with a reason)
    duplicates: int = 0  # same content as a stored log or one read earlier in this run
    orphans_removed: int = 0
    seconds: float = 0.0


_KNOWN: frozenset[str] = frozenset()


def _init_worker(known_hashes: frozenset[str]) -> None:
    global _KNOWN  # one copy per worker, set once, instead of one per log sent
    _KNOWN = known_hashes


def _read_in_worker(path_text: str) -> LogResult:
    return read_log(path_text, _KNOWN)


def _results(paths: list[str], jobs: int, known_hashes: frozenset[str]) -> Iterator[LogResult]:
    if jobs <= 1 or len(paths) <= 1:
        for p in paths:
            yield read_log(p, known_hashes)
        return
    # forkserver: the workers do not inherit the parent's threads (pyarrow's pools), which a
    # plain fork would copy in an unknown state.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                initargs=(known_hashes,)) as pool:
        # a bounded window of logs in flight: a 100,000-log run does not queue every future
        window = jobs * 4
        pending: set[cf.Future[LogResult]] = set()
        todo = iter(paths)
        for p in todo:
            pending.add(pool.submit(_read_in_worker, p))
            if len(pending) >= window:
                done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                yield from (f.result() for f in done)
        for f in cf.as_completed(pending):
            yield f.result()


def ingest(found: Found, where: Path, jobs: int, progress: Callable[[str], None] | None = None,
           batch_logs: int = BATCH_LOGS) -> Ingested:
    """Read every log of ``found`` that the store does not have yet into the store."""
    t0 = time.monotonic()
    out = Ingested(found=len(found.logs), skipped_files=found.skipped)
    store.open_store(where)
    out.orphans_removed = store.remove_orphans(where)
    stats, keys = store.known(where)
    todo = []
    for p in found.logs:
        try:
            size, mtime = stat_key(p)
        except OSError:
            todo.append(str(p))  # missing: read_log makes its row (once: by its key)
            continue
        if (str(p), size, mtime) in stats:
            out.already += 1
        else:
            todo.append(str(p))
    seen = set(keys)
    batch_jobs: list[dict[str, Any]] = []
    batch_findings: list[dict[str, Any]] = []
    batch_files: list[dict[str, Any]] = []
    last_note = time.monotonic()
    for n, res in enumerate(_results(todo, jobs, keys), 1):
        if res.duplicate or res.job["job_key"] in seen:
            out.duplicates += 1
        else:
            seen.add(res.job["job_key"])
            batch_jobs.append(res.job)
            batch_findings.extend(res.findings)
            batch_files.extend(res.files)
            if res.job["status"] == STATUS_READ:
                out.read += 1
            else:
                out.unreadable += 1
        if len(batch_jobs) >= batch_logs:
            store.write_batch(where, batch_jobs, batch_findings, batch_files)
            batch_jobs, batch_findings, batch_files = [], [], []
        if progress is not None and (time.monotonic() - last_note >= 2 or n == len(todo)):
            last_note = time.monotonic()
            progress(_progress_line(n, len(todo), time.monotonic() - t0))
    if batch_jobs:
        store.write_batch(where, batch_jobs, batch_findings, batch_files)
    out.seconds = time.monotonic() - t0
    return out


def _progress_line(done: int, total: int, elapsed: float) -> str:
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else 0.0
    return f"read {done}/{total} logs ({rate:.1f} logs/s, {left:.0f} s left)"


def default_jobs() -> int:
    """The pool's size by default: the cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


def stderr_progress(line: str) -> None:
    print(f"iolab triage: {line}", file=sys.stderr, flush=True)
