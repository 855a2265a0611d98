"""Sweeps and their points in the results database (migration 3 of ``results.db``).

A point is written the moment it finishes, so an interrupted sweep loses at most the point
that was running; ``iolab sweep --resume ID`` runs only the points not stored as ok.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from iolab.pages.prep_bench import SweepPoint
from iolab.results.db import get_run, transaction
from iolab.units import now_time


def _now() -> str:
    return now_time()  # the one form of a time (units.fmt_time)


def create_sweep(conn: sqlite3.Connection, command: Sequence[str], bench_args: Sequence[str],
                 grid: Sequence[tuple[str, Sequence[str]]], repetitions: int,
                 study_id: int | None = None, name: str | None = None) -> int:
    now = _now()
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO sweeps (created_at, updated_at, status, command, bench_args, grid, "
            "repetitions, study_id, name) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)",
            (now, now, json.dumps(list(command)), json.dumps(list(bench_args)),
             json.dumps([[n, list(v)] for n, v in grid]), repetitions, study_id, name))
    return int(cur.lastrowid or 0)


def set_status(conn: sqlite3.Connection, sweep_id: int, status: str) -> None:
    with transaction(conn):
        conn.execute("UPDATE sweeps SET status = ?, updated_at = ? WHERE id = ?",
                     (status, _now(), sweep_id))


def add_point(conn: sqlite3.Connection, sweep_id: int, number: int, params: Mapping[str, str],
              status: str, run_id: int | None, error: str | None, wall_time_s: float) -> None:
    """Store a finished point (a point run again on resume replaces its failed row)."""
    with transaction(conn):
        conn.execute(
            "INSERT OR REPLACE INTO sweep_points (sweep_id, number, params, status, run_id, "
            "error, wall_time_s, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (sweep_id, number, json.dumps(dict(params)), status, run_id, error, wall_time_s,
             _now()))


def get_sweep(conn: sqlite3.Connection, sweep_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    for col in ("command", "bench_args", "grid"):
        out[col] = json.loads(out[col])
    out["grid"] = [(n, list(v)) for n, v in out["grid"]]
    return out


def point_rows(conn: sqlite3.Connection, sweep_id: int) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT * FROM sweep_points WHERE sweep_id = ? ORDER BY number",
                        (sweep_id,)).fetchall()
    return [{**dict(r), "params": json.loads(r["params"])} for r in rows]


def sweep_points(conn: sqlite3.Connection, sweep_id: int) -> list[SweepPoint]:
    """The stored points with their runs' engine documents."""
    out = []
    for r in point_rows(conn, sweep_id):
        run = get_run(conn, r["run_id"]) if r["run_id"] is not None else None
        doc = run.get("engine_json") if run else None
        out.append(SweepPoint(r["params"], r["status"], doc if isinstance(doc, dict) else None,
                              r["run_id"]))
    return out


def list_sweeps(conn: sqlite3.Connection, study_id: int | None = None) -> list[dict[str, Any]]:
    sql = ("SELECT s.*, (SELECT COUNT(*) FROM sweep_points p WHERE p.sweep_id = s.id "
           "AND p.status = 'ok') AS done FROM sweeps s")
    args: tuple[Any, ...] = ()
    if study_id is not None:
        sql += " WHERE s.study_id = ?"
        args = (study_id,)
    return [dict(r) for r in conn.execute(sql + " ORDER BY s.id", args)]
