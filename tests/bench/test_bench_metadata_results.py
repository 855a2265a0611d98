"""Metadata runs (``--metadata easy|hard``) reported as an mdtest user reads them: per phase,
operations per second over the repetitions (max, min, mean, sd, as mdtest's SUMMARY rate
table), with mdtest's phase names, and no bandwidth, transfer or block.

Expected: ``iolab bench --metadata easy`` prints File creation / File stat / File read / File
removal rows with ops/s, in text, ``--json`` and ``--csv``, and ``iolab results`` and
``results show`` show the same rates. Was: a row of "-" in the bench table, and the rates
only in ``results show``'s phase table as "IOPS" beside MiB/s and bytes columns.

Real ranks under mpirun, real files; the figures are checked against the engine's own
document stored with each run.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from bench_helpers import Result, run_iolab

MDTEST_NAMES = ["File creation", "File stat", "File read", "File removal"]
ENGINE_OPS = ["create", "stat", "open_read", "remove"]
FILES = 50


@pytest.fixture(scope="module")
def runs(engine: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Run 1: metadata easy (text), 2: metadata hard (--json), 3: metadata easy (--csv),
    4: a data run (null api), all in one database."""
    base = tmp_path_factory.mktemp("md")
    dbp = base / "r.db"

    def bench(*argv: str) -> Result:
        r = run_iolab("bench", "--np", "2", "--db", str(dbp), *argv)
        assert r.returncode == 0, r.stderr
        return r

    md = ("--md-files", str(FILES), "-i", "2")
    out = {"db": dbp,
           "text": bench("--metadata", "easy", *md, "--path", str(base / "a")),
           "json": bench("--metadata", "hard", *md, "--path", str(base / "b"), "--json"),
           "csv": bench("--metadata", "easy", *md, "--path", str(base / "c"), "--csv")}
    bench("--api", "null", "-t", "64k", "-b", "256k", "-q")
    return out


def results(runs: dict[str, object], *argv: str) -> Result:
    r = run_iolab("results", "--db", str(runs["db"]), *argv)
    assert r.returncode == 0, r.stderr
    return r


def _table(text: str, first: str) -> tuple[list[str], list[str]]:
    """The header's words and the row lines of the text table whose header starts with
    ``first``."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:1] == [first])
    rows = []
    for line in lines[head + 2:]:
        if not line.strip():
            break
        rows.append(line)
    return lines[head].split(), rows


def test_bench_text_shows_ops_per_second_per_phase(runs: dict) -> None:
    """expected mdtest's phases with ops/s max, min, mean, sd / was one row of '-'"""
    text = runs["text"].stdout
    header, rows = _table(text, "run")
    assert header[header.index("operation"):header.index("status")] == \
        ["operation", "ops/rep", "reps", "ops/s", "max", "min", "mean", "sd"]
    for word in ("MiB/s", "transfer", "bytes/rep", "block", "IOPS"):
        assert word not in header
    assert [name for row in rows for name in MDTEST_NAMES if name in row] == MDTEST_NAMES
    for row in rows:
        cells = row.split()
        top, low, mean = (float(c) for c in cells[-5:-2])
        assert cells[-1] == "ok" and cells[-6] == "2" and cells[-7] == str(2 * FILES)
        assert top >= mean >= low > 0
    assert "metadata easy: 50 files/rank of 0 B, dir per rank" in rows[0]


def test_bench_json_rates_are_the_engines(runs: dict) -> None:
    """expected a "metadata" table whose ops/s are the engine's summary / was "summary" rows
    with op null and no rate"""
    out = runs["json"].json()
    assert out["schema_version"] == 3 and "summary" not in out
    rows = out["metadata"]
    doc = out["runs"][0]["engine"]
    assert [r["op"] for r in rows] == ENGINE_OPS and [r["operation"] for r in rows] == \
        MDTEST_NAMES
    for row in rows:
        rate = doc["summary"][row["op"]]["iops"]
        assert rate["n"] == 2 and rate["min"] > 0
        assert [row[f"ops_per_s_{k}"] for k in ("max", "min", "mean", "stddev", "median")] == \
            [rate[k] for k in ("max", "min", "mean", "stddev", "median")]
        assert (row["metadata"], row["files_per_rank"], row["file_bytes"], row["dir"]) == \
            ("hard", FILES, 3901, "shared")
        assert row["ops_per_rep"] == 2 * FILES and row["repetitions"] == 2
        assert not [k for k in row if "bw" in k or "transfer" in k or "block" in k]


