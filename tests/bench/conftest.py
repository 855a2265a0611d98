"""Fixtures for the ``iolab bench`` tests (helpers in bench_helpers.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bench_helpers import engine_or_none


@pytest.fixture(scope="session")
def engine() -> Path:
    e = engine_or_none("default")
    if e is None:
        pytest.skip("iolab-bench is not built (run ./setup)")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    return e


@pytest.fixture(scope="session")
def mpich_engine() -> Path:
    e = engine_or_none("mpich")
    if e is None or shutil.which("mpirun.mpich") is None:
        pytest.skip("iolab-bench-mpich is not built (needs mpicc.mpich; ./setup builds it)")
    return e


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d
