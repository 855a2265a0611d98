"""What the command's own process spends beside the readers (issue #31): the store's writer
imports no pandas, the report reads the store's Parquet files once, and the rows a batch
writes come back exactly as the readers sent them."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.triage import store


def _rows(n: int, day: str) -> tuple[list[dict], list[dict], list[dict]]:
    jobs, findings, files = [], [], []
    for i in range(n):
        key = f"{day}-{i:04d}"
        jobs.append({
            "job_key": key, "source_path": f"/logs/é☃/{i}.darshan", "source_kind": "darshan",
            "file_size": 2**40 + i, "file_mtime_ns": 1_717_200_000_123_456_789 + i,
            "status": "read", "reason": None, "job_id": str(1000 + i), "uid": 2001,
            "exe": "/apps/a.exe -i in.nml", "application": "a.exe", "nprocs": 1024,
            "nodes": None if i % 2 else 16, "nodes_source": "unknown" if i % 2 else "log",
            "start_unix_s": 1_717_200_000.25 + i, "end_unix_s": 1_717_201_200.5 + i,
            "run_time_s": 0.1 + 0.2 * i, "io_time_s": 1e-310 if i == 1 else 1 / 3,
            "waste_s": 0.0, "bytes_read": 2**62 + i, "bytes_written": 0,
            "mpi_library": None, "format_version": "3.41", "read_time_s": 0.012345,
            "iolab_version": "x", "io_time_posix_s": 300.000001, "io_time_mpiio_s": 0.0,
            "io_time_stdio_s": math.inf if i == 2 else 0.5, "io_time_hdf5_s": 0.0,
            "io_time_pnetcdf_s": 0.0, "day": day,
            "file_systems": [] if i == 0 else [
                {"mount": "/scratch", "fs_type": "lustre", "files": 3, "bytes": 2**50,
                 "io_time_s": 12.5},
                {"mount": "(unknown)", "fs_type": None, "files": 1, "bytes": 0,
                 "io_time_s": 0.0}]})
        findings.append({
            "job_key": key, "rule_id": "slow-close", "direction": None, "kind": "waste",
            "tier": "symptom", "severity": "high", "net_cost_s": 299.999999,
            "estimated_gain_s": None, "title": "t \"quoted\" \\ back", "fix_text": "line\nnext",
            "day": day})
        files.append({
            "job_key": key, "layer": "POSIX", "path": None if i % 3 else f"/scratch/f{i}",
            "mount": "/scratch", "fs_type": "lustre", "files": 1, "ranks": 1024,
            "bytes_read": 7, "bytes_written": 2**33, "slowest_rank_time_s": 0.7,
            "time_s": 700.0, "day": day})
    return jobs, findings, files


def _fresh_python(code: str, *args: str) -> str:
    """``code`` run by a new interpreter with ``args``: its stdout (what it imported is this
    process's business no more)."""
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _stored(where: Path) -> dict[str, list[dict]]:
    import pyarrow.parquet as pq

    out: dict[str, list[dict]] = {}
    for table in store.TABLES:
        rows = []
        for f in store.files(where, table):
            for r in pq.read_table(f).to_pylist():
                assert r.pop("batch")
                rows.append(r)
        out[table] = sorted(rows, key=lambda r: (r["job_key"], str(r.get("path"))))
    return out


def test_batch_rows_come_back_exactly(tmp_path: Path) -> None:
    """expected every value a batch writes read back as it was (floats to the bit, 2**62,
    an infinity, nulls, nested file systems, quotes and non-ASCII) / was: written
    through pyarrow.array, now through Arrow's JSON reader: guards the new path."""
    where = tmp_path / "store"
    store.open_store(where)
    jobs, findings, files = [], [], []
    for day in ("2024-06-01", "2024-06-02"):
        j, f, fi = _rows(5, day)
        jobs += j
        findings += f
        files += fi
    store.write_batch(where, jobs, findings, files)
    got = _stored(where)
    for table, sent in (("jobs", jobs), ("findings", findings), ("files", files)):
        want = sorted(({k: v for k, v in r.items() if k != "day"} for r in sent),
                      key=lambda r: (r["job_key"], str(r.get("path"))))
        assert got[table] == want, table
    assert len(store.files(where, "jobs")) == 2  # one file per day, as before


def test_writing_a_batch_imports_no_pandas(tmp_path: Path) -> None:
    """expected the store's writer to leave pandas unimported (0.4 s CPU of the command's
    start-up) / was: pyarrow.table() of Python lists imported pandas to ask whether they
    were pandas objects."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom iolab.triage import store\n"
        "sys.path.insert(0, sys.argv[2])\nfrom test_parent_cost import _rows\n"
        "w = Path(sys.argv[1]); store.open_store(w)\n"
        "store.write_batch(w, *_rows(3, '2024-06-01'))\n"
        "assert store.files(w, 'jobs')\n"
        "print('pandas' in sys.modules)\n")
    assert _fresh_python(code, str(tmp_path / "s"), str(Path(__file__).parent)).strip() == "False"


def test_what_a_store_holds_is_read_without_pandas(tmp_path: Path) -> None:
    """expected store.known (every run into a store that holds jobs asks it first) to give
    each log's (path, size, mtime) and every hash without importing pandas or
    pyarrow.dataset / was: pq.read_table, which goes through pyarrow.dataset and imports
    pandas (~1 s of each run into a non-empty store)."""
    where = tmp_path / "store"
    store.open_store(where)
    jobs, findings, files = _rows(3, "2024-06-01")
    store.write_batch(where, jobs, findings, files)
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom iolab.triage import store\n"
        "stats, keys = store.known(Path(sys.argv[1]))\n"
        "print(json.dumps([sorted(stats), sorted(keys),\n"
        "                  [m for m in ('pandas', 'pyarrow.dataset') if m in sys.modules]]))\n")
    stats, keys, imported = json.loads(_fresh_python(code, str(where)))
    assert imported == []
    assert keys == sorted(j["job_key"] for j in jobs)
    assert stats == sorted([j["source_path"], j["file_size"], j["file_mtime_ns"]]
                           for j in jobs)


def test_report_reads_the_jobs_and_findings_files_once(tmp_path: Path) -> None:
    """expected the report's connection to hold jobs and findings as tables read once (the
    Parquet files gone afterwards, its questions still answered) / was: views over
    read_parquet, every question (some twenty a report) reading every file again."""
    where = tmp_path / "store"
    store.open_store(where)
    store.write_batch(where, *_rows(4, "2024-06-01"))
    store.write_batch(where, *_rows(2, "2024-06-02"))
    con = store.connect(where)
    try:
        for table in ("jobs", "findings"):
            for f in store.files(where, table):
                f.unlink()
        (jobs,), = con.execute("SELECT count(*) FROM jobs").fetchall()
        (waste,), = con.execute("SELECT sum(net_cost_s) FROM findings").fetchall()
        (files,), = con.execute("SELECT count(*) FROM files").fetchall()
    finally:
        con.close()
    assert jobs == 6
    assert waste == pytest.approx(6 * 299.999999)
    assert files == 6


def test_report_of_a_store_imports_no_numpy_scipy_or_pandas(tmp_path: Path) -> None:
    """expected ``iolab triage --store S --json`` (no week to test) to import none of numpy,
    scipy, pandas or pyarrow (0.15 s and more of CPU each) / was: numpy imported by the
    trends (np.median) and by the layer list (iolab.triage.columns, the readers' module)."""
    where = tmp_path / "store"
    store.open_store(where)
    store.write_batch(where, *_rows(4, "2024-06-01"))
    code = (
        "import contextlib, io, sys\nfrom iolab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    rc = main(['triage', '--store', sys.argv[1], '--json'])\n"
        "assert rc == 0 and '\"a.exe\"' in out.getvalue(), out.getvalue()\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pandas', 'pyarrow') if m in sys.modules))\n")
    assert _fresh_python(code, str(where)).strip() == "[]"


def test_statistics_median_is_numpys_to_the_bit() -> None:
    """expected the trends' median (statistics.median) equal to numpy's on I/O seconds per GiB
    of any count, odd or even / was: numpy's; guards the swap."""
    import random
    from statistics import median

    import numpy as np

    rng = random.Random(31)
    for n in range(1, 60):
        vals = [rng.lognormvariate(0, 3) for _ in range(n)]
        assert median(vals) == float(np.median(vals)), n


def test_triage_runs_in_a_process_whose_stderr_is_a_string(tmp_path: Path) -> None:
    """expected ``iolab triage`` run in-process with stderr redirected to a string (as
    tests/triage/test_anonymize.py does) to work / was: faulthandler.register(SIGUSR1) asked
    sys.stderr for its file descriptor and the command stopped with UnsupportedOperation."""
    import contextlib
    import io

    from iolab.cli import main

    where = tmp_path / "store"
    store.open_store(where)
    store.write_batch(where, *_rows(2, "2024-06-01"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["triage", "--store", str(where), "--csv"])
    assert code == 0, err.getvalue()
    assert out.getvalue().count("a.exe") == 2


def test_a_lost_clusters_reason_is_one_line() -> None:
    """expected the reason a Dask run stopped on one line whatever distributed's message /
    was: FutureCancelledError's two lines ("... scheduler-connection-lost.\\nClient lost the
    connection ...") split the command's line, and test_dask's cluster-lost test failed
    whenever that error came first."""
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    from iolab.triage.dask_reader import one_line

    exc = RuntimeError("read_batch-1 cancelled for reason: scheduler-connection-lost.\n"
                       "Client lost the connection to the scheduler.  Please re-run.")
    assert one_line(exc) == ("RuntimeError: read_batch-1 cancelled for reason: "
                             "scheduler-connection-lost. Client lost the connection to the "
                             "scheduler. Please re-run.")
