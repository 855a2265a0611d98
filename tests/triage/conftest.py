"""Triage tests: the Darshan log writer of tests/diagnose and the log farm importable."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent / "diagnose"):  # logfarm, darshan_writer
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


@pytest.fixture(scope="session", autouse=True)
def triage_requirements() -> None:
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install -e .)")
    pytest.importorskip("duckdb", reason="duckdb is not installed (pip install -e .)")


def _conftest(folder: str) -> ModuleType:
    """Another test folder's conftest, for its session fixtures: the Slurm clusters."""
    spec = importlib.util.spec_from_file_location(f"{folder}_conftest",
                                                  HERE.parent / folder / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the one-node Slurm of tests/slurm_localhost.sh and the two-node one of slurm_twonode.sh,
# started (or reused) once a session by their own folders' fixtures
slurm_env = _conftest("slurm").slurm_env
twonode_env = _conftest("multinode").twonode_env
