"""The runs a test's command stored, read through the results database's own reader (the
engine document and launch line decoded), oldest first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iolab.results import db


def stored_runs(path: Path) -> list[dict[str, Any]]:
    conn = db.connect(path, must_exist=True)
    try:
        return [r for r in (db.get_run(conn, row["id"]) for row in db.list_runs(conn))
                if r is not None]
    finally:
        conn.close()
