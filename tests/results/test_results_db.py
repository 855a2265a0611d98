"""The results database: location, schema and migrations, store/list/get, concurrent
writers; and the ``iolab results`` verb (text, --json, --csv, bad input)."""

from __future__ import annotations

import copy
import csv
import io
import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from iolab.cli import main
from iolab.errors import UsageError
from iolab.results import db

MIB = 1 << 20


def engine_doc(status: str = "ok", reps: int = 2, ranks: int = 2) -> dict[str, Any]:
    """A document shaped as docs/engine-json.md says (the values are made up)."""
    per_phase = ranks * 4 * MIB

    def phase(op: str, bw: float) -> dict[str, Any]:
        return {"op": op, "pass": 0, "cache": "cold" if op == "read" else "n/a",
                "eviction": None, "bytes": per_phase, "ops": ranks * 4, "time_s": 0.5,
                "bw_bytes_per_s": bw, "iops": 16.0, "open_s": {"min": 0, "max": 0},
                "xfer_s": {"min": 0.4, "max": 0.5}, "close_s": {"min": 0, "max": 0},
                "per_rank": []}

    stats = {"min": 1.0 * MIB, "median": 2.0 * MIB, "max": 3.0 * MIB, "mean": 2.0 * MIB,
             "stddev": 1.0}
    return {
        "schema_version": 1, "tool": {"name": "iolab-bench", "version": "0.1.0"},
        "status": status, "error": None,
        "config": {"api": "posix", "layout": "segmented", "transfer_bytes": MIB,
                   "block_bytes": 4 * MIB, "segments": 1, "repetitions": reps,
                   "path": "/scratch/f", "posix_mode": "buffered", "collective": False},
        "environment": {"hosts": ["n1"], "ranks": ranks, "ranks_per_host": {"n1": ranks},
                        "mpi_library": "Open MPI v4.1.4", "mpiio_implementation": "ompio",
                        "fs_type": "ext4"},
        "hints": {},
        "repetitions": [{"index": i, "phases": [phase("write", 8.0 * MIB),
                                                phase("read", 16.0 * MIB)]}
                        for i in range(reps)],
        "summary": {"write": {"bw_bytes_per_s": stats, "iops": stats, "time_s": stats},
                    "read": {"bw_bytes_per_s": {**stats, "median": 5.0 * MIB},
                             "iops": stats, "time_s": stats}},
        "verify": {"enabled": False, "errors": 0, "first_bad": None},
    }


def failed_doc() -> dict[str, Any]:
    doc = engine_doc("failed", reps=1)
    doc["repetitions"][0]["phases"] = []  # died in the first write
    doc["summary"] = {}
    doc["error"] = {"phase": "write", "rank": 1, "errno": 28,
                    "message": "No space left on device", "bytes_done": 123456}
    return doc


@pytest.fixture
def conn(tmp_path: Path) -> Any:
    c = db.connect(tmp_path / "r.db")
    yield c
    c.close()


def test_default_location() -> None:
    assert db.default_db_path({"IOLAB_DB": "/x/y.db", "XDG_DATA_HOME": "/d"}) == Path("/x/y.db")
    assert db.default_db_path({"XDG_DATA_HOME": "/d"}) == Path("/d/iolab/results.db")
    assert db.default_db_path({}) == Path("~/.local/share/iolab/results.db").expanduser()


def test_new_database_is_wal_and_versioned(tmp_path: Path, conn: sqlite3.Connection) -> None:
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.schema_version(conn) == len(db.MIGRATIONS)
    rows = conn.execute("SELECT version, description FROM schema_version").fetchall()
    assert [r[0] for r in rows] == list(range(1, len(db.MIGRATIONS) + 1))
    cols = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    assert set(db.RUN_COLUMNS) | {"id"} == cols


def test_store_get_list_key_columns(conn: sqlite3.Connection) -> None:
    doc = engine_doc()
    rid = db.store_run(conn, db.NewRun(command=["iolab", "bench", "-a", "POSIX"], status="ok",
                                       engine_doc=doc, exit_code=0, label="t",
                                       launch_command=["mpirun", "-np", "2"],
                                       launcher="mpirun", wall_time_s=1.5))
    run = db.get_run(conn, rid)
    assert run is not None
    assert run["engine_json"] == doc  # the document whole
    assert run["command"] == ["iolab", "bench", "-a", "POSIX"]
    expect = {"status": "ok", "api": "posix", "layout": "segmented", "ranks": 2, "nodes": 1,
              "transfer_bytes": MIB, "block_bytes": 4 * MIB, "segments": 1, "repetitions": 2,
              "write_bytes_total": 2 * 8 * MIB, "read_bytes_total": 2 * 8 * MIB,
              "write_bw_median_bytes_per_s": 2.0 * MIB, "read_bw_median_bytes_per_s": 5.0 * MIB,
              "read_cache": "cold", "fs_type": "ext4", "mpiio_implementation": "ompio",
              "engine_schema_version": 1, "label": "t", "launcher": "mpirun", "error": None}
    assert {k: run[k] for k in expect} == expect
    assert run["created_at"].endswith("+00:00") and run["host"]  # ISO 8601 with its zone
    listed = db.list_runs(conn)
    assert [r["id"] for r in listed] == [rid] and "engine_json" not in listed[0]


