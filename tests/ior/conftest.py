"""Fixtures for the ``iolab ior`` tests (helpers in ior_helpers.py): the engine, and (when
IOLAB_IOR names it) a real IOR 4 binary built in a scratch folder."""

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
def real_ior() -> Path:
    """IOR 4 built from hpc/ior in a scratch folder, named by IOLAB_IOR."""
    path = real_tool("IOLAB_IOR", "IOR (hpc/ior; IOLAB_IOR: its src/ior)")
    return path
