"""Every real and generated Darshan log the diagnose tests run on (shared/)."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared"
REAL_LOGS = sorted((SHARED / "darshan-logs").rglob("*.darshan"))
GENERATED = SHARED / "darshan-generated"
GENERATED_LOGS = sorted(GENERATED.glob("*.darshan"))
ALL_LOGS = REAL_LOGS + GENERATED_LOGS


def log_id(p: Path) -> str:
    return p.name[:48]
