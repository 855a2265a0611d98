"""The results database: one SQLite file (WAL mode), versioned schema, migrations.

Location (first that applies): ``--db PATH``, ``$IOLAB_DB``, ``$XDG_DATA_HOME/iolab/results.db``,
``~/.local/share/iolab/results.db``; an empty ``--db`` or ``IOLAB_DB`` is refused. Commands
that only read open it read-only (:func:`connect_read_only`): it may sit on a read-only file
system.

Every command that measures stores its run here *first*, before printing anything, so a run
is never lost when a later step (rendering, a pipe closed early) fails. A run row keeps the
engine's JSON document whole (``engine_json``) plus key columns copied out of it for queries.
Later parts of iolab (sweeps, tunes, trials, studies) add tables that point at ``runs.id``
through new migrations appended to :data:`MIGRATIONS`; a migration is never edited once
released, so every database upgrades step by step to the newest schema.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import socket
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.runs.engine_doc import MeasuredRun, from_json
from iolab.units import fmt_time, now_time

RUN_STATUSES = ("ok", "failed", "interrupted")
BUSY_TIMEOUT_MS = 60_000  # concurrent writers (a sweep's parallel trials) wait, not fail


@dataclass(frozen=True)
class Migration:
    """One step of the schema; ``version`` counts from 1 and never skips."""

    version: int
    description: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs: one row per engine run, the engine JSON whole plus key columns", """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,              -- UTC, ISO 8601, when the run was stored
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'interrupted')),
    exit_code INTEGER,                     -- the launcher's exit code
    error TEXT,                            -- one line when status is not 'ok'
    label TEXT,                            -- e.g. 'default:fpp' for the default job's runs
    command TEXT NOT NULL,                 -- JSON array: the iolab command line
    launch_command TEXT,                   -- JSON array: the mpirun/srun command line run
    launcher TEXT,                         -- mpirun | srun | none
    host TEXT,                             -- where iolab ran
    user TEXT,
    cwd TEXT,
    wall_time_s REAL,                      -- launcher start to exit, seen from Python
    api TEXT,
    layout TEXT,
    ranks INTEGER,
    nodes INTEGER,
    transfer_bytes INTEGER,
    block_bytes INTEGER,
    segments INTEGER,
    repetitions INTEGER,
    write_bytes_total INTEGER,             -- over all repetitions (bytes done so far if failed)
    read_bytes_total INTEGER,              -- over all repetitions and read passes
    write_bw_median_bytes_per_s REAL,
    read_bw_median_bytes_per_s REAL,
    read_cache TEXT,                       -- cold | warm | unknown | mixed | NULL (no reads)
    fs_type TEXT,
    path TEXT,
    mpi_library TEXT,
    mpiio_implementation TEXT,
    engine_version TEXT,
    engine_schema_version INTEGER,
    engine_json TEXT                       -- the engine's document, whole; NULL if none
);
CREATE INDEX runs_created_at ON runs (created_at);
CREATE INDEX runs_case ON runs (api, layout, ranks, transfer_bytes);
"""),
    Migration(2, "tunes and their trials (iolab tune), each trial stored as it finishes", """
CREATE TABLE tunes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    command TEXT NOT NULL,                 -- JSON array: the iolab command line
    objective TEXT NOT NULL,               -- JSON: kind, workload or command, metric, direction
    space TEXT NOT NULL,                   -- JSON: knob -> values
    budget INTEGER NOT NULL,               -- search trials (baseline included)
    confirm INTEGER NOT NULL,              -- interleaved confirmation runs of each side
    seed INTEGER NOT NULL,
    implementation TEXT,                   -- romio | ompio | NULL (not MPI-IO / unknown)
    result TEXT                            -- JSON: winner, claim, importances (when done)
);
CREATE TABLE trials (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tune_id INTEGER NOT NULL REFERENCES tunes(id),
    number INTEGER NOT NULL,               -- order within the tune
    phase TEXT NOT NULL CHECK (phase IN ('search', 'confirm')),
    params TEXT NOT NULL,                  -- JSON: knob -> value ('(default)': not set)
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'interrupted')),
    value REAL,                            -- the objective (unit in tunes.objective)
    run_id INTEGER REFERENCES runs(id),    -- bench objectives: the stored run
    error TEXT,
    ignored TEXT,                          -- JSON array: knobs the library did not honour
    wall_time_s REAL,
    settings TEXT,                         -- JSON: knob -> value in effect (read back)
    created_at TEXT NOT NULL,
    UNIQUE (tune_id, number)
);
CREATE INDEX trials_tune ON trials (tune_id, number);
"""),
    Migration(3, "sweeps and their points (iolab sweep), studies (iolab study)", """