def test_failed_and_engineless_runs_are_stored(conn: sqlite3.Connection) -> None:
    rid = db.store_run(conn, db.NewRun(command=["iolab"], status="failed",
                                       engine_doc=failed_doc(), exit_code=1))
    run = db.get_run(conn, rid)
    assert run is not None
    assert run["error"] == "No space left on device"
    assert run["write_bytes_total"] == 123456 and run["read_bytes_total"] is None
    # the engine lists the cut-short phase itself: its bytes are not counted twice
    doc = failed_doc()
    doc["repetitions"][0]["phases"] = [{"op": "write", "bytes": 123456, "per_rank": []}]
    rid1 = db.store_run(conn, db.NewRun(command=["iolab"], status="failed", engine_doc=doc))
    run1 = db.get_run(conn, rid1)
    assert run1 is not None and run1["write_bytes_total"] == 123456
    rid2 = db.store_run(conn, db.NewRun(command=["iolab"], status="interrupted",
                                        error="interrupted before the engine printed"))
    run2 = db.get_run(conn, rid2)
    assert run2 is not None and run2["engine_json"] is None and run2["api"] is None
    with pytest.raises(ValueError):
        db.store_run(conn, db.NewRun(command=["iolab"], status="weird"))


def test_filters_and_limit(conn: sqlite3.Connection) -> None:
    for i in range(5):
        doc = engine_doc()
        doc["config"]["layout"] = "fpp" if i % 2 else "segmented"
        db.store_run(conn, db.NewRun(command=["x"], status="ok" if i < 4 else "failed",
                                     engine_doc=doc, label=f"l{i % 2}"))
    assert [r["id"] for r in db.list_runs(conn, db.RunFilter(layout="fpp"))] == [2, 4]
    assert [r["id"] for r in db.list_runs(conn, db.RunFilter(status="failed"))] == [5]
    assert [r["id"] for r in db.list_runs(conn, db.RunFilter(label="l0", limit=2))] == [3, 5]
    assert [r["id"] for r in db.list_runs(conn, db.RunFilter(limit=2))] == [4, 5]


EXTRA = db.Migration(len(db.MIGRATIONS) + 1, "test: extras",
                     "CREATE TABLE extras (id INTEGER PRIMARY KEY, name TEXT);\n"
                     "ALTER TABLE runs ADD COLUMN extra_id INTEGER REFERENCES extras(id);")


