"""Shared inputs of the diagnose tests: every real and generated Darshan log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

try:
    import iolab  # noqa: F401
except ImportError:  # running from a checkout without ``pip install -e .``
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

SHARED = Path(__file__).resolve().parents[3] / "shared"
REAL_LOGS = sorted((SHARED / "darshan-logs").rglob("*.darshan"))
GENERATED = SHARED / "darshan-generated"
GENERATED_LOGS = sorted(GENERATED.glob("*.darshan"))
ALL_LOGS = REAL_LOGS + GENERATED_LOGS


def log_id(p: Path) -> str:
    return p.name[:48]


@pytest.fixture(scope="session")
def darshan_available() -> None:
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
