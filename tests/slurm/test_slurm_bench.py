"""The Slurm path for real: ``iolab bench`` inside ``sbatch`` and ``salloc`` detects the
allocation and launches the ranks with srun (PMIx); the stored run has 2 ranks and the bytes."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from stored_runs import stored_runs

from iolab import launch
from iolab.errors import UsageError
from iolab.paths import engine_binary

pytestmark = pytest.mark.slurm

MIB = 1 << 20
KIB = 1 << 10


@pytest.fixture(scope="module")
def engine() -> Path:
    try:
        return engine_binary("default")
    except UsageError as exc:
        pytest.skip(str(exc))


def runs(db: Path) -> list[dict[str, Any]]:
    return stored_runs(db)


def iolab_bench(*args: str) -> str:
    return shlex.join([sys.executable, "-m", "iolab", "bench", *args])


def test_bench_inside_sbatch(slurm_env: dict[str, str], engine: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -n 2\n#SBATCH -t 5\n#SBATCH -J iolab-test\n"
                      f"cd {shlex.quote(str(tmp_path))}\n"
                      + iolab_bench("--api", "null", "-t", "64k", "-b", "1m", "-s", "2",
                                    "--db", str(db), "--label", "sbatch") + "\n")
    out = tmp_path / "job.out"
    p = subprocess.run(launch.sbatch_command(str(script), output=str(out)), env=slurm_env,
                       capture_output=True, text=True, timeout=150)
    assert p.returncode == 0, (p.stderr, out.read_text() if out.exists() else "")
    (run,) = runs(db)
    assert run["status"] == "ok" and run["launcher"] == "srun" and run["ranks"] == 2
    assert run["launch_command"][:3] == ["srun", "-n", "2"]
    assert run["write_bytes_total"] == run["read_bytes_total"] == 2 * MIB * 2
    assert run["engine_json"]["environment"]["ranks_per_host"] == {run["host"]: 2}
    assert "stored as run 1" in out.read_text()


def test_bench_inside_salloc_posix(slurm_env: dict[str, str], engine: Path,
                                   tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    work = tmp_path / "work"
    work.mkdir()
    cmd = launch.salloc_command(launch.LaunchSpec(np=2, nodes=1), [
        sys.executable, "-m", "iolab", "bench", "-a", "POSIX", "--layout", "segmented", "-t",
        "64k", "-b", "256k", "-s", "2", "--verify", "--db", str(db), "--label", "salloc"])
    p = subprocess.run(cmd, env=slurm_env, cwd=work, capture_output=True, text=True,
                       timeout=150)
    assert p.returncode == 0, p.stderr
    (run,) = runs(db)
    assert (run["status"], run["launcher"], run["ranks"], run["api"]) == \
        ("ok", "srun", 2, "posix")
    assert run["write_bytes_total"] == run["read_bytes_total"] == 2 * 256 * KIB * 2
    assert run["engine_json"]["verify"]["errors"] == 0
    assert not list(work.iterdir())  # scratch removed


def test_sbatch_script_builder_runs_the_engine(slurm_env: dict[str, str], engine: Path,
                                               tmp_path: Path) -> None:
    """launch.sbatch_script's srun line starts one 2-rank MPI job (not two singletons)."""
    result = tmp_path / "result.json"
    spec = launch.LaunchSpec(np=2, nodes=1, env={"IOLAB_TEST": "1"})
    script = tmp_path / "job.sh"
    script.write_text(launch.sbatch_script(
        spec, [str(engine), "--api", "null", "--transfer", "1m", "--block", "4m", "--quiet",
               "--json", str(result)], job_name="iolab-builder", time_limit="00:05:00"))
    p = subprocess.run(launch.sbatch_command(str(script), output=str(tmp_path / "o.txt")),
                       env=slurm_env, capture_output=True, text=True, timeout=150)
    assert p.returncode == 0, p.stderr
    doc = json.loads(result.read_text())
    assert doc["environment"]["ranks"] == 2
    assert sum(ph["bytes"] for r in doc["repetitions"] for ph in r["phases"]) == 2 * 2 * 4 * MIB


def test_ctrl_c_under_srun_stores_an_interrupted_run(slurm_env: dict[str, str], engine: Path,
                                                     tmp_path: Path) -> None:
    """srun would kill the ranks on SIGTERM; iolab signals the step's tasks instead, so the
    engine reports what it did and the run is stored as interrupted."""
    db = tmp_path / "r.db"
    p = subprocess.Popen(
        ["salloc", "-n", "2", sys.executable, "-m", "iolab", "bench", "--api", "null", "-t",
         "1k", "-b", "1m", "--null.delay-us", "10000", "--db", str(db)],
        env=slurm_env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        iolab_pid = None
        deadline = time.monotonic() + 60
        while iolab_pid is None and time.monotonic() < deadline:
            time.sleep(0.5)
            iolab_pid = _child_running_srun(p.pid)
        assert iolab_pid is not None, "iolab bench did not start srun"
        time.sleep(1.5)
        os.kill(iolab_pid, signal.SIGINT)
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    (run,) = runs(db)
    assert run["status"] == "interrupted" and run["launcher"] == "srun"
    assert run["engine_json"] is not None and run["engine_json"]["status"] == "interrupted"
    assert 0 < run["write_bytes_total"] < 2 * MIB and run["ranks"] == 2


def _child_running_srun(salloc_pid: int) -> int | None:
    """The iolab process salloc started, once it has started srun."""
    kids = subprocess.run(["pgrep", "-P", str(salloc_pid)], capture_output=True,
                          text=True).stdout.split()
    for kid in kids:
        grandkids = subprocess.run(["pgrep", "-P", kid, "srun"], capture_output=True,
                                   text=True).stdout.split()
        if grandkids:
            return int(kid)
    return None
