"""``iolab triage --dask-slurm`` across the two nodes of tests/slurm_twonode.sh: two worker
jobs of one worker each, exclusive (a site's job-extra-directives, through --dask-config: so
Slurm puts them on n1 and n2), each job's Dask
workers joining the scheduler of the command from the other "host"; the store and the report
are the process pool's. Skipped, with the reason, where the two-node Slurm cannot run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dask_helpers import report, stored_rows, triage
from logfarm import make_centre

pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed (pip install -e .)")

pytestmark = pytest.mark.slurm


def test_worker_jobs_on_both_nodes_give_the_pool_s_store_and_report(
        twonode_env: dict[str, str], tmp_path: Path) -> None:
    """Expected: the two worker jobs ran on n1 and on n2 (each prints its node), workers of
    both registered with the command's scheduler, and the store and report equal -j 1's."""
    centre = make_centre(tmp_path / "logs", scale=1)
    pool = tmp_path / "pool"
    assert triage(str(centre.root), "--store", str(pool), "-j", "1", "-q").returncode == 0
    config = tmp_path / "dask.yaml"
    # the node each job ran on, in its output file, before its workers start
    config.write_text("jobqueue:\n  slurm:\n    job-extra-directives: ['--exclusive']\n"
                      "    job-script-prologue:\n"
                      "      - 'echo iolab-test-node=$SLURMD_NODENAME'\n")
    where, job_logs = tmp_path / "store", tmp_path / "worker-jobs"
    p = triage(str(centre.root), "--store", str(where), "--dask-slurm", "--slurm-jobs", "2",
               "--slurm-cores", "1", "--slurm-memory", "1GiB", "--slurm-walltime", "00:15:00",
               "--slurm-log-dir", str(job_logs), "--dask-config", str(config),
               "--dask-wait", "300", env=twonode_env, timeout=900)
    assert p.returncode == 0, p.stderr
    assert report(where) == report(pool)
    assert stored_rows(where) == stored_rows(pool)
    said = "".join(f.read_text(errors="replace") for f in sorted(job_logs.iterdir()))
    nodes = set(re.findall(r"iolab-test-node=(\w+)", said))
    assert nodes == {"n1", "n2"}, said[-3000:]
    assert said.count("Registered to") >= 2, said[-3000:]
