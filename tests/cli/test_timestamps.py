"""One timestamp format: ISO 8601 to the second with its zone, in UTC, wherever iolab
prints or stores a time.

Expected: ``2026-11-27T15:51:42+00:00`` in the results table, ``show``, JSON, CSV, the
sweep and tune lists, the database, and ``profile show``. Was: ``...Z`` for runs,
``+00:00`` for sweeps/tunes/studies, ``2026-11-27T15:51:42`` (no zone) in ``tune --list``,
``2026-11-27 15:51:42 UTC`` in ``profile show``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from cli_helpers import iolab

from iolab.units import fmt_time, now_time

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"


@pytest.mark.parametrize(("when", "shown"), [
    (datetime(2026, 11, 27, 15, 51, 42, 999, tzinfo=timezone.utc), "2026-11-27T15:51:42+00:00"),
    (datetime(2026, 11, 27, 17, 51, 42, tzinfo=timezone(timedelta(hours=2))),
     "2026-11-27T15:51:42+00:00"),
    (datetime(2026, 11, 27, 15, 51, 42), "2026-11-27T15:51:42+00:00"),  # naive: UTC
    (1795794702.25, "2026-11-27T15:51:42+00:00"),
    ("2026-11-27T15:51:42Z", "2026-11-27T15:51:42+00:00"),  # databases before this form
    ("2026-11-27T15:51:42+00:00", "2026-11-27T15:51:42+00:00"),
    ("2026-11-27T16:51:42+01:00", "2026-11-27T15:51:42+00:00"),
    (None, "-"),
    ("not a time", "not a time"),  # shown as stored, never lost
])
def test_fmt_time_is_one_form(when: object, shown: str) -> None:
    assert fmt_time(when) == shown


def test_now_is_that_form() -> None:
    assert re.fullmatch(ISO, now_time())


def _times(text: str) -> list[str]:
    return re.findall(r"\d{4}-\d\d-\d\d[T ][\d:]{8}\S*", text)


def test_every_listing_shows_iso_with_zone(stored_db: Path) -> None:
    """expected ISO 8601 with +00:00 in every listing / was three forms (Z, +00:00, none)."""
    db = str(stored_db)
    texts = {name: iolab(*argv, "--db", db) for name, argv in {
        "results": ["results"], "show": ["results", "show", "1"],
        "sweep --list": ["sweep", "--list"], "tune --list": ["tune", "--list"],
        "results tunes": ["results", "tunes"]}.items()}
    for name, r in texts.items():
        assert r.returncode == 0, (name, r.stderr)
        found = _times(r.stdout)
        assert found and all(re.fullmatch(ISO, t) for t in found), (name, found)
    doc = json.loads(iolab("results", "--json", "--db", db).stdout)
    assert all(re.fullmatch(ISO, r["created_at"]) for r in doc["runs"])
    shown = json.loads(iolab("results", "show", "1", "--json", "--db", db).stdout)
    assert re.fullmatch(ISO, shown["run"]["created_at"])
    # the engine writes its start time '...Z'; iolab shows it in the one form
    assert re.fullmatch(ISO, shown["engine"]["environment"]["start_time"])
    rows = list(csv.DictReader(io.StringIO(iolab("results", "--csv", "--db", db).stdout)))
    assert rows and all(re.fullmatch(ISO, r["created_at"]) for r in rows)
    conn = sqlite3.connect(stored_db)
    try:
        for table in ("runs", "sweeps", "tunes"):
            stored = [r[0] for r in conn.execute(f"SELECT created_at FROM {table}")]
            assert stored and all(re.fullmatch(ISO, t) for t in stored), (table, stored)
        starts = [json.loads(r[0])["environment"]["start_time"]
                  for r in conn.execute("SELECT engine_json FROM runs")]
        assert starts and all(re.fullmatch(ISO, t) for t in starts), starts
    finally:
        conn.close()


def test_an_older_databases_z_is_shown_in_the_one_form(stored_db: Path, tmp_path: Path) -> None:
    """expected +00:00 for a run an older iolab stored as '...Z' / was the Z shown as stored."""
    copy = tmp_path / "old.db"
    copy.write_bytes(stored_db.read_bytes())
    conn = sqlite3.connect(copy)
    with conn:
        conn.execute("UPDATE runs SET created_at = '2025-01-02T03:04:05Z' WHERE id = 1")
    conn.close()
    r = iolab("results", "show", "1", "--db", str(copy), "--json")
    assert json.loads(r.stdout)["run"]["created_at"] == "2025-01-02T03:04:05+00:00"


def test_profile_show_header(profile_file: Path) -> None:
    """expected ``(2026-...+00:00)`` / was ``(2026-... UTC)`` in ``profile show``."""
    r = iolab("profile", "show", str(profile_file))
    assert r.returncode == 0, r.stderr
    start = next(ln for ln in r.stdout.splitlines() if ln.startswith("# start_time:"))
    assert re.search(rf"\(({ISO})\)$", start), start
