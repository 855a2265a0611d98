"""Studies in the results database (migration 3): one row; its experiments are sweeps."""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from iolab.results.db import transaction
from iolab.units import now_time


def _now() -> str:
    return now_time()  # the one form of a time (units.fmt_time)


def create_study(conn: sqlite3.Connection, command: Sequence[str], size: str) -> int:
    now = _now()
    with transaction(conn):
        cur = conn.execute("INSERT INTO studies (created_at, updated_at, status, command, size, "
                           "host) VALUES (?, ?, 'running', ?, ?, ?)",
                           (now, now, json.dumps(list(command)), size, socket.gethostname()))
    return int(cur.lastrowid or 0)


def update_study(conn: sqlite3.Connection, study_id: int, status: str,
                 result: Mapping[str, Any]) -> None:
    with transaction(conn):
        conn.execute("UPDATE studies SET status = ?, result = ?, updated_at = ? WHERE id = ?",
                     (status, json.dumps(result), _now(), study_id))


def get_study(conn: sqlite3.Connection, study_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM studies WHERE id = ?", (study_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    out["command"] = json.loads(out["command"])
    out["result"] = json.loads(out["result"]) if out.get("result") else {}
    return out
