"""Where the tests find the external corpus of Darshan logs: one setting for every test.

``$IOLAB_TEST_LOGS`` (real logs from production systems) and ``$IOLAB_TEST_GENERATED`` (logs
made by real programs under Darshan 3.5), by default ``../shared/darshan-logs`` and
``../shared/darshan-generated`` beside the repository. On a fresh clone with neither, the
tests that need them are skipped with the reason (``pytest -ra`` lists it); everything else
runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _setting(env: str, default: str) -> Path:
    value = os.environ.get(env)
    return Path(value).expanduser() if value else REPO.parent / "shared" / default


REAL_LOGS_DIR = _setting("IOLAB_TEST_LOGS", "darshan-logs")
GENERATED_DIR = _setting("IOLAB_TEST_GENERATED", "darshan-generated")

REAL_LOGS = sorted(REAL_LOGS_DIR.rglob("*.darshan")) if REAL_LOGS_DIR.is_dir() else []
GENERATED_LOGS = sorted(GENERATED_DIR.glob("*.darshan")) if GENERATED_DIR.is_dir() else []

REAL_MISSING = (f"the real Darshan log corpus is not at {REAL_LOGS_DIR} "
                "(set IOLAB_TEST_LOGS to its folder)")
GENERATED_MISSING = (f"the generated Darshan logs are not at {GENERATED_DIR} "
                     "(set IOLAB_TEST_GENERATED to their folder)")

needs_real_logs = pytest.mark.skipif(not REAL_LOGS, reason=REAL_MISSING)
needs_generated_logs = pytest.mark.skipif(not GENERATED_LOGS, reason=GENERATED_MISSING)


def require(real: bool = True, generated: bool = True) -> None:
    """At the top of a test module whose every test needs the corpus: skip the module, with
    the reason, when it is absent (instead of failing at collection)."""
    if real and not REAL_LOGS:
        pytest.skip(REAL_MISSING, allow_module_level=True)
    if generated and not GENERATED_LOGS:
        pytest.skip(GENERATED_MISSING, allow_module_level=True)
