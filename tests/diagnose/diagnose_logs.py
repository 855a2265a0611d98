"""Every real and generated Darshan log the diagnose tests run on (the corpus setting:
tests/corpus.py)."""

from __future__ import annotations

from pathlib import Path

import corpus

REAL_LOGS = corpus.REAL_LOGS
GENERATED = corpus.GENERATED_DIR
GENERATED_LOGS = corpus.GENERATED_LOGS
ALL_LOGS = REAL_LOGS + GENERATED_LOGS


def log_id(p: Path) -> str:
    return p.name[:48]
