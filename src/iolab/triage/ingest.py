"""Read the new logs into the store: on a process pool by default (or Dask: scale.py), in
batches.

A log already stored is skipped by its (path, size, modification time) without being opened,
else by its content hash (a copy or a renamed log is not read twice). Logs are handed to
the reader in the order found and come back in that order; they are written here, a batch
at a time, so a killed run loses at most the batch in flight and the next run goes on from
there. If the reader is lost mid-run (a Dask cluster gone), what came back is written first.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iolab.triage import store
from iolab.triage.discover import Found, stat_key
from iolab.triage.read import STATUS_READ
from iolab.triage.scale import PoolReader, Reader, ReaderLost, default_jobs

if TYPE_CHECKING:
    from iolab.triage.anonymize import Plan

BATCH_LOGS = 64  # logs per batch written: the most a kill can lose
__all__ = ["default_jobs", "ingest", "Ingested"]  # default_jobs: kept importable here


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


def ingest(found: Found, where: Path, reader: Reader | int,
           progress: Callable[[str], None] | None = None,
           batch_logs: int = BATCH_LOGS, anonymize: Plan | None = None) -> Ingested:
    """Read every log of ``found`` that the store does not have yet into the store, with
    ``reader`` (a number: a process pool of that many); ``anonymize``: every name hashed
    here, in this process, before it is stored (iolab.triage.anonymize)."""
    if isinstance(reader, int):
        reader = PoolReader(reader)
    t0 = time.monotonic()
    out = Ingested(found=len(found.logs), skipped_files=found.skipped)
    anon = None
    if anonymize is None:
        store.open_store(where)
    else:
        from iolab.triage.anonymize import prepare_store

        prepare_store(where, anonymize)
        anon = anonymize.anonymizer
    out.orphans_removed = store.remove_orphans(where)
    stats, keys = store.known(where)
    todo = []
    for p in found.logs:
        try:
            size, mtime = stat_key(p)
        except OSError:
            todo.append(str(p))  # missing: read_log makes its row (once: by its key)
            continue
        stored_as = str(p) if anon is None else anon.source_path(str(p))
        if (stored_as, size, mtime) in stats:
            out.already += 1
        else:
            todo.append(str(p))
    seen = set(keys)
    batch_jobs: list[dict[str, Any]] = []
    batch_findings: list[dict[str, Any]] = []
    batch_files: list[dict[str, Any]] = []

    def flush() -> None:
        # the one place a batch is written: its three tables together, whatever ended it
        if batch_jobs:
            store.write_batch(where, batch_jobs, batch_findings, batch_files)
        batch_jobs.clear()
        batch_findings.clear()
        batch_files.clear()
    last_note = time.monotonic()
    results = enumerate(reader.results(todo, keys), 1)
    while True:
        try:
            n, res = next(results)
        except StopIteration:
            break
        except ReaderLost as exc:
            flush()  # read and returned: never lost (files rows too: they were once left out)
            out.seconds = time.monotonic() - t0
            exc.done = out
            raise
        if anon is not None and not res.duplicate:
            anon.result(res)  # before the key is compared: a missing log's key names it
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
            flush()
        if progress is not None and (time.monotonic() - last_note >= 2 or n == len(todo)):
            last_note = time.monotonic()
            progress(_progress_line(n, len(todo), time.monotonic() - t0))
    flush()
    out.seconds = time.monotonic() - t0
    return out


def _progress_line(done: int, total: int, elapsed: float) -> str:
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else 0.0
    return f"read {done}/{total} logs ({rate:.1f} logs/s, {left:.0f} s left)"


def stderr_progress(line: str) -> None:
    print(f"iolab triage: {line}", file=sys.stderr, flush=True)