def test_migration_upgrades_an_old_database_once(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    c = db.connect(path)
    rid = db.store_run(c, db.NewRun(command=["x"], status="ok", engine_doc=engine_doc()))
    c.close()
    for _ in range(2):  # the second open finds nothing to do
        c = db.connect(path, (*db.MIGRATIONS, EXTRA))
        assert db.schema_version(c) == EXTRA.version
        assert c.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == EXTRA.version
        c.close()
    c = db.connect(path, (*db.MIGRATIONS, EXTRA))
    assert c.execute("SELECT extra_id, api FROM runs WHERE id = ?", (rid,)).fetchone()[:] == \
        (None, "posix")
    c.close()
    # the old iolab refuses a newer database with one line, instead of corrupting it
    with pytest.raises(UsageError, match="newer than this iolab"):
        db.connect(path)


def test_failed_migration_rolls_back(tmp_path: Path) -> None:
    bad = db.Migration(len(db.MIGRATIONS) + 1, "broken",
                       "CREATE TABLE half (x INTEGER);\nTHIS IS NOT SQL;")
    with pytest.raises(UsageError):
        db.connect(tmp_path / "b.db", (*db.MIGRATIONS, bad))
    c = db.connect(tmp_path / "b.db")
    assert db.schema_version(c) == len(db.MIGRATIONS)
    assert c.execute("SELECT name FROM sqlite_master WHERE name = 'half'").fetchone() is None
    c.close()
    with pytest.raises(ValueError, match="count 1, 2"):
        db.migrate(sqlite3.connect(":memory:"), (db.Migration(2, "gap", "SELECT 1;"),))


def test_not_a_database(tmp_path: Path) -> None:
    p = tmp_path / "junk.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(UsageError, match="not a usable iolab results database"):
        db.connect(p)


def _writer(path: str, n: int, tag: int, start: Any) -> None:
    start.wait()  # every process opens the fresh database at the same moment
    c = db.connect(path)
    for i in range(n):
        db.store_run(c, db.NewRun(command=["w", str(tag), str(i)], status="ok",
                                  engine_doc=engine_doc(), label=f"w{tag}"))
    c.close()


def test_concurrent_writers_on_a_fresh_database(tmp_path: Path) -> None:
    """Six processes create the schema and store runs at the same time: nothing lost.

    Repeated on fresh databases: the race (switching to WAL refuses at once, without the
    busy handler) showed up in about 1 of 25 opens before connect() retried it.
    """
    ctx = multiprocessing.get_context("fork")
    for attempt in range(15):
        path = str(tmp_path / f"c{attempt}.db")
        start = ctx.Barrier(6)
        procs = [ctx.Process(target=_writer, args=(path, 5 if attempt else 20, t, start))
                 for t in range(6)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        assert [p.exitcode for p in procs] == [0] * 6, f"attempt {attempt}"
        c = db.connect(path)
        runs = db.list_runs(c)
        per = 5 if attempt else 20
        assert len(runs) == 6 * per and len({r["id"] for r in runs}) == 6 * per
        assert {r["label"] for r in runs} == {f"w{t}" for t in range(6)}
        assert db.schema_version(c) == len(db.MIGRATIONS)
        c.close()


# --- the verb ------------------------------------------------------------------------------

@pytest.fixture
def filled(tmp_path: Path) -> Path:
    path = tmp_path / "v.db"
    c = db.connect(path)
    db.store_run(c, db.NewRun(command=["iolab", "bench"], status="ok", engine_doc=engine_doc(),
                              label="default:fpp"))
    db.store_run(c, db.NewRun(command=["iolab", "bench"], status="failed",
                              engine_doc=failed_doc(), exit_code=1))
    c.close()
    return path


def test_results_list_text_json_csv(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["results", "--db", str(filled)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["run", "time", "(UTC)"] and len(lines) == 4
    assert "default:fpp" in lines[2] and "2.0" in lines[2] and "failed" in lines[3]

    assert main(["results", "--db", str(filled), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 3 and doc["kind"] == "runs"
    assert [r["id"] for r in doc["runs"]] == [1, 2]
    assert doc["runs"][0]["write_bw_median_bytes_per_s"] == 2.0 * MIB

    assert main(["results", "--db", str(filled), "--csv", "--status", "failed"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 1 and rows[0]["id"] == "2" and rows[0]["status"] == "failed"
    assert "write_bw_median_bytes_per_s" in rows[0]


def test_results_show(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["results", "show", "1", "--db", str(filled)]) == 0
    out = capsys.readouterr().out
    assert "Run 1" in out and "Phases" in out and "segmented" in out and "4 MiB" in out
    assert main(["results", "show", "1", "--db", str(filled), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["id"] == 1 and doc["engine"] == engine_doc()
    assert len(doc["phases"]) == 4 and doc["phases"][0]["bytes"] == 8 * MIB
    assert main(["results", "show", "1", "--db", str(filled), "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["op"] for r in rows] == ["write", "read", "write", "read"]
    assert main(["results", "show", "2", "--db", str(filled)]) == 0
    assert "No space left on device" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["results", "show"], "needs a run id"),
    (["results", "show", "abc"], "run id must be a number"),
    (["results", "show", "99"], "no run 99"),
    (["results", "3"], "invalid choice"),
    (["results", "list", "3"], "unexpected argument"),
    (["results", "--last", "0"], "--last must be at least 1"),
])
def test_results_bad_input(filled: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                           message: str) -> None:
    assert main([*argv, "--db", str(filled)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_results_unusable_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dir.db").mkdir()
    assert main(["results", "--db", str(tmp_path / "dir.db")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--db" in err[0]


def test_doc_round_trip_is_lossless(conn: sqlite3.Connection) -> None:
    doc = engine_doc()
    doc["hints"] = {"requested": {"cb_nodes": "1"}, "effective": {"cb_nodes": "1"},
                    "verifiable": False, "ignored": []}
    rid = db.store_run(conn, db.NewRun(command=["x"], status="ok", engine_doc=copy.deepcopy(doc)))
    got = db.get_run(conn, rid)
    assert got is not None and got["engine_json"] == doc
