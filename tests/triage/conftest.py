"""Triage tests: the Darshan log writer of tests/diagnose and the log farm importable."""

from __future__ import annotations

import sys
from pathlib import Path

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
