"""``iolab tune`` on the one-node Slurm: trials as batch jobs (``--sbatch``) and as job steps
inside an allocation; every trial is a stored run launched with srun with the ranks asked."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slurm

WORKLOAD = ["--", "iolab", "bench", "-a", "null", "--null.delay-us", "200", "-t", "64k",
            "-b", "1m", "--np", "2", "-w"]


def stored_runs(db: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT r.launcher, r.ranks, r.status, t.number FROM trials t "
                            "JOIN runs r ON r.id = t.run_id ORDER BY t.number").fetchall()
    finally:
        conn.close()


def test_trials_as_batch_jobs(slurm_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    out = subprocess.run(
        [sys.executable, "-m", "iolab", "tune", "--db", str(db), "--knob", "transfer=256k",
         "--trials", "2", "--confirm", "0", "--sbatch", "--sbatch-args=-n 2 -t 5", "--json",
         *WORKLOAD], cwd=tmp_path, env=slurm_env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["objective"]["sbatch"] == ["-n", "2", "-t", "5"]
    rows = stored_runs(db)
    assert len(rows) == 2
    assert all(r["launcher"] == "srun" and r["ranks"] == 2 and r["status"] == "ok"
               for r in rows)


def test_trials_inside_an_allocation_are_job_steps(slurm_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    out = subprocess.run(
        ["salloc", "-n", "2", sys.executable, "-m", "iolab", "tune", "--db", str(db),
         "--knob", "transfer=256k", "--trials", "2", "--confirm", "0", *WORKLOAD],
        cwd=tmp_path, env=slurm_env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = stored_runs(db)
    assert [r["launcher"] for r in rows] == ["srun", "srun"]
    assert all(r["ranks"] == 2 for r in rows)
