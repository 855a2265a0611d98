"""Fixtures of the tune tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from one_host_mpi import one_host_open_mpi  # noqa: F401 (autouse: Open MPI's one-host start-up)

HERE = Path(__file__).parent
# bench/tunelab (iolab tune's research switches and replay harness) is imported by the bench
# scripts from their own directory; the tests that use it import it the same way. Appended,
# so nothing of bench/ shadows an installed module.
BENCH = HERE.parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))


@pytest.fixture(scope="module")
def hinted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """progs/hinted.c built with MPICH: a program that reads its hints back (ROMIO reports
    them), for tunes whose knobs must reach a real command."""
    if shutil.which("mpicc.mpich") is None or shutil.which("mpirun.mpich") is None:
        pytest.skip("MPICH is not installed (./setup installs it)")
    exe = tmp_path_factory.mktemp("prog") / "hinted"
    subprocess.run(["mpicc.mpich", "-O1", "-o", str(exe), str(HERE / "progs" / "hinted.c")],
                   check=True)
    return exe
