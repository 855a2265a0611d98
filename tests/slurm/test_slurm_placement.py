"""Placement knobs under the one-node Slurm: --cpu-freq sweeps (one stored run per
frequency, each rank's placement recorded), --cpus-per-rank and --membind on the srun line,
--core-spec at allocation time; and what this Slurm cannot do (TaskPlugin=task/none cannot
bind CPUs) is one line, exit 2, nothing stored."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from stored_runs import stored_runs

from iolab import launch
from iolab.errors import UsageError
from iolab.paths import engine_binary

pytestmark = pytest.mark.slurm


@pytest.fixture(scope="module")
def engine() -> Path:
    try:
        return engine_binary("default")
    except UsageError as exc:
        pytest.skip(str(exc))


def runs(db: Path) -> list[dict[str, Any]]:
    return stored_runs(db)


def in_salloc(env: dict[str, str], cwd: Path, *bench: str, np: int = 2, core_spec: int | None
              = None, salloc: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    spec = launch.LaunchSpec(np=np, nodes=1, core_spec=core_spec)
    cmd = launch.salloc_command(spec, [sys.executable, "-m", "iolab", "bench", *bench],
                                extra=salloc)
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=150)


def _task_none(env: dict[str, str]) -> bool:
    return "task/none" in (launch.slurm_task_plugin(env) or "")


def test_cpu_bind_where_slurm_cannot_bind(slurm_env: dict[str, str], engine: Path,
                                          tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    p = in_salloc(slurm_env, tmp_path, "--api", "null", "--cpu-bind", "cores", "--db", str(db))
    if not _task_none(slurm_env):  # a Slurm that binds: each rank on its own CPU
        assert p.returncode == 0, p.stderr
        (run,) = runs(db)
        assert [r["ncpus"] for r in run["engine_json"]["environment"]["placement"]] == [1, 1]
        return
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("iolab")]
    assert lines == ["iolab bench: --cpu-bind cores: this Slurm cannot bind CPUs "
                     "(TaskPlugin=task/none); ask the site for task/affinity or task/cgroup, "
                     "or run without --cpu-bind"], p.stderr
    assert not db.exists()


def test_cpu_freq_sweep_one_run_per_frequency(slurm_env: dict[str, str], engine: Path,
                                              tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    p = in_salloc(slurm_env, tmp_path, "--api", "null", "--transfer", "1m", "--block", "2m",
                  "--cpu-freq", "low,high", "--label", "freq", "--db", str(db))
    assert p.returncode == 0, p.stderr
    stored = runs(db)
    assert [r["label"] for r in stored] == ["freq cpu-freq=low", "freq cpu-freq=high"]
    for run, freq in zip(stored, ("low", "high")):
        assert run["status"] == "ok" and run["ranks"] == 2
        assert f"--cpu-freq={freq}" in run["launch_command"]
        placement = run["engine_json"]["environment"]["placement"]
        assert [r["rank"] for r in placement] == [0, 1]
        # the frequency observed during the run is recorded (this VM may not report one)
        assert all("cpu_mhz_start" in r and "cpus" in r for r in placement)


def test_cpus_per_rank_and_membind_under_srun(slurm_env: dict[str, str], engine: Path,
                                              tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    p = in_salloc(slurm_env, tmp_path, "--api", "null", "--np", "1", "--cpus-per-rank", "2",
                  "--membind", "0", "--db", str(db), np=1, salloc=("-c", "2"))
    assert p.returncode == 0, p.stderr
    (run,) = runs(db)
    cmd = run["launch_command"]
    assert cmd[cmd.index("--cpus-per-task") + 1] == "2"
    assert cmd[cmd.index("numactl"):cmd.index("numactl") + 2] == ["numactl", "--membind=0"]
    (rank,) = run["engine_json"]["environment"]["placement"]
    assert rank["mempolicy"] == "bind"  # numactl --membind took effect in the rank
    assert rank["ncpus"] >= 1


def test_core_spec_at_allocation_time(slurm_env: dict[str, str], engine: Path,
                                      tmp_path: Path) -> None:
    """Inside an allocation --core-spec is refused with where it belongs; salloc -S runs."""
    db = tmp_path / "r.db"
    p = in_salloc(slurm_env, tmp_path, "--api", "null", "--core-spec", "1", "--db", str(db))
    assert p.returncode == 2
    assert "--core-spec 1 must be requested when the allocation is made (salloc -S 1" \
        in p.stderr
    assert not db.exists()
    p = in_salloc(slurm_env, tmp_path, "--api", "null", "--db", str(db), core_spec=1)
    assert p.returncode == 0, p.stderr
    (run,) = runs(db)
    assert run["status"] == "ok" and run["ranks"] == 2


def test_cpu_bind_none_runs_where_slurm_cannot_bind(slurm_env: dict[str, str], engine: Path,
                                                    tmp_path: Path) -> None:
    """Expected: --cpu-bind none runs (such a Slurm does not bind anyway); was: srun refused
    it ("cluster configuration lacks support for cpu binding") and a failed run was stored."""
    db = tmp_path / "r.db"
    p = in_salloc(slurm_env, tmp_path, "--api", "null", "--cpu-bind", "none", "--db", str(db))
    assert p.returncode == 0, p.stderr
    (run,) = runs(db)
    assert run["status"] == "ok" and run["ranks"] == 2
    if _task_none(slurm_env):
        assert not any(a.startswith("--cpu-bind") for a in run["launch_command"])
    else:
        assert "--cpu-bind=none" in run["launch_command"]
