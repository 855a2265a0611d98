"""Diagnose tests: make ``iolab`` and the log lists importable; pydarshan requirement."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # diagnose_logs
try:
    import iolab  # noqa: F401
except ImportError:  # running from a checkout without ``pip install -e .``
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


@pytest.fixture(scope="session")
def darshan_available() -> None:
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
