"""Launch correctness under Slurm, for both MPI libraries.

Expected: inside an allocation, ``iolab bench --mpi mpich`` and ``--mpi default`` start one
2-rank MPI job through srun with the PMI type of the engine's MPI library, and the stored run
has 2 ranks; a launch that starts singletons is stored as failed with the reason, never ok;
more ranks than the allocation holds is exit 2 with nothing stored. Was: ``--mpi mpich`` under
srun ran 1 rank (two one-rank jobs) and stored status ok; ``--np 1000`` under ``salloc -n 2``
stored a failed row with case "? ?".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_slurm_bench import runs

from iolab import launch
from iolab.errors import UsageError
from iolab.paths import engine_binary

pytestmark = pytest.mark.slurm

MIB = 1 << 20
ENGINE_MPI = {"default": "openmpi", "mpich": "mpich"}  # Debian: mpicc is Open MPI's


def _engine(mpi: str) -> Path:
    try:
        return engine_binary(mpi)
    except UsageError as exc:
        pytest.skip(str(exc))


def _salloc_bench(slurm_env: dict[str, str], cwd: Path, *args: str):  # type: ignore[no-untyped-def]
    import subprocess

    cmd = launch.salloc_command(launch.LaunchSpec(np=2, nodes=1), [
        sys.executable, "-m", "iolab", "bench", "--api", "null", "-t", "64k", "-b", "1m",
        *args])
    return subprocess.run(cmd, env=slurm_env, cwd=cwd, capture_output=True, text=True,
                          timeout=150)


def test_both_engines_are_built_against_the_expected_mpi() -> None:
    for mpi, flavour in ENGINE_MPI.items():
        assert launch.binary_mpi(_engine(mpi)) == flavour


def test_srun_lists_pmi_types(slurm_env: dict[str, str]) -> None:
    offered = launch.srun_mpi_types(slurm_env)
    assert "pmix" in offered and "pmi2" in offered and "none" in offered


@pytest.mark.parametrize("mpi,pmi", [("mpich", "pmi2"), ("default", "pmix")])
def test_ranks_stored_are_the_ranks_asked(slurm_env: dict[str, str], tmp_path: Path,
                                          mpi: str, pmi: str) -> None:
    _engine(mpi)
    db = tmp_path / "r.db"
    p = _salloc_bench(slurm_env, tmp_path, "--mpi", mpi, "--db", str(db))
    assert p.returncode == 0, p.stderr
    (run,) = runs(db)
    assert (run["status"], run["launcher"], run["ranks"]) == ("ok", "srun", 2), run["error"]
    assert f"--mpi={pmi}" in run["launch_command"]
    assert run["engine_json"]["environment"]["ranks_per_host"] == {run["host"]: 2}
    assert run["write_bytes_total"] == 2 * MIB


def test_singletons_are_a_failed_run(slurm_env: dict[str, str], tmp_path: Path) -> None:
    """The user's own wrong PMI: two one-rank jobs that each say ok."""
    _engine("mpich")
    db = tmp_path / "r.db"
    p = _salloc_bench(slurm_env, tmp_path, "--mpi", "mpich", "--db", str(db),
                      "--launcher-args=--mpi=none")
    assert p.returncode == 1, p.stderr
    (run,) = runs(db)
    # both singletons print a document: either one is read (1 rank) or they interleave
    assert run["status"] == "failed" and run["ranks"] in (1, None)
    assert "2 separate one-rank jobs ran, not one 2-rank job" in run["error"] and \
        "--mpi=pmi2" in run["error"]
    assert "separate one-rank jobs" in p.stderr


def test_more_ranks_than_the_allocation(slurm_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    p = _salloc_bench(slurm_env, tmp_path, "--np", "1000", "--db", str(db))
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("iolab")]
    assert len(lines) == 1 and "has 2 tasks" in lines[0] and "Traceback" not in p.stderr
    assert not db.exists()


@pytest.mark.parametrize("mpi_flag", [["--mpi", "mpich"], []], ids=["--mpi mpich", "detected"])
def test_profile_under_srun_is_one_mpi_job(slurm_env: dict[str, str], tmp_path: Path,
                                           mpi_flag: list[str]) -> None:
    """iolab profile --np 2 of an MPICH program under srun: two processes of one job (the
    PMI from --mpi, or read from the program's linked library)."""
    import subprocess

    from iolab.sources.profile_format import read

    exe = _engine("mpich")
    cmd = launch.salloc_command(launch.LaunchSpec(np=2, nodes=1), [
        sys.executable, "-m", "iolab", "profile", "-v", "--np", "2", *mpi_flag, "-o",
        str(tmp_path), "--name", "p", "--", str(exe), "--api", "posix", "--transfer", "64k",
        "--block", "256k", "--path", str(tmp_path / "f"), "--quiet"])
    p = subprocess.run(cmd, env=slurm_env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=150)
    assert p.returncode == 0, p.stderr
    assert "srun -n 2 --mpi=pmi2 " in p.stderr
    data = read(tmp_path / "p.iolab")
    assert len(data.parts) == 2
    assert sorted(part.header.get("rank") for part in data.parts) == [0, 1]
    assert {part.header.get("nprocs") for part in data.parts} == {2}  # one job, not two
