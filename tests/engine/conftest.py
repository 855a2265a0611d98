"""Fixtures for the engine's integration tests (helpers in engine_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import Engine, get_engine


@pytest.fixture(scope="session")
def engine() -> Engine:
    e = get_engine("default")
    if e is None:
        pytest.skip("iolab-bench is not built (run ./setup) or mpirun is missing")
    return e


@pytest.fixture(scope="session")
def mpich_engine() -> Engine:
    e = get_engine("mpich")
    if e is None:
        pytest.skip("iolab-bench-mpich is not built (needs mpicc.mpich; ./setup builds it)")
    return e


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    d = tmp_path / "scratch"
    d.mkdir()
    return d
