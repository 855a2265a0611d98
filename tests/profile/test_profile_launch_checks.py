"""``iolab profile`` starts an MPI program with its own MPI library, refuses a launcher of the
other one, and writes no profile when nothing was traced.

Expected / was: ``iolab profile --np 2 -- ./mpich_program`` (no ``--mpi``) ran two one-rank
jobs under Open MPI's mpirun, and the profile said rank 1 was "killed (SIGKILL)", exit 0; a
failed ``sbatch`` (or any command that failed before a process was traced) left "a profile of
0 processes", which ``iolab diagnose`` then called "no problem found".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS

from iolab.sources.profile import load


def _iolab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IOLAB_LIBDIR": str(LIBDIR)}
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, env=env, timeout=180, cwd=cwd)


def _build(cc: str, out: Path) -> Path:
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    subprocess.run([cc, "-O2", "-o", str(out), str(PROGS / "mpi_world_size.c")], check=True)
    return out


@pytest.fixture(scope="module")
def mpich_prog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("mpirun.mpich") is None:
        pytest.skip("MPICH's mpirun is not installed")
    return _build("mpicc.mpich", tmp_path_factory.mktemp("mpich") / "world_mpich")


@pytest.fixture(scope="module")
def openmpi_prog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("mpirun.openmpi") is None:
        pytest.skip("Open MPI's mpirun is not installed")
    return _build("mpicc.openmpi", tmp_path_factory.mktemp("ompi") / "world_ompi")


def _worlds(folder: Path) -> list[str]:
    return sorted(p.read_text().strip() for p in folder.glob("world.*"))


@pytest.mark.parametrize("which", ["mpich", "openmpi"])
def test_np_starts_the_program_with_its_own_mpi_library(
    which: str, mpich_prog: Path, openmpi_prog: Path, tmp_path: Path
) -> None:
    prog = mpich_prog if which == "mpich" else openmpi_prog
    data = tmp_path / "d"
    data.mkdir()
    run = _iolab("profile", "-q", "-o", str(tmp_path / "p"), "--name", "job", "--np", "2",
                 "--", str(prog), str(data))
    assert run.returncode == 0, run.stderr
    assert _worlds(data) == ["0 2", "1 2"]  # one job of two ranks, not two of one
    job = load(tmp_path / "p" / "job.iolab")
    assert job.nprocs == 2
    assert "run_incomplete" not in job.metadata, job.metadata


def test_mpi_of_the_other_library_is_refused_before_anything_runs(
    mpich_prog: Path, openmpi_prog: Path, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    data.mkdir()
    for prog, wrong in ((mpich_prog, "openmpi"), (openmpi_prog, "mpich")):
        run = _iolab("profile", "-o", str(tmp_path / "p"), "--np", "2", "--mpi", wrong,
                     "--", str(prog), str(data))
        assert run.returncode == 2
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert f"--mpi {wrong}" in run.stderr and "linked against" in run.stderr
    assert not (tmp_path / "p").exists() and _worlds(data) == []


def test_a_launch_line_of_the_other_library_is_refused(
    mpich_prog: Path, openmpi_prog: Path, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    data.mkdir()
    for launcher, prog in (("mpirun.openmpi", mpich_prog), ("mpirun.mpich", openmpi_prog)):
        run = _iolab("profile", "-o", str(tmp_path / "p"), "--", launcher, "-np", "2",
                     str(prog), str(data))
        assert run.returncode == 2, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert "one-rank jobs" in run.stderr and launcher in run.stderr
    assert not (tmp_path / "p").exists() and _worlds(data) == []


def test_a_command_that_fails_before_tracing_leaves_no_profile(tmp_path: Path) -> None:
    false = shutil.which("false")
    assert false is not None
    run = _iolab("profile", "-o", str(tmp_path / "p"), "--", false)
    assert run.returncode == 1  # the command's own status
    assert "exited with status 1" in run.stderr and "no profile written" in run.stderr
    assert not (tmp_path / "p").exists()  # the folder it made for the profile is gone
    kept = tmp_path / "kept"
    kept.mkdir()
    run = _iolab("profile", "-o", str(kept), "--", false)
    assert run.returncode == 1 and kept.is_dir() and list(kept.iterdir()) == []


def test_a_failed_sbatch_leaves_no_profile(tmp_path: Path) -> None:
    if shutil.which("sbatch") is None:
        pytest.skip("Slurm's sbatch is not installed")
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\ntrue\n")
    # refused by sbatch itself, whether a Slurm controller answers or not
    run = _iolab("profile", "-o", str(tmp_path / "p"), "--", "sbatch", "--time=bogus",
                 str(script), cwd=tmp_path)
    assert run.returncode != 0
    assert "no profile written" in run.stderr, run.stderr
    assert not (tmp_path / "p").exists()
    diag = list(tmp_path.rglob("*.iolab"))
    assert diag == []