CREATE TABLE studies (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    command TEXT NOT NULL,                 -- JSON array: the iolab command line
    size TEXT NOT NULL,                    -- quick | default | full
    host TEXT,
    result TEXT                            -- JSON: skipped experiments and why, fits, MPI
);
CREATE TABLE sweeps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    command TEXT NOT NULL,                 -- JSON array: the iolab command line
    bench_args TEXT NOT NULL,              -- JSON array: iolab bench options of every point
    grid TEXT NOT NULL,                    -- JSON: [[parameter, [values...]], ...] (1 or 2)
    repetitions INTEGER NOT NULL,          -- engine repetitions of each point
    study_id INTEGER REFERENCES studies(id),
    name TEXT                              -- a study's experiment name
);
CREATE TABLE sweep_points (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
    number INTEGER NOT NULL,               -- position in the grid (0-based)
    params TEXT NOT NULL,                  -- JSON: parameter -> value
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'interrupted')),
    run_id INTEGER REFERENCES runs(id),
    error TEXT,
    wall_time_s REAL,
    created_at TEXT NOT NULL,
    UNIQUE (sweep_id, number)
);
CREATE INDEX sweep_points_sweep ON sweep_points (sweep_id, number);
"""),
)

# Columns of ``runs`` that a caller may set; the rest are filled by :func:`store_run`.
RUN_COLUMNS = (
    "created_at", "status", "exit_code", "error", "label", "command", "launch_command",
    "launcher", "host", "user", "cwd", "wall_time_s", "api", "layout", "ranks", "nodes",
    "transfer_bytes", "block_bytes", "segments", "repetitions", "write_bytes_total",
    "read_bytes_total", "write_bw_median_bytes_per_s", "read_bw_median_bytes_per_s",
    "read_cache", "fs_type", "path", "mpi_library", "mpiio_implementation", "engine_version",
    "engine_schema_version", "engine_json",
)


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$IOLAB_DB``, else ``$XDG_DATA_HOME/iolab/results.db``, else ``~/.local/share/...``.

    An ``IOLAB_DB`` that is set but empty is a UsageError, as a bad ``--db`` is."""
    env = os.environ if environ is None else environ
    if "IOLAB_DB" in env:
        if not env["IOLAB_DB"].strip():  # an unset variable's default would hide the typo
            raise UsageError("IOLAB_DB is set but empty; set it to a results database path, "
                             "or unset it (unset IOLAB_DB) for the default")
        return Path(env["IOLAB_DB"]).expanduser()
    data_home = env.get("XDG_DATA_HOME") or str(Path("~/.local/share").expanduser())
    return Path(data_home).expanduser() / "iolab" / "results.db"


