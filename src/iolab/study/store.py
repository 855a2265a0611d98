"""Studies in the results database (migration 3): one row, its experiments are sweeps."""

from __future__ import annotations

import json
import sqlite3
from typing import Any


def get_study(conn: sqlite3.Connection, study_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM studies WHERE id = ?", (study_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    out["command"] = json.loads(out["command"])
    out["result"] = json.loads(out["result"]) if out.get("result") else {}
    return out
