"""``iolab triage --dask-slurm`` on the one-node Slurm of tests/slurm_localhost.sh: Dask
workers started as Slurm jobs by dask-jobqueue's SLURMCluster read the logs; the store and
the report are the process pool's. Skipped, with the reason, where that Slurm cannot run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from dask_helpers import report, stored_rows, triage
from logfarm import make_centre

pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed (pip install -e .)")

pytestmark = pytest.mark.slurm


def test_workers_in_slurm_jobs_give_the_pool_s_store_and_report(
        slurm_env: dict[str, str], tmp_path: Path) -> None:
    """Expected: two Slurm jobs of one Dask worker each read the logs (their output files
    name their Slurm job ids and the scheduler they joined); the store and the report are
    those of -j 1."""
    centre = make_centre(tmp_path / "logs", scale=1)
    shutil.copy(centre.logs[-1], centre.root / "a-copy.darshan")
    pool = tmp_path / "pool"
    assert triage(str(centre.root), "--store", str(pool), "-j", "1", "-q").returncode == 0
    where, job_logs = tmp_path / "store", tmp_path / "worker-jobs"
    p = triage(str(centre.root), "--store", str(where), "--dask-slurm", "--slurm-jobs", "2",
               "--slurm-cores", "1", "--slurm-memory", "1GiB", "--slurm-walltime", "00:15:00",
               "--slurm-partition", "debug", "--slurm-log-dir", str(job_logs),
               "--dask-wait", "300", env=slurm_env, timeout=900)
    assert p.returncode == 0, p.stderr
    assert "on Dask workers in Slurm jobs" in p.stderr
    assert report(where) == report(pool)
    assert stored_rows(where) == stored_rows(pool)
    outs = sorted(job_logs.glob("*.err")) + sorted(job_logs.glob("*.out"))
    ids = {m.group(1) for f in outs if (m := re.search(r"-(\d+)\.(?:err|out)$", f.name))}
    assert ids, f"no worker job output in {job_logs}: {list(job_logs.iterdir())}"
    said = "".join(f.read_text(errors="replace") for f in outs)
    assert "Registered to" in said, said[-2000:]
