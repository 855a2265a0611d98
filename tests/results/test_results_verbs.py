"""``iolab results import`` and ``delete``, case-insensitive checked filters, and how a
failed or interrupted run is shown.

Expected / was: an interrupted run showed "reps 3" after part of one and 0.0 MiB/s; ``results
--api MPIIO`` found nothing though ``bench -a MPIIO`` is accepted; ``--layout nonsense``
returned nothing silently; a document made by hand with ``iolab-bench --json`` could not be
stored; runs could not be deleted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_results_db import engine_doc

from iolab.errors import UsageError
from iolab.paths import engine_binary
from iolab.results import db
from iolab.results.render import SUMMARY_COLUMNS, render, summary_report


def iolab(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, input=stdin, timeout=120)


def engine_run(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """iolab-bench itself, one process, writing its JSON document to out (skips without it)."""
    try:
        engine = engine_binary("default")
    except UsageError as exc:
        pytest.skip(str(exc))
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    return subprocess.run([str(engine), *args, "--quiet", "--json", str(out)], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def made_by_hand(tmp_path: Path) -> Path:
    """A document the engine wrote itself (one process, the null backend)."""
    out = tmp_path / "run.json"
    p = engine_run(out, "--api", "null", "--transfer", "64k", "--block", "1m")
    assert p.returncode == 0, p.stderr
    return out


def test_import_then_show_then_delete(made_by_hand: Path, tmp_path: Path) -> None:
    dbp = tmp_path / "r.db"
    r = iolab("results", "import", str(made_by_hand), "--db", str(dbp), "--label", "by hand")
    assert r.returncode == 0 and "stored as run 1" in r.stderr, r.stderr
    r = iolab("results", "--db", str(dbp), "--json")
    (row,) = json.loads(r.stdout)["runs"]
    assert (row["id"], row["label"], row["api"], row["status"]) == (1, "by hand", "null", "ok")
    assert row["write_bw_median_bytes_per_s"] > 0
    # delete asks; without a terminal it needs --yes, and deletes nothing
    r = iolab("results", "delete", "1", "--db", str(dbp))
    assert r.returncode == 2 and "--yes" in r.stderr
    assert iolab("results", "-q", "--db", str(dbp)).stdout.split() == ["1"]
    r = iolab("results", "delete", "1", "7", "--yes", "--db", str(dbp))
    assert r.returncode == 2 and "no run 7" in r.stderr and "nothing deleted" in r.stderr
    r = iolab("results", "delete", "1", "--yes", "--db", str(dbp))
    assert r.returncode == 0 and "deleted 1 run" in r.stderr
    assert iolab("results", "-q", "--db", str(dbp)).stdout.split() == []


@pytest.mark.parametrize("content,message", [
    ("not json", "not JSON"),
    ("[1, 2]", "not an iolab-bench document"),
    ('{"schema_version": 1, "status": "ok"}', "no 'config' object"),
])
def test_import_bad_file_is_one_line_and_stores_nothing(tmp_path: Path, content: str,
                                                        message: str) -> None:
    f = tmp_path / "x.json"
    f.write_text(content)
    dbp = tmp_path / "r.db"
    r = iolab("results", "import", str(f), "--db", str(dbp))
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert not dbp.exists()


def test_filters_ignore_case_and_name_the_stored_values(tmp_path: Path) -> None:
    dbp = tmp_path / "r.db"
    c = db.connect(dbp)
    db.store_run(c, db.NewRun(command=["x"], status="ok", engine_doc=engine_doc()))
    c.close()
    r = iolab("results", "--db", str(dbp), "--api", "POSIX", "-q")
    assert r.stdout.split() == ["1"]
    r = iolab("results", "--db", str(dbp), "--layout", "nonsense")
    assert r.returncode == 2 and "stored: segmented" in r.stderr
    r = iolab("results", "--db", str(dbp), "--status", "OK", "-q")
    assert r.stdout.split() == ["1"]


def _interrupted_run() -> dict[str, Any]:
    doc = engine_doc("interrupted", reps=3)
    doc["repetitions"] = doc["repetitions"][:1]
    doc["repetitions"][0]["phases"] = doc["repetitions"][0]["phases"][:1]  # one write
    zero = {"min": 0.0, "median": 0.0, "max": 0.0, "mean": 0.0, "stddev": 0.0}
    doc["summary"]["read"] = {"bw_bytes_per_s": zero, "iops": zero, "time_s": zero}
    return {"id": 5, "status": "interrupted", "ranks": 2, "repetitions": 3,
            "engine_json": doc, "api": "posix", "layout": "segmented"}


def test_interrupted_run_shows_what_it_has() -> None:
    rows = summary_report([_interrupted_run()]).nodes[0].rows  # type: ignore[union-attr]
    (write,) = rows  # the read never ran: no row
    assert write["repetitions"] == 1  # was: 3 (the repetitions asked for)
    keys = {c.key for c in SUMMARY_COLUMNS}
    assert "bw_median_bytes_per_s" in keys and write["bw_median_bytes_per_s"] == 2.0 * (1 << 20)
    run = _interrupted_run()
    run["engine_json"]["summary"]["write"]["bw_bytes_per_s"]["median"] = 0.0
    (write,) = summary_report([run]).nodes[0].rows  # type: ignore[union-attr]
    assert write["bw_median_bytes_per_s"] is None  # shown as "-", was 0.0


def test_machine_readable_keys_line_up(tmp_path: Path) -> None:
    """Expected: 'label' is the user's label everywhere and 'case' the case; api, layout,
    collective, file view and hints in the summary and the CSV; run ids in every row.
    Was: 'label' meant the case in bench --json; runs differing only in collective I/O or
    hints looked identical in the CSV; show --csv had no run id."""
    from iolab.results.render import run_report

    doc = engine_doc()
    doc["config"].update({"api": "mpiio", "collective": True, "file_view": True})
    doc["hints"] = {"requested": {"cb_nodes": "1"}, "effective": {"cb_nodes": "1",
                                                                   "romio_cb_write": "enable"}}
    dbp = tmp_path / "r.db"
    c = db.connect(dbp)
    rid = db.store_run(c, db.NewRun(command=["x"], status="ok", engine_doc=doc, label="mine"))
    row = db.get_run(c, rid)
    listed = db.list_runs(c)
    c.close()
    assert row is not None
    summary = json.loads(render(summary_report([row]), "json"))
    assert summary["schema_version"] == 3
    first = summary["summary"][0]
    assert first["label"] == "mine" and first["case"].startswith("mpiio segmented collective")
    assert (first["api"], first["layout"], first["collective"], first["file_view"]) == \
        ("mpiio", "segmented", True, True)
    assert first["hints"] == "cb_nodes=1;romio_cb_write=enable"
    assert first["bw_mean_bytes_per_s"] == 2.0 * (1 << 20) and "bw_stddev_bytes_per_s" in first
    text = render(summary_report([row]), "text")
    assert "mean" in text.splitlines()[0] and "sd" in text.split()
    r = iolab("results", "--csv", "--db", str(dbp))
    header, values = r.stdout.splitlines()[:2]
    cols = dict(zip(header.split(","), values.split(",")))
    assert cols["label"] == "mine" and cols["collective"] == "True"
    assert cols["file_view"] == "True" and cols["hints"] == "cb_nodes=1;romio_cb_write=enable"
    assert listed[0]["collective"] is True
    phases = render(run_report(row), "csv").splitlines()
    assert phases[0].startswith("run_id,") and all(p.startswith(f"{rid},") for p in phases[1:])


def test_a_queued_run_names_its_depth_and_engine(tmp_path: Path) -> None:
    """Runs through io_uring and through libaio were shown as the same case."""
    dbp = tmp_path / "r.db"
    for aio in ("io_uring", "libaio"):
        out = tmp_path / f"{aio}.json"
        p = engine_run(out, "--api", "posix", "--posix.mode", "direct", "--posix.queue-depth",
                       "4", "--posix.aio", aio, "--transfer", "4k", "--block", "256k", "--path",
                       str(tmp_path / aio))
        if p.returncode == 2 and ("not built" in p.stderr or "O_DIRECT" in p.stderr):
            pytest.skip(p.stderr.strip())
        assert p.returncode == 0, p.stderr
        r = iolab("results", "import", str(out), "--db", str(dbp))
        assert r.returncode == 0, r.stderr
    c = db.connect(dbp)
    runs = [db.get_run(c, rid) for rid in (1, 2)]
    c.close()
    summary = json.loads(render(summary_report([r for r in runs if r]), "json"))["summary"]
    cases = sorted({row["case"] for row in summary})
    assert cases == ["posix fpp direct qd=4 io_uring", "posix fpp direct qd=4 libaio"]
