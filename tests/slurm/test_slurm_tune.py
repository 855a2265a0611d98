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


def test_placement_knobs_inside_an_allocation(slurm_env: dict[str, str],
                                              tmp_path: Path) -> None:
    """slurm.cpus_per_rank reaches each trial's srun line (a job step of the allocation), and
    the engine reports the placement it ran with. slurm.ranks_per_node=2 is what the one-node
    allocation of 2 tasks already runs (read back from where the baseline's ranks ran): it
    is dropped from the space, never measured again under another name."""
    db = tmp_path / "r.db"
    out = subprocess.run(
        ["salloc", "-n", "2", sys.executable, "-m", "iolab", "tune", "--db", str(db),
         "--knob", "slurm.ranks_per_node=2", "--knob", "slurm.cpus_per_rank=1", "--trials",
         "4", "--confirm", "0", "--repeats", "1", "--json", *WORKLOAD],
        cwd=tmp_path, env=slurm_env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    trials = doc["trials"]
    # the space left is cpus_per_rank's one value: the baseline and one trial, all of it
    assert len(trials) == 2 and all(t["status"] == "ok" for t in trials)
    assert "slurm.ranks_per_node" not in doc["space"], doc["space"]
    assert {t["params"].get("slurm.cpus_per_rank") for t in trials} == {"(default)", "1"}
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        runs = {r["id"]: r for r in conn.execute(
            "SELECT id, launcher, ranks, launch_command FROM runs").fetchall()}
    finally:
        conn.close()
    for t in trials:
        run = runs[t["run_id"]]
        cmd = json.loads(run["launch_command"])
        assert run["launcher"] == "srun" and run["ranks"] == 2
        assert "--ntasks-per-node" not in cmd
        cpus = t["params"]["slurm.cpus_per_rank"]
        if cpus == "1":
            assert cmd[cmd.index("--cpus-per-task") + 1] == "1"
        else:
            assert "--cpus-per-task" not in cmd


def _two_trials_in_salloc(env: dict[str, str], tmp_path: Path,
                          knob: str) -> tuple[list[dict], str]:
    """``iolab tune --knob KNOB --trials 2`` inside ``salloc -n 2``: the baseline trial and
    the knob's one value, from the tune's JSON, and the tune's stderr."""
    out = subprocess.run(
        ["salloc", "-n", "2", sys.executable, "-m", "iolab", "tune", "--db",
         str(tmp_path / "r.db"), "--knob", knob, "--trials", "2", "--confirm", "0", "--json",
         *WORKLOAD],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    trials: list[dict] = json.loads(out.stdout)["trials"]
    return trials, out.stderr


def test_cpu_bind_knob_where_slurm_cannot_bind_is_a_failed_trial(slurm_env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    """slurm.cpu_bind goes through iolab bench's --cpu-bind: a Slurm whose task plugin
    cannot bind refuses it in one line before anything runs; the trial is stored as failed
    and the tune goes on (was: passed to srun raw, which failed at run time)."""
    from iolab import launch

    (base, bound), _ = _two_trials_in_salloc(slurm_env, tmp_path, "slurm.cpu_bind=cores")
    assert base["status"] == "ok" and bound["params"]["slurm.cpu_bind"] == "cores"
    if "task/none" in (launch.slurm_task_plugin(slurm_env) or ""):
        assert bound["status"] == "failed" and "cannot bind CPUs" in bound["error"]
    else:
        assert bound["status"] == "ok"


def test_ranks_per_node_the_allocation_cannot_hold_is_a_failed_trial_with_its_reason(
        slurm_env: dict[str, str], tmp_path: Path) -> None:
    """Expected: the trial fails with the bench verb's own check ("ranks per node ..."), the
    tune goes on. Was: the trial's error was the last stderr line, an unrelated note."""
    (base, spread), err = _two_trials_in_salloc(slurm_env, tmp_path, "slurm.ranks_per_node=1")
    assert base["status"] == "ok"
    assert spread["status"] == "failed" and "ranks per node" in spread["error"]
    assert "UserWarning" not in err


def test_ranks_per_node_the_users_srun_already_runs_is_not_measured_again(
        slurm_env: dict[str, str], tmp_path: Path) -> None:
    """A command objective: a plain ``srun prog`` in ``salloc -n 2`` runs 2 tasks on the one
    node, so slurm.ranks_per_node=2 is the baseline itself: the tune says so and stops after
    the baseline (was: a second trial measured the defaults under another name)."""
    db = tmp_path / "r.db"
    out = subprocess.run(
        ["salloc", "-n", "2", sys.executable, "-m", "iolab", "tune", "--db", str(db),
         "--knob", "slurm.ranks_per_node=2", "--trials", "3", "--confirm", "0",
         "--metric", r"tasks: (\d+)", "--maximize", "--",
         "srun", "bash", "-c", "echo tasks: $SLURM_STEP_NUM_TASKS"],
        cwd=tmp_path, env=slurm_env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "the baseline already runs every value asked (slurm.ranks_per_node=2)" in (
        out.stdout + out.stderr)
    conn = sqlite3.connect(db)
    try:
        trials = conn.execute("SELECT params, value FROM trials").fetchall()
    finally:
        conn.close()
    assert [(json.loads(p).get("slurm.ranks_per_node"), v) for p, v in trials] == [
        ("(default)", 2.0)]
