"""Fixtures for the ``iolab mdtest`` tests (helpers in mdtest_helpers.py): the engine, and
(when IOLAB_MDTEST names it) a real mdtest built from hpc/ior in a scratch folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

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
    path = os.environ.get("IOLAB_MDTEST")
    if not path:
        pytest.skip("no real mdtest to compare with: build hpc/ior outside the repository "
                    "and set IOLAB_MDTEST to its src/mdtest")
    if not os.access(path, os.X_OK):
        pytest.skip(f"IOLAB_MDTEST={path} is not an executable")
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (the comparison reads both runs' calls)")
    return Path(path)
