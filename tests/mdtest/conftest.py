"""Fixtures for the ``iolab mdtest`` tests (helpers in mdtest_helpers.py): the engine, and
(when IOLAB_MDTEST names it) a real mdtest built from hpc/ior in a scratch folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from one_host_mpi import one_host_open_mpi  # noqa: F401 (autouse: Open MPI's one-host start-up)
from tool_helpers import real_tool

from iolab.errors import UsageError
from iolab.paths import engine_binary


@pytest.fixture(scope="session")
def engine() -> Path:
    try:
        e = engine_binary("default")
    except UsageError:
        pytest.skip("iolab-bench is not built (run ./setup)")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    return e


@pytest.fixture(scope="session")
def real_mdtest() -> Path:
    """mdtest (IOR 4) built from hpc/ior in a scratch folder, named by IOLAB_MDTEST."""
    path = real_tool("IOLAB_MDTEST", "mdtest (hpc/ior; IOLAB_MDTEST: its src/mdtest)")
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (the comparison reads both runs' calls)")
    return path
