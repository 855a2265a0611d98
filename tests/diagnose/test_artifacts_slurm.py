"""The batch script a fix emits runs as written under a real Slurm (the one-node cluster of
tests/slurm_localhost.sh): sbatch accepts its #SBATCH lines, srun starts the log's own
program with the job's ranks and a CPU count of at least 1.

Expected / was: ``srun -n 512 -c $(( $(nproc) / 512 )) ./app``: -c 0 on any node with
fewer CPUs than the job's ranks (every multi-node job), and ./app instead of the program.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from iolab.diagnose import batch_scripts
from iolab.model.job import build_model
from iolab.model.raw import RawJob, RawRecord

SCRIPT = Path(__file__).resolve().parents[1] / "slurm_localhost.sh"


@pytest.fixture(scope="module")
def slurm_env() -> dict[str, str]:
    if os.geteuid() != 0:
        pytest.skip("the one-node Slurm needs root (it starts munged, slurmctld, slurmd)")
    missing = [c for c in ("slurmctld", "slurmd", "munged", "sbatch", "srun")
               if shutil.which(c) is None]
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing); "
                    "IOLAB_WITH_TEST_DEPS=1 tools/install-deps.sh installs it")
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        pytest.fail(f"tests/slurm_localhost.sh failed: {p.stderr.strip()[-2000:]}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_CONF"] = p.stdout.strip().splitlines()[-1].split("=", 1)[1]
    return env


def test_emitted_sbatch_runs_the_logs_program(slurm_env: dict[str, str], tmp_path: Path) -> None:
    rec = RawRecord(module="POSIX", rank=0, record_id=1, path=str(tmp_path / "o.dat"),
                    counters={"POSIX_OPENS": 1})
    # the log's command line (Darshan keeps words joined by spaces)
    raw = RawJob.build(source="darshan", source_paths=["synthetic"], nprocs=2, start_time=0.0,
                       end_time=10.0, run_time_s=10.0, records=[rec],
                       exe="/usr/bin/env IOLAB_MARK=from-the-log /usr/bin/printenv IOLAB_MARK")
    (art,) = batch_scripts.slurm_affinity(build_model([raw], nodes=1))
    script = tmp_path / art.name
    script.write_text(art.content)
    out, err = tmp_path / "job.out", tmp_path / "job.err"
    r = subprocess.run(["sbatch", "--wait", "--quiet", "--time=2", f"--output={out}",
                        f"--error={err}", f"--chdir={tmp_path}", str(script)],
                       capture_output=True, text=True, timeout=120, env=slurm_env)
    assert r.returncode == 0, r.stderr + (err.read_text() if err.exists() else "")
    assert out.read_text().split() == ["from-the-log", "from-the-log"]  # 2 ranks, the program


@pytest.mark.parametrize("prefix,kind,launcher", [
    ("/gpfs/alpine/proj/run", "lsf", "jsrun"), ("/lus/theta-fs0/projects/run", "cobalt", "aprun"),
    ("/lus/flare/projects/run", "pbs", "mpiexec"), ("/pscratch/sd/u/run", "slurm", "srun"),
    ("/home/u/run", "slurm", "srun")])
def test_batch_script_for_the_scheduler_that_ran_the_job(
        prefix: str, kind: str, launcher: str) -> None:
    """Expected / was: a Summit (LSF/jsrun) or Theta (Cobalt/aprun) job got a slurm.sbatch
    with srun. The scheduler from the job's own file systems; unknown: Slurm's lines that
    say so, with the other launchers' equivalents."""
    from artifact_check import problems

    recs = [RawRecord(module="POSIX", rank=r, record_id=7, path=f"{prefix}/out.dat",
                      counters={"POSIX_OPENS": 1, "POSIX_WRITES": 10},
                      fcounters={"POSIX_F_WRITE_TIME": 1.0}) for r in range(8)]
    raw = RawJob.build(source="darshan", source_paths=["s"], nprocs=8, start_time=0.0,
                       end_time=10.0, run_time_s=10.0, records=recs, exe="./sim -i in.nml",
                       nodes=2)
    model = build_model([raw])
    (art,) = batch_scripts.slurm_affinity(model)
    assert art.kind == kind and f"{launcher} " in art.content
    if prefix.startswith("/home"):
        assert "does not say which scheduler" in art.content
    assert problems(model, art, [art]) == []