def schema_version(conn: sqlite3.Connection) -> int:
    """The newest migration applied (0 for an empty database)."""
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not has_table:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the migrations this database lacks, each in its own transaction; return the version.

    ``BEGIN IMMEDIATE`` takes the write lock before reading the version, so two processes
    opening a fresh database at once do not both create the tables.
    """
    newest = migrations[-1].version if migrations else 0
    for i, m in enumerate(migrations, start=1):
        if m.version != i:
            raise ValueError(f"migration versions must count 1, 2, ...; got {m.version} at {i}")
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
                " applied_at TEXT NOT NULL, description TEXT NOT NULL)"
            )
            current = schema_version(conn)
            if current > newest:
                raise UsageError(
                    f"the results database has schema version {current}, newer than this "
                    f"iolab knows ({newest}); upgrade iolab or use another --db"
                )
            if current == newest:
                conn.execute("COMMIT")
                return current
            step = migrations[current]
            for statement in _statements(step.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version (version, applied_at, description) VALUES (?, ?, ?)",
                (step.version, _now(), step.description),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _statements(script: str) -> Iterator[str]:
    """Split a migration into statements: ``executescript`` would commit the open transaction."""
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            yield buf.strip()
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement in a migration: {buf.strip()[:60]}")


def _now() -> str:
    return now_time()  # the one form of a time (units.fmt_time)


def _enter_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, retrying while another process holds the lock.

    Changing the journal mode needs an exclusive lock, and SQLite answers "database is locked"
    at once instead of calling the busy handler when several processes open a fresh database
    together (a sweep's first trials): so wait here, up to the same busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return True  # unreadable: let SQLite say why


def db_path(path: Path | str | None = None) -> Path:
    """The database a ``--db`` value (None: the default) names; an empty one is refused."""
    if path is not None and not str(path).strip():
        raise UsageError("--db: empty path; give the results database's path (or leave "
                         "--db out for the default)")
    return Path(path).expanduser() if path is not None else default_db_path()


def remove_unused(db: Path, folder_made: bool) -> None:
    """Remove a database this command created and stored nothing in (a run refused as bad
    input: nothing is created), with its WAL files and the folder made for it."""
    for f in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        f.unlink(missing_ok=True)
    if folder_made:
        with contextlib.suppress(OSError):
            db.parent.rmdir()


def connect(path: Path | str | None = None,
            migrations: Sequence[Migration] = MIGRATIONS,
            must_exist: bool = False, read_only: bool = False) -> sqlite3.Connection:
    """Open the database at ``path`` and bring its schema up to date.

    Commands that only read pass ``must_exist``: a missing database is a UsageError and
    nothing is created. Writers create it, with at most the missing last folder of a path
    the user gave (the default location's folders are made as needed). The connection is in
    autocommit mode; writes go through :func:`transaction`. ``read_only`` (implies
    ``must_exist``): :func:`connect_read_only`, for commands that never write.
    """
    db = db_path(path)
    if read_only:
        return connect_read_only(db, path is not None, migrations)
    if must_exist and not db.is_file():
        what = "--db" if path is not None else "the default results database"
        raise UsageError(f"{what} {db}: no such database (nothing stored there yet?); "
                         "give the --db PATH of a database 'iolab bench' wrote")
    if db.is_file() and db.stat().st_size > 0 and not _is_sqlite(db):
        raise UsageError(f"{db} is not a usable iolab results database (not SQLite); iolab "
                         "never writes into another file: give the --db PATH of one")
    if path is not None and not db.parent.exists() and not db.parent.parent.is_dir():
        raise UsageError(f"--db {db}: the folder {db.parent.parent} does not exist; create "
                         "it first (iolab makes at most the last folder)")
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(db), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot open the results database {db}: {exc}; use --db PATH") from exc
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # WAL: readers never block the writer; needs a local file system (not NFS) for the
        # shared-memory index, which is why the default lives in the home data directory.
        _enter_wal(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn, migrations)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise UsageError(f"{db} is not a usable iolab results database ({exc}); use --db PATH") \
            from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _uri(db: Path, mode: str, immutable: bool = False) -> str:
    quoted = urllib.parse.quote(str(db.resolve()))
    return f"file:{quoted}?mode={mode}" + ("&immutable=1" if immutable else "")


def _open_query_only(db: Path) -> sqlite3.Connection | None:
    """Where the database and its folder are writable: an ordinary connection that refuses
    every write (``query_only``). Not ``mode=ro``: SQLite removes the ``-wal`` and ``-shm``
    it made only when a read-write connection closes last, and a reader must not leave them."""
    if not (os.access(db, os.W_OK) and os.access(db.parent, os.W_OK)):
        return None
    conn = sqlite3.connect(_uri(db, "rw"), uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                           isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = ON")
        schema_version(conn)
        return conn
    except sqlite3.OperationalError:
        conn.close()
        return None  # e.g. writable by mode but not in fact: read it with mode=ro


def _open_read_only(db: Path) -> sqlite3.Connection:
    """``mode=ro``; where SQLite cannot make the WAL's ``-shm`` index beside the database (a
    read-only file system or folder) and no ``-wal`` holds unmerged writes, ``immutable=1``:
    nobody can write there either, so there is no change to miss."""
    conn_rw = _open_query_only(db)
    if conn_rw is not None:
        return conn_rw
    wal = Path(f"{db}-wal")
    conn = sqlite3.connect(_uri(db, "ro"), uri=True,
                           timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        schema_version(conn)  # SQLite opens lazily: the first read says whether it can
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if "unable to open" not in str(exc) and "readonly" not in str(exc):
            raise
        if wal.is_file() and wal.stat().st_size > 0:
            raise UsageError(
                f"{db}: its {wal.name} holds writes not yet merged into it (a writer stopped "
                "before closing), and reading them needs to create files in "
                f"{db.parent}; copy {db.name} and {wal.name} to a writable folder and "
                "give --db there") from None
    return sqlite3.connect(_uri(db, "ro", immutable=True), uri=True, isolation_level=None)


def connect_read_only(db: Path, given: bool = True,
                      migrations: Sequence[Migration] = MIGRATIONS) -> sqlite3.Connection:
    """Open an existing database for reading only: works on a read-only file system or
    folder, takes no write lock, and never changes the file (``iolab results``, ``report``,
    ``compare``). An older schema is upgraded first where the file is writable (as any
    command of this iolab would); where it is not, a UsageError says so."""
    if not db.is_file():
        what = "--db" if given else "the default results database"
        raise UsageError(f"{what} {db}: no such database (nothing stored there yet?); "
                         "give the --db PATH of a database 'iolab bench' wrote")
    if db.stat().st_size > 0 and not _is_sqlite(db):
        raise UsageError(f"{db} is not a usable iolab results database (not SQLite); iolab "
                         "never writes into another file: give the --db PATH of one")
    newest = migrations[-1].version if migrations else 0
    try:
        conn = _open_read_only(db)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{db} is not a usable iolab results database ({exc}); use --db "
                         "PATH") from exc
    conn.row_factory = sqlite3.Row
    try:
        current = schema_version(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise UsageError(f"{db} is not a usable iolab results database ({exc}); use --db "
                         "PATH") from exc
    if current > newest:
        conn.close()
        raise UsageError(f"the results database {db} has schema version {current}, newer "
                         f"than this iolab knows ({newest}); upgrade iolab or use another --db")
    if current < newest:
        conn.close()
        if not (os.access(db, os.W_OK) and os.access(db.parent, os.W_OK)):
            raise UsageError(f"{db}: schema version {current}, older than this iolab's "
                             f"({newest}), and the file is read-only here; upgrade it once "
                             "where it is writable (any iolab command that reads it does)")
        connect(db, migrations, must_exist=True).close()
        return connect_read_only(db, given, migrations)
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken with the write lock up front (no upgrade deadlocks)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@dataclass
class NewRun:
    """What a measuring verb knows about a run it made; :func:`store_run` adds the rest."""

    command: Sequence[str]
    status: str
    engine_doc: Mapping[str, Any] | None = None
    exit_code: int | None = None
    error: str | None = None
    label: str | None = None
    launch_command: Sequence[str] | None = None
    launcher: str | None = None
    wall_time_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # key columns the doc lacks


def _phase_totals(run: MeasuredRun) -> dict[str, int]:
    totals: dict[str, int] = {}
    last_ops: set[str] = set()
    for rep in run.repetitions:
        last_ops = {str(ph.op) for ph in rep.phases}
        for ph in rep.phases:
            if ph.op is not None and ph.bytes is not None:
                totals[ph.op] = totals.get(ph.op, 0) + ph.bytes
    err = run.error
    if err is not None and err.bytes_done is not None:
        # The engine lists the phase an error cut short (with its bytes); should it not,
        # the error's bytes_done is the only record of what that phase did.
        op = str(err.phase or "")
        if op in ("write", "read") and op not in last_ops:
            totals[op] = totals.get(op, 0) + err.bytes_done
    return totals


def _read_cache(run: MeasuredRun) -> str | None:
    seen = {ph.cache for ph in run.phases("read")}
    if not seen:
        return None
    return seen.pop() if len(seen) == 1 else "mixed"


def key_columns(doc: Mapping[str, Any] | None) -> dict[str, Any]:
    """The columns copied out of an engine document (``docs/engine-json.md``)."""
    if not doc:
        return {}
    run = from_json(doc)
    cfg, env = run.config, run.environment
    totals = _phase_totals(run)
    return {
        "api": cfg.get("api"),
        "layout": cfg.get("layout"),
        "ranks": env.ranks,
        "nodes": len(env.hosts) if env.hosts is not None else None,
        "transfer_bytes": cfg.get("transfer_bytes"),
        "block_bytes": cfg.get("block_bytes"),
        "segments": cfg.get("segments"),
        "repetitions": cfg.get("repetitions"),
        "write_bytes_total": totals.get("write"),
        "read_bytes_total": totals.get("read"),
        "write_bw_median_bytes_per_s": run.op_summary("write").bw_bytes_per_s.median,
        "read_bw_median_bytes_per_s": run.op_summary("read").bw_bytes_per_s.median,
        "read_cache": _read_cache(run),
        "fs_type": env.fs_type,
        "path": cfg.get("path"),
        "mpi_library": env.mpi_library,
        "mpiio_implementation": env.mpiio_implementation,
        "engine_version": run.tool.version,
        "engine_schema_version": run.schema_version,
        "error": run.error.message if run.error is not None else None,
    }


def store_run(conn: sqlite3.Connection, run: NewRun) -> int:
    """Insert one run; return its id. Key columns come from the engine document."""
    if run.status not in RUN_STATUSES:
        raise ValueError(f"run status must be one of {RUN_STATUSES}, got {run.status!r}")
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        user = str(os.getuid())
    values: dict[str, Any] = {
        "created_at": _now(), "status": run.status, "exit_code": run.exit_code,
        "label": run.label, "command": json.dumps(list(run.command)),
        "launch_command": json.dumps(list(run.launch_command)) if run.launch_command else None,
        "launcher": run.launcher, "host": socket.gethostname(), "user": user,
        "cwd": os.getcwd(), "wall_time_s": run.wall_time_s,
        "engine_json": json.dumps(_one_time_form(run.engine_doc))
        if run.engine_doc is not None else None,
    }
    for k, v in {**key_columns(run.engine_doc), **run.extra}.items():
        if v is not None or k not in values:
            values[k] = v
    if run.error:  # the caller's line (what went wrong around the engine) wins
        values["error"] = run.error
    unknown = set(values) - set(RUN_COLUMNS)
    if unknown:
        raise ValueError(f"not columns of runs: {sorted(unknown)}")
    cols = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    with transaction(conn):
        cur = conn.execute(f"INSERT INTO runs ({cols}) VALUES ({marks})", list(values.values()))
    return int(cur.lastrowid or 0)


@dataclass(frozen=True)
class RunFilter:
    """Which runs ``iolab results`` lists; ``None`` means any."""

    status: str | None = None
    api: str | None = None
    layout: str | None = None
    label: str | None = None
    limit: int | None = None


def list_runs(conn: sqlite3.Connection, flt: RunFilter = RunFilter()) -> list[dict[str, Any]]:
    """Runs without their engine document, newest last (ids in order)."""
    where, params = [], []
    for col in ("status", "api", "layout", "label"):
        val = getattr(flt, col)
        if val is not None:
            where.append(f"{col} = ? COLLATE NOCASE")
            params.append(val)
    cols = ", ".join(("id", *(c for c in RUN_COLUMNS if c != "engine_json"),
                      *_FROM_DOCUMENT))
    sql = f"SELECT {cols} FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id DESC"
    if flt.limit is not None:
        sql += " LIMIT ?"
        params.append(flt.limit)
    rows = [_decode(dict(r)) for r in conn.execute(sql, params)]
    return rows[::-1]


# Machine-readable columns read out of the stored document (no schema change needed).
_FROM_DOCUMENT = (
    "json_extract(engine_json, '$.config.collective') AS collective",
    "json_extract(engine_json, '$.config.file_view') AS file_view",
    "json_extract(engine_json, '$.hints.effective') AS hints",
    # a metadata run (--metadata easy|hard) and its phases' median operations per second
    "json_extract(engine_json, '$.config.metadata') AS metadata",
    *(f"json_extract(engine_json, '$.summary.{op}.iops.median') AS {op}_ops_per_s_median"
      for op in ("create", "stat", "open_read", "remove")),
)


def stored_values(conn: sqlite3.Connection, column: str) -> list[str]:
    """The distinct values of a filter column (to tell a typo from an empty result)."""
    if column not in ("status", "api", "layout", "label"):
        raise ValueError(f"not a filter column: {column}")
    rows = conn.execute(f"SELECT DISTINCT {column} FROM runs WHERE {column} IS NOT NULL "
                        f"ORDER BY {column}")
    return [str(r[0]) for r in rows]


def delete_runs(conn: sqlite3.Connection, run_ids: Sequence[int]) -> int:
    """Delete these runs (all or none); return how many were deleted."""
    with transaction(conn):
        cur = conn.executemany("DELETE FROM runs WHERE id = ?", [(i,) for i in run_ids])
    return int(cur.rowcount)


# What a run can belong to: a sweep's point or a tune's trial (a study owns its sweeps).
GROUP_KINDS = ("sweep", "tune", "study")


def run_owners(conn: sqlite3.Connection, run_ids: Sequence[int]) -> dict[int, tuple[str, int]]:
    """run id -> (kind, id) of the sweep, tune or study it belongs to, for the runs that
    belong to one: such a run goes only with the whole of it (its points, its trials)."""
    owners: dict[int, tuple[str, int]] = {}
    for rid in run_ids:
        row = conn.execute("SELECT p.sweep_id, s.study_id FROM sweep_points p JOIN sweeps s "
                           "ON s.id = p.sweep_id WHERE p.run_id = ?", (rid,)).fetchone()
        if row is not None:
            owners[rid] = ("study", int(row[1])) if row[1] else ("sweep", int(row[0]))
            continue
        row = conn.execute("SELECT tune_id FROM trials WHERE run_id = ?", (rid,)).fetchone()
        if row is not None:
            owners[rid] = ("tune", int(row[0]))
    return owners


def group_exists(conn: sqlite3.Connection, kind: str, ident: int) -> bool:
    table = {"sweep": "sweeps", "tune": "tunes", "study": "studies"}[kind]
    return conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (ident,)).fetchone() is not None


def sweep_study(conn: sqlite3.Connection, sweep_id: int) -> int | None:
    """The study a sweep is an experiment of (None: a sweep of its own)."""
    row = conn.execute("SELECT study_id FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else None


def delete_group(conn: sqlite3.Connection, kind: str, ident: int) -> int:
    """Delete a sweep (its points), a tune (its trials) or a study (its sweeps), with every
    run they hold, all or nothing; return how many runs were deleted."""
    with transaction(conn):
        return _delete_group(conn, kind, ident)


def _delete_group(conn: sqlite3.Connection, kind: str, ident: int) -> int:
    if kind == "study":
        sweeps = [int(r[0]) for r in
                  conn.execute("SELECT id FROM sweeps WHERE study_id = ?", (ident,))]
        n = sum(_delete_group(conn, "sweep", s) for s in sweeps)
        conn.execute("DELETE FROM studies WHERE id = ?", (ident,))
        return n
    table, parent, key = {"sweep": ("sweep_points", "sweeps", "sweep_id"),
                          "tune": ("trials", "tunes", "tune_id")}[kind]
    runs = [int(r[0]) for r in conn.execute(
        f"SELECT run_id FROM {table} WHERE {key} = ? AND run_id IS NOT NULL", (ident,))]
    conn.execute(f"DELETE FROM {table} WHERE {key} = ?", (ident,))
    conn.execute(f"DELETE FROM {parent} WHERE id = ?", (ident,))
    conn.executemany("DELETE FROM runs WHERE id = ?", [(i,) for i in runs])
    return len(runs)


def get_run(conn: sqlite3.Connection, run_id: int) -> dict[str, Any] | None:
    """One run with its engine document decoded (``engine_json`` is a dict or None)."""
    row = conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
    return _decode(dict(row)) if row else None


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    if row.get("created_at"):  # databases before the one form stored '...Z'
        row["created_at"] = fmt_time(row["created_at"])
    for col in ("collective", "file_view"):  # JSON true/false come back from SQLite as 1/0
        if isinstance(row.get(col), int):
            row[col] = bool(row[col])
    for col in ("command", "launch_command", "engine_json"):
        if isinstance(row.get(col), str):
            try:
                row[col] = json.loads(row[col])
            except ValueError:
                pass  # keep the text: a damaged row is still shown
    if isinstance(row.get("engine_json"), dict):  # stored before the one time form
        row["engine_json"] = _one_time_form(row["engine_json"])
    return row


def _one_time_form(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's document with its start time (the engine writes '...Z') in the one form
    of a time (units.fmt_time); a copy, the rest as the engine wrote it."""
    env = doc.get("environment")
    if not isinstance(env, dict) or not env.get("start_time"):
        return dict(doc)
    return {**doc, "environment": {**env, "start_time": fmt_time(env["start_time"])}}
