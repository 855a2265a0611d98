"""``iolab bench``'s placement options through the real CLI: mpirun's binding recorded per
rank in the stored run; the Slurm-only ones refused in one line without Slurm (exit 2,
nothing stored). The Slurm side: tests/slurm/test_slurm_placement.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bench_helpers import db_rows, run_iolab

NO_SLURM = {k: "" for k in os.environ if k.startswith("SLURM_")}


@pytest.mark.parametrize(("flags", "line"), [
    (["--cpu-freq", "low,high"], "iolab bench: --cpu-freq needs Slurm (srun sets it); run inside "
                                 "a Slurm allocation or with --launcher srun"),
    (["--core-spec", "1"], "iolab bench: --core-spec needs Slurm (srun sets it); run inside a "
                           "Slurm allocation or with --launcher srun"),
    (["--cpu-freq", "low,,high"], "iolab bench: --cpu-freq 'low,,high': an empty value in the "
                                  "list; write e.g. --cpu-freq 1200000,2400000 or "
                                  "--cpu-freq low,high"),
])
def test_slurm_only_options_without_slurm(engine: Path, db: Path, workdir: Path,
                                          flags: list[str], line: str) -> None:
    r = run_iolab("bench", "--api", "null", "--launcher", "mpirun", *flags, "--db", str(db),
                  cwd=workdir, env=NO_SLURM)
    assert (r.returncode, r.err_lines()) == (2, [line])
    assert not db.exists() and not list(workdir.iterdir())


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to bind 2 ranks")
def test_cpu_bind_cores_recorded_in_the_stored_run(engine: Path, db: Path,
                                                   workdir: Path) -> None:
    r = run_iolab("bench", "--api", "null", "--launcher", "mpirun", "--np", "2", "--cpu-bind",
                  "cores", "--db", str(db), cwd=workdir, env=NO_SLURM)
    assert r.returncode == 0, r.stderr
    (run,) = db_rows(db)
    cmd = json.loads(run["launch_command"])
    assert cmd[cmd.index("--bind-to") + 1] == "core"
    placement = json.loads(run["engine_json"])["environment"]["placement"]
    assert sorted(p["ncpus"] for p in placement) == [1, 1]
    assert len({p["cpus"] for p in placement}) == 2


def test_dry_run_sweeps_cpu_freq_under_srun(engine: Path, workdir: Path) -> None:
    """One launch line per frequency (srun outside an allocation makes its own)."""
    r = run_iolab("bench", "--api", "null", "--launcher", "srun", "--cpu-freq", "low,2400000",
                  "--launcher-args=--mpi=pmix", "--dry-run", cwd=workdir, env=NO_SLURM)
    if r.returncode == 2 and "srun" in r.stderr and "PATH" in r.stderr:
        pytest.skip("srun is not installed")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if "srun" in ln]  # not the scratch lines
    assert len(lines) == 2
    assert "--cpu-freq=low" in lines[0] and "--cpu-freq=2400000" in lines[1]
