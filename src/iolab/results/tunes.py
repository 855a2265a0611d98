"""Tunes and trials in the results database (tables from migration 2 of ``results.db``),
and the list of stored tunes as text or JSON (``results tunes``, ``tune --list``). Here, in
the results layer, so that ``results`` and ``diagnose --proof`` read tunes without ``tune``.

A trial is written the moment it finishes, so an interrupted tune loses at most the trial
that was running; ``iolab tune --resume ID`` reads the finished ones back.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from iolab.results.db import transaction
from iolab.units import fmt_time, now_time


def _now() -> str:
    return now_time()  # the one form of a time (units.fmt_time)


@dataclass(frozen=True)
class Trial:
    number: int
    phase: str  # "search" | "repeat" (a top candidate measured again) | "confirm"
    params: dict[str, str]
    status: str
    value: float | None
    run_id: int | None = None
    error: str | None = None
    ignored: tuple[str, ...] = ()
    wall_time_s: float | None = None
    settings: dict[str, str] = field(default_factory=dict)  # knob -> value in effect


def create_tune(conn: sqlite3.Connection, command: Sequence[str], objective: Mapping[str, Any],
                space: Mapping[str, Any], budget: int, confirm: int, seed: int,
                policy: Mapping[str, Any] | None = None) -> int:
    """A new running tune. Its search ``policy`` (repeats, winner rule, sampler settings;
    iolab.tune.policy.Policy) goes into the result document from the start, where the
    finished result keeps it, so ``--resume`` continues with the same one."""
    now = _now()
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO tunes (created_at, updated_at, status, command, objective, space, "
            "budget, confirm, seed, result) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
            (now, now, json.dumps(list(command)), json.dumps(objective), json.dumps(space),
             budget, confirm, seed,
             json.dumps({"policy": dict(policy)}) if policy is not None else None))
    return int(cur.lastrowid or 0)


def update_tune(conn: sqlite3.Connection, tune_id: int, *, status: str | None = None,
                implementation: str | None = None, result: Mapping[str, Any] | None = None,
                space: Mapping[str, Any] | None = None) -> None:
    sets, vals = ["updated_at = ?"], [_now()]
    for col, val in (("status", status), ("implementation", implementation),
                     ("result", json.dumps(result) if result is not None else None),
                     ("space", json.dumps(space) if space is not None else None)):
        if val is not None:
            sets.append(f"{col} = ?")
            vals.append(val)
    with transaction(conn):
        conn.execute(f"UPDATE tunes SET {', '.join(sets)} WHERE id = ?", (*vals, tune_id))


def forget_tune(conn: sqlite3.Connection, tune_id: int) -> None:
    """Remove a tune that stored no trial (its workload was refused as bad input before the
    first run): bad input leaves nothing in the database."""
    with transaction(conn):
        if conn.execute("SELECT 1 FROM trials WHERE tune_id = ? LIMIT 1",
                        (tune_id,)).fetchone() is None:
            conn.execute("DELETE FROM tunes WHERE id = ?", (tune_id,))


def add_trial(conn: sqlite3.Connection, tune_id: int, trial: Trial) -> None:
    """The database files a repeat as a search run (its phase column knows search and
    confirm): a search run of a configuration measured before is a repeat, which the tuner
    derives again on --resume (iolab.tune.search.mark_repeats)."""
    phase = "search" if trial.phase == "repeat" else trial.phase
    with transaction(conn):
        conn.execute(
            "INSERT INTO trials (tune_id, number, phase, params, status, value, run_id, error, "
            "ignored, wall_time_s, settings, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tune_id, trial.number, phase, json.dumps(trial.params), trial.status,
             trial.value, trial.run_id, trial.error, json.dumps(list(trial.ignored)),
             trial.wall_time_s, json.dumps(trial.settings), _now()))


def get_tune(conn: sqlite3.Connection, tune_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM tunes WHERE id = ?", (tune_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    for col in ("command", "objective", "space", "result"):
        if isinstance(out.get(col), str):
            out[col] = json.loads(out[col])
    return out


def list_tunes(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT t.id, t.created_at, t.status, t.implementation, t.budget, t.result, "
        "(SELECT COUNT(*) FROM trials r WHERE r.tune_id = t.id) AS trials "
        "FROM tunes t ORDER BY t.id").fetchall()
    out = []
    for r in rows:
        d = dict(r)
        d["result"] = json.loads(d["result"]) if d.get("result") else None
        out.append(d)
    return out


def trials(conn: sqlite3.Connection, tune_id: int) -> list[Trial]:
    rows = conn.execute("SELECT * FROM trials WHERE tune_id = ? ORDER BY number",
                        (tune_id,)).fetchall()
    return [Trial(r["number"], r["phase"], json.loads(r["params"]), r["status"], r["value"],
                  r["run_id"], r["error"], tuple(json.loads(r["ignored"] or "[]")),
                  r["wall_time_s"], json.loads(r["settings"] or "{}")) for r in rows]


def tunes_json(rows: list[dict[str, Any]]) -> str:
    """The stored tunes as one JSON document (``tune --list --json``, ``results tunes
    --json``)."""
    return json.dumps({"schema_version": 1, "kind": "tunes", "tunes": rows}, indent=2) + "\n"


def tunes_table(rows: list[dict[str, Any]]) -> str:
    """The stored tunes, one line each: status, implementation, trials, the claim, the winner."""
    if not rows:
        return "(no tunes)\n"
    out = [f"{'id':>4}  {'created':25}  {'status':11} {'impl':6} {'trials':>6}  result"]
    for r in rows:
        res = r.get("result") or {}
        claim = res.get("claim") or {}
        what = (f"{claim.get('speedup', 0):.2f}x" + ("" if claim.get("significant") else
                                                      " (not significant)")) if claim else "-"
        winner = " ".join(f"{k}={v}" for k, v in (res.get("winner") or {}).items())
        out.append(f"{r['id']:>4}  {fmt_time(r['created_at']):25}  {r['status']:11} "
                   f"{r.get('implementation') or '-':6} {r['trials']:>6}  {what}  {winner}")
    return "\n".join(out) + "\n"
