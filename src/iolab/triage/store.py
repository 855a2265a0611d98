"""The triage store: Parquet tables partitioned by the day of each job's start.

Layout (docs/triage.md has the columns)::

    STORE/triage-store.json                      kind, schema_version, the tables' columns
    STORE/jobs/day=2024-03-05/part-<batch>.parquet
    STORE/findings/day=2024-03-05/part-<batch>.parquet
    STORE/files/day=2024-03-05/part-<batch>.parquet

Results are written in batches: each batch's files and findings files first, then its jobs
files, each file written under a temporary name and renamed. A job is in the store when its
jobs row is; findings and files rows whose batch has no jobs file (a run killed between them)
are removed at the next run, which then reads those logs again. So a kill loses at most the
batch in flight.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from iolab.errors import UsageError

# 2: the slowest rank's I/O time per layer and the file systems in jobs; the files table.
SCHEMA_VERSION = 2
KIND = "iolab-triage-store"
META = "triage-store.json"
TABLES = ("jobs", "findings", "files")
# What each older schema lacks, said when such a store is refused (its logs must be read
# again: the new columns come from the logs, not from the old rows).
_LACKS = {1: "the per-layer I/O times, the file systems and the files table"}


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    jobs = pa.schema([
        ("job_key", pa.string()), ("batch", pa.string()), ("source_path", pa.string()),
        ("source_kind", pa.string()), ("file_size", pa.int64()), ("file_mtime_ns", pa.int64()),
        ("status", pa.string()), ("reason", pa.string()), ("job_id", pa.string()),
        ("uid", pa.int64()), ("exe", pa.string()), ("application", pa.string()),
        ("nprocs", pa.int64()), ("nodes", pa.int64()), ("nodes_source", pa.string()),
        ("start_unix_s", pa.float64()), ("end_unix_s", pa.float64()),
        ("run_time_s", pa.float64()), ("io_time_s", pa.float64()), ("waste_s", pa.float64()),
        ("bytes_read", pa.int64()), ("bytes_written", pa.int64()),
        ("mpi_library", pa.string()), ("format_version", pa.string()),
        ("read_time_s", pa.float64()), ("iolab_version", pa.string()),
        ("io_time_posix_s", pa.float64()), ("io_time_mpiio_s", pa.float64()),
        ("io_time_stdio_s", pa.float64()), ("io_time_hdf5_s", pa.float64()),
        ("io_time_pnetcdf_s", pa.float64()),
        ("file_systems", pa.list_(pa.struct([
            ("mount", pa.string()), ("fs_type", pa.string()), ("files", pa.int64()),
            ("bytes", pa.int64()), ("io_time_s", pa.float64())]))),
    ])
    findings = pa.schema([
        ("job_key", pa.string()), ("batch", pa.string()), ("rule_id", pa.string()),
        ("direction", pa.string()), ("kind", pa.string()), ("tier", pa.string()),
        ("severity", pa.string()), ("net_cost_s", pa.float64()),
        ("estimated_gain_s", pa.float64()), ("title", pa.string()), ("fix_text", pa.string()),
    ])
    files = pa.schema([
        ("job_key", pa.string()), ("batch", pa.string()), ("layer", pa.string()),
        ("path", pa.string()), ("mount", pa.string()), ("fs_type", pa.string()),
        ("files", pa.int64()), ("ranks", pa.int64()), ("bytes_read", pa.int64()),
        ("bytes_written", pa.int64()), ("slowest_rank_time_s", pa.float64()),
        ("time_s", pa.float64()),
    ])
    return {"jobs": jobs, "findings": findings, "files": files}


def describe() -> dict[str, Any]:
    """The metadata file's content: what a reader needs to know the store's shape."""
    return {"kind": KIND, "schema_version": SCHEMA_VERSION, "partitioning": "day (UTC date "
            "of the job's start; 'unknown' for logs that could not be read)",
            "tables": {name: [[f.name, str(f.type)] for f in schema]
                       for name, schema in _schemas().items()}}


def check_store(path: Path, inputs: Iterable[str] = (), creating: bool = True) -> None:
    """Before any log is read: a store of this schema, or a new or empty folder (only its
    last part missing). Creates nothing."""
    meta = path / META
    if path.exists() and not path.is_dir():
        raise UsageError(f"--store {path} is a file; give a folder for the store")
    for inp in inputs:
        if Path(inp).exists() and os.path.realpath(inp) == os.path.realpath(path):
            raise UsageError(f"--store {path} is an input of this command; choose another "
                             "folder")
    if meta.exists():
        try:
            info = json.loads(meta.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"--store {path}: {META} is unreadable ({exc}); the store is "
                             "damaged: give another folder") from None
        if info.get("kind") != KIND:
            raise UsageError(f"--store {path}: {META} is not an iolab triage store's")
        version = info.get("schema_version")
        if version != SCHEMA_VERSION:
            lacks = _LACKS.get(version) if isinstance(version, int) else None
            why = f" (it lacks {lacks})" if lacks else ""
            raise UsageError(f"--store {path} has schema_version {version}{why}, this iolab "
                             f"reads and writes {SCHEMA_VERSION}: read the logs again into a "
                             "new folder (the old store is left as it is)")
        return
    if not creating:
        raise UsageError(f"--store {path}: no triage store there ({META} missing); give the "
                         "folder of an earlier 'iolab triage' run, or logs to read")
    if path.is_dir() and any(path.iterdir()):
        raise UsageError(f"--store {path} is a folder with other files and no {META}; give a "
                         "new or empty folder (iolab never writes among other files)")
    parent = path.parent if not path.exists() else path
    if not parent.is_dir():
        raise UsageError(f"--store {path}: its parent {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--store {path}: cannot create files in {parent}; choose a writable "
                         "place")


def open_store(path: Path, extra: dict[str, Any] | None = None) -> None:
    """Make the folder and its metadata file (once; ``extra``: keys added to it, such as
    the anonymisation record)."""
    path.mkdir(exist_ok=True)
    meta = path / META
    if not meta.exists():
        _atomic_write(meta, (json.dumps({**describe(), **(extra or {})}, indent=1)
                             + "\n").encode())


def _atomic_write(target: Path, data: bytes) -> None:
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def files(path: Path, table: str) -> list[Path]:
    return sorted((path / table).glob("day=*/part-*.parquet"))


def _batch_of(p: Path) -> str:
    return p.stem.removeprefix("part-")


def remove_orphans(path: Path) -> int:
    """Findings and files rows of a batch whose jobs file was never written (a killed run):
    removed, so the logs are read again. Temporary files of a killed write too. Returns files
    removed."""
    done = {_batch_of(p) for p in files(path, "jobs")}
    gone = 0
    for table in TABLES:
        if table == "jobs":
            continue
        for p in files(path, table):
            if _batch_of(p) not in done:
                p.unlink()
                gone += 1
    for table in TABLES:
        for tmp in (path / table).glob("day=*/.part-*.tmp*"):
            tmp.unlink()
            gone += 1
    return gone


def known(path: Path) -> tuple[set[tuple[str, int, int]], frozenset[str]]:
    """What is stored: (path, size, mtime) of every log read, and every content hash."""
    import pyarrow.parquet as pq

    stats: set[tuple[str, int, int]] = set()
    keys: set[str] = set()
    for f in files(path, "jobs"):
        # One file's columns (ParquetFile, not read_table: read_table goes through
        # pyarrow.dataset, whose import pulls in pandas, ~1 s of every run into a store)
        with pq.ParquetFile(f) as pf:
            t = pf.read(columns=["job_key", "source_path", "file_size", "file_mtime_ns"])
        cols = t.to_pydict()
        keys.update(cols["job_key"])
        for p, s, m in zip(cols["source_path"], cols["file_size"], cols["file_mtime_ns"]):
            if s is not None and m is not None:
                stats.add((p, s, m))
    return stats, frozenset(keys)


def write_batch(path: Path, jobs: list[dict[str, Any]], findings: list[dict[str, Any]],
                files_rows: Iterable[dict[str, Any]] = ()) -> str:
    """One batch: files and findings files first, then jobs files (the jobs rows say it is
    complete)."""
    import pyarrow.parquet as pq

    batch = uuid.uuid4().hex
    schemas = _schemas()
    for table, rows in (("files", list(files_rows)), ("findings", findings), ("jobs", jobs)):
        by_day: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_day.setdefault(str(r["day"]), []).append(r)
        for day, day_rows in sorted(by_day.items()):
            folder = path / table / f"day={day}"
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / f"part-{batch}.parquet"
            tmp = folder / f".part-{batch}.tmp"
            pq.write_table(_arrow_table(day_rows, schemas[table], batch), tmp,
                           compression="zstd")
            os.replace(tmp, target)
    return batch


def _arrow_table(rows: list[dict[str, Any]], schema: Any, batch: str) -> Any:
    """The rows as an Arrow table of ``schema`` (the ``batch`` column set, ``day`` left out:
    it is the partition), through Arrow's JSON reader: pyarrow.array() of Python values
    imports pandas when it is installed (to ask whether they are a pandas object), 0.4 s
    CPU of the command's own start-up for nothing; the JSON reader is C++ throughout. Floats
    round-trip exactly (Python writes the shortest repr, Arrow parses it correctly rounded),
    NaN and infinities too; names come from the schema, so a row's extra keys are dropped."""
    import io

    import pyarrow.json as pj

    names = [f.name for f in schema]
    lines = "\n".join(json.dumps({n: batch if n == "batch" else r.get(n) for n in names},
                                 default=_plain, allow_nan=True) for r in rows)
    return pj.read_json(io.BytesIO(lines.encode()),
                        read_options=pj.ReadOptions(use_threads=False),
                        parse_options=pj.ParseOptions(explicit_schema=schema))


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python number it holds (pyarrow.array took them as they were)."""
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"{type(value).__name__} is not a store value")
    return item()


def connect(path: Path) -> Any:
    """A DuckDB connection with tables ``jobs`` and ``findings`` and the view ``files`` over
    the store (complete batches only).

    ``jobs`` and ``findings`` are read from the Parquet files once, into the connection: the
    report asks some twenty questions of them, and each question over a view of
    ``read_parquet`` opened and decoded every file of the store again (~75 ms CPU each on a
    400-log store of 170 files, 3 ms over the tables). Their rows are a few per log; the
    files table (up to 17 rows per job and layer) is asked once and stays a view."""
    import duckdb

    con = duckdb.connect()
    for table in TABLES:
        paths = [str(p) for p in files(path, table)]
        if paths:
            # A view cannot take parameters: the names are quoted as SQL strings (a list,
            # not a glob, so a store path with * or [ ] in it is read as it is).
            listed = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
            con.execute(f"CREATE VIEW raw_{table} AS SELECT * FROM read_parquet([{listed}], "
                        "hive_partitioning = true, union_by_name = true)")
        else:
            _empty_view(con, table)
    # One row per log content even if two runs wrote it at once; its findings are those of
    # the batch that row came from (orphans of a killed batch never show).
    con.execute("CREATE TEMP TABLE jobs AS SELECT * FROM raw_jobs QUALIFY row_number() OVER "
                "(PARTITION BY job_key ORDER BY batch) = 1")
    for table, kind in (("findings", "TEMP TABLE"), ("files", "VIEW")):
        con.execute(f"CREATE {kind} {table} AS SELECT f.* FROM raw_{table} f "
                    "SEMI JOIN jobs j ON f.job_key = j.job_key AND f.batch = j.batch")
    return con


def _empty_view(con: Any, table: str) -> None:
    """``raw_TABLE`` of a table with no file yet: its columns, no rows."""
    import pyarrow as pa  # only here: a store's report needs no pyarrow otherwise

    empty = pa.table({f.name: pa.array([], type=f.type) for f in _schemas()[table]})
    con.register(f"empty_{table}", empty)
    con.execute(f"CREATE VIEW raw_{table} AS SELECT *, NULL::VARCHAR AS day "
                f"FROM empty_{table}")