def test_bench_csv_is_the_metadata_table(runs: dict) -> None:
    rows = list(csv.DictReader(io.StringIO(runs["csv"].stdout)))
    assert [r["operation"] for r in rows] == MDTEST_NAMES
    assert all(float(r["ops_per_s_max"]) >= float(r["ops_per_s_min"]) > 0 for r in rows)
    assert not [k for k in rows[0] if "bw" in k or "transfer" in k]


def _engine_doc(runs: dict, run_id: int) -> dict:
    return results(runs, "show", str(run_id), "--json").json()["engine"]


def test_results_list_shows_rates_not_sizes(runs: dict) -> None:
    """expected create/stat/read/remove ops/s in the runs list, no transfer or MiB/s for a
    metadata run / was the engine's unused transfer and block defaults and '-' for MiB/s"""
    header, rows = _table(results(runs, "--api", "posix").stdout, "run")
    assert header[header.index("metadata"):header.index("fs")] == \
        ["metadata", "ranks", "create/s", "stat/s", "read/s", "remove/s"]
    assert not {"transfer", "block", "seg", "layout", "MiB/s", "cache"} & set(header)
    assert len(rows) == 3
    # a mixed list shows both kinds of columns, "-" where a run has no such figure
    mixed, _ = _table(results(runs).stdout, "run")
    assert {"transfer", "write", "create/s", "remove/s"} <= set(mixed)
    listed = {r["id"]: r for r in results(runs, "--json").json()["runs"]}
    summary = _engine_doc(runs, 2)["summary"]
    assert listed[2]["metadata"] == "hard" and listed[2]["transfer_bytes"] is None
    assert listed[2]["write_bw_median_bytes_per_s"] is None
    for op in ENGINE_OPS:
        assert listed[2][f"{op}_ops_per_s_median"] == summary[op]["iops"]["median"]
        assert listed[4][f"{op}_ops_per_s_median"] is None
    assert listed[4]["metadata"] is None and listed[4]["transfer_bytes"] == 64 * 1024


def test_results_show_metadata_run(runs: dict) -> None:
    """expected phases and summary in ops/s with mdtest's names / was bytes, MiB/s and IOPS
    columns of zeros beside the rate"""
    text = results(runs, "show", "1").stdout
    facts = text.split("\n\n")[0]
    assert "files per rank  50" in facts and "metadata        easy" in facts
    for word in ("transfer", "block", "segments", "written", "layout"):
        assert word not in facts
    header, rows = _table(text.split("Phases\n", 1)[1], "rep")
    assert header == ["rep", "operation", "ops", "time", "s", "ops/s", "rank", "min", "s", "rank",
                      "max", "s"]
    assert len(rows) == 8 and all(name in "".join(rows) for name in MDTEST_NAMES)
    assert "MiB/s" not in text and "IOPS" not in text
    phases = list(csv.DictReader(io.StringIO(results(runs, "show", "1", "--csv").stdout)))
    doc = _engine_doc(runs, 1)
    engine_phases = [ph for rep in doc["repetitions"] for ph in rep["phases"]]
    assert [float(p["ops_per_s"]) for p in phases] == [ph["iops"] for ph in engine_phases]
    assert [int(p["ops"]) for p in phases] == [2 * FILES] * 8
    shown = results(runs, "show", "1", "--json").json()
    assert [r["operation"] for r in shown["metadata"]] == MDTEST_NAMES
    assert "phases" not in shown and "summary" not in shown
    assert json.dumps(shown["metadata_phases"]).count("File removal") == 2


def test_failed_metadata_run_keeps_its_line(engine: Path, tmp_path: Path) -> None:
    """expected a failed metadata run's line with '-' for the rates it has not and the reason
    / was a line of the data table"""
    (tmp_path / "x.md").write_text("a file where the run's directory goes")
    dbp = tmp_path / "r.db"
    r = run_iolab("bench", "--np", "2", "--metadata", "easy", "--md-files", "5", "--path",
                  str(tmp_path / "x"), "--db", str(dbp), "--json")
    assert r.returncode == 1, r.stderr
    (row,) = r.json()["metadata"]
    assert (row["status"], row["op"], row["repetitions"], row["ops_per_s_max"]) == \
        ("failed", None, 0, None)
    assert any("Not a directory" in n for n in r.json()["notes"])
