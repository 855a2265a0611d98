"""A killed ``iolab triage`` loses at most the batch in flight and the next run completes the
store; the real corpus is read whole, every log a row."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import corpus
import pytest
from logfarm import make_centre

from iolab.cli import main
from iolab.triage import store

REPO = Path(__file__).resolve().parents[2]


def _report(where: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["triage", "--store", str(where), "--json"]) == 0
    return capsys.readouterr().out


def test_a_killed_run_resumes_and_loses_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Expected: after SIGKILL mid-run (and a batch whose jobs file was never written), the
    next run reads only what is missing and the report is the uninterrupted run's."""
    centre = make_centre(tmp_path / "logs", scale=3)
    where = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "iolab", "triage", str(centre.root),
                             "--store", str(where), "-j", "1", "--batch", "2", "-q"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(store.files(where, "jobs")) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline, "no batch written in 120 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    stored = store.files(where, "jobs")
    assert stored and len(stored) < len(centre.logs)
    # the state a kill between a batch's findings and its jobs files leaves
    batch = stored[-1].stem
    for p in store.files(where, "jobs"):
        if p.stem == batch:
            p.unlink()
    capsys.readouterr()
    assert main(["triage", str(centre.root), "--store", str(where), "-j", "1"]) == 0
    err = capsys.readouterr().err
    assert "already stored" in err and " 0 already stored" not in err
    resumed = _report(where, capsys)
    clean = tmp_path / "clean"
    assert main(["triage", str(centre.root), "--store", str(clean), "-j", "1", "-q"]) == 0
    assert resumed == _report(clean, capsys)
    doc = json.loads(resumed)
    assert doc["logs"]["stored"] == len(centre.logs) + len(centre.bad)
    # no finding of the removed batch is left behind
    batches = {p.stem for p in store.files(where, "jobs")}
    assert {p.stem for p in store.files(where, "findings")} <= batches


@corpus.needs_real_logs
def test_every_log_of_the_real_corpus_is_a_row(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    where = tmp_path / "store"
    assert main(["triage", str(corpus.REAL_LOGS_DIR), "--store", str(where), "-q"]) == 0
    rows = pq.read_table(where / "jobs").to_pylist()
    by_path = {r["source_path"]: r for r in rows}
    keys = {r["job_key"] for r in rows}
    from iolab.triage.discover import content_hash

    for log in corpus.REAL_LOGS:
        row = by_path.get(os.path.abspath(log))
        # a log with the same bytes as another is one row (read once), under the other path
        assert row is not None or content_hash(log) in keys, log
        if row is not None:
            assert row["status"] in ("read", "unreadable")
            assert (row["status"] == "read") == (row["reason"] is None), row
    capsys.readouterr()
    assert main(["triage", "--store", str(where), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["logs"]["stored"] == len(rows) and doc["logs"]["read"] > 0
