"""The triage report's views over the store (schema 2): I/O time by layer, a bounded file
table, rollups by week and file system, savings per week and slowdowns, on generated
centres whose problems, dates and slowdowns are known by construction (weekfarm, logfarm)
and on the real corpus."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import corpus
import pytest
from logfarm import make_centre
from weekfarm import APPS, EVIL_APP, RUNS_PER_WEEK, WEEKS, add_evil, make_weeks, week_label

from iolab.cli import main
from iolab.triage import store
from iolab.triage.columns import FILES_PER_LAYER, LAYERS


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["triage", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def weeks_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("weeks")
    make_weeks(root / "logs")
    add_evil(root / "logs")
    where = root / "store"
    assert main(["triage", str(root / "logs"), "--store", str(where), "-q", "-j", "1",
                 "--json"]) == 0
    return where


@pytest.fixture(scope="module")
def weeks_report(weeks_store: Path) -> dict:
    from iolab.triage.rank import Options, build_report

    con = store.connect(weeks_store)
    try:
        return build_report(con, Options())
    finally:
        con.close()


def test_injected_slowdowns_are_flagged_and_steady_applications_are_not(
        weeks_report: dict) -> None:
    """expected slowing.exe flagged from week 3 (cause: itself), homea/homeb in week 4
    (cause: /home, flagged with both), nothing else / was no trend at all"""
    apps = {f["application"]: f for f in weeks_report["slowdowns"]["applications"]}
    assert set(apps) == {"slowing.exe", "homea.exe", "homeb.exe"}
    slow = apps["slowing.exe"]
    assert (slow["first_week"], slow["last_week"], slow["weeks"]) == (
        week_label(3), week_label(WEEKS - 1), WEEKS - 3)
    assert (slow["jobs_before"], slow["jobs_after"]) == (3 * RUNS_PER_WEEK,
                                                         (WEEKS - 3) * RUNS_PER_WEEK)
    assert slow["slower_by"] == pytest.approx(2.5, rel=0.1) and slow["p_value"] < 0.01
    assert slow["median_s_per_gib_after"] > slow["median_s_per_gib_before"]
    assert slow["median_bw_bytes_per_s_after"] < slow["median_bw_bytes_per_s_before"]
    assert slow["cause"] == "application"
    for name in ("homea.exe", "homeb.exe"):
        f = apps[name]
        assert (f["first_week"], f["weeks"]) == (week_label(4), 1)
        assert f["slower_by"] == pytest.approx(3.0, rel=0.1)
        assert f["cause"] == "file system /home"
    (fs,) = weeks_report["slowdowns"]["file_systems"]
    assert (fs["mount"], fs["fs_type"], fs["first_week"], fs["weeks"]) == (
        "/home", "nfs", week_label(4), 1)
    assert fs["applications_slower"] == ["homea.exe", "homeb.exe"]


def test_a_stricter_factor_flags_nothing(weeks_store: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--store", str(weeks_store), "--json",
                          "--slowdown-factor", "4")
    assert code == 0, err
    r = json.loads(out)
    assert r["slowdowns"] == {"applications": [], "file_systems": []}
    assert "4.0 x" in r["trend_assumptions"]["flagged_when"]


def test_savings_per_week_are_the_injected_close_cost(weeks_report: dict) -> None:
    """expected closer.exe's slow close: 4 runs a week x 200 s x 2 nodes / 3600 a week"""
    top = weeks_report["savings_per_week"][0]
    assert (top["application"], top["rule_id"]) == ("closer.exe", "slow-close")
    assert (top["weeks_observed"], top["runs_per_week"], top["jobs"]) == (
        WEEKS, RUNS_PER_WEEK, WEEKS * RUNS_PER_WEEK)
    assert top["node_hours_per_week"] == pytest.approx(RUNS_PER_WEEK * 200 * 2 / 3600,
                                                       rel=0.01)
    assert "sync" in top["fix"]


def test_weeks_and_file_systems_roll_up_every_job(weeks_report: dict) -> None:
    weeks = weeks_report["weeks"]
    assert [w["week"] for w in weeks] == [week_label(i) for i in range(WEEKS)]
    per_week = (len(APPS) + 1) * RUNS_PER_WEEK
    assert [w["jobs"] for w in weeks] == [per_week + 1] + [per_week] * (WEEKS - 1)  # + evil
    total = sum(w["wasted_node_hours"] for w in weeks)
    assert total == pytest.approx(weeks_report["centre"]["wasted_node_hours"], abs=1e-4)
    fs = {f["mount"]: f for f in weeks_report["file_systems"]}
    assert set(fs) == {"/scratch", "/home"}
    assert fs["/home"]["jobs"] == 2 * WEEKS * RUNS_PER_WEEK and fs["/home"]["fs_type"] == "nfs"
    assert fs["/scratch"]["jobs"] == 3 * WEEKS * RUNS_PER_WEEK + 1
    assert fs["/home"]["bytes"] == 2 * WEEKS * RUNS_PER_WEEK * 16 * (1 << 30)
    assert fs["/scratch"]["wasted_node_hours"] == pytest.approx(total, abs=1e-4)
    layers = {x["layer"]: x for x in weeks_report["layers"]}
    assert layers["POSIX"]["jobs"] == weeks_report["centre"]["jobs"]
    assert layers["MPI-IO"]["jobs"] == 0


def test_names_with_html_stay_text_in_every_output(weeks_report: dict) -> None:
    apps = [a["application"] for a in weeks_report["applications"]]
    assert EVIL_APP in apps


def test_csv_tables_of_the_views(weeks_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--store", str(weeks_store), "--csv", "--table",
                          "slowdowns")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["application"] for r in rows} == {"slowing.exe", "homea.exe", "homeb.exe"}
    assert all(float(r["p_value"]) < 0.01 for r in rows)
    code, out, _ = _run(capsys, "--store", str(weeks_store), "--csv", "--table", "weeks")
    assert len(list(csv.DictReader(io.StringIO(out)))) == WEEKS
    code, out, _ = _run(capsys, "--store", str(weeks_store), "--csv", "--table", "savings")
    assert next(csv.DictReader(io.StringIO(out)))["rule_id"] == "slow-close"
    code, out, _ = _run(capsys, "--store", str(weeks_store))
    assert "Slowdowns of I/O seconds per GiB" in out and "cause: file system /home" in out


@pytest.mark.parametrize("args,message", [
    (["--table", "weeks"], "only with --csv"),
    (["--slowdown-factor", "0.9"], "must be more than 1"),
    (["--slowdown-p", "0"], "between 0 and 1"),
])
def test_bad_view_options_are_one_line(weeks_store: Path, capsys: pytest.CaptureFixture[str],
                                       args: list[str], message: str) -> None:
    code, out, err = _run(capsys, "--store", str(weeks_store), *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


def test_an_old_store_is_refused_with_what_it_lacks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """expected a schema 1 store refused in one line, saying to read the logs again, the
    store untouched / was read as if it had the new columns"""
    old = tmp_path / "old"
    old.mkdir()
    meta = {"kind": store.KIND, "schema_version": 1, "tables": {}}
    (old / store.META).write_text(json.dumps(meta))
    before = sorted(p.name for p in old.rglob("*"))
    code, out, err = _run(capsys, "--store", str(old))
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert "schema_version 1" in err and "per-layer" in err and "read the logs again" in err
    assert sorted(p.name for p in old.rglob("*")) == before


def test_layers_and_a_bounded_file_table(tmp_path: Path) -> None:
    """expected wrf.exe's 32 per-rank files kept as the 16 costliest plus one row for the
    other 16 (their bytes summed), per-layer times from the log's layers"""
    centre = make_centre(tmp_path / "logs")
    where = tmp_path / "store"
    assert main(["triage", str(centre.root), "--store", str(where), "-q", "-j", "1",
                 "--csv"]) == 0
    con = store.connect(where)
    try:
        wrf_key, = con.execute("SELECT any_value(job_key) FROM jobs "
                               "WHERE application = 'wrf.exe'").fetchone()
        rows = con.execute("SELECT path, files, bytes_written FROM files WHERE job_key = ? "
                           "ORDER BY path NULLS LAST", [wrf_key]).fetchall()
        layers = {r[0]: r[1:] for r in con.execute(
            "SELECT application, io_time_s, io_time_posix_s, io_time_mpiio_s, "
            "io_time_stdio_s FROM jobs WHERE status = 'read'").fetchall()}
        fs = con.execute("SELECT file_systems FROM jobs WHERE job_key = ?",
                         [wrf_key]).fetchone()[0]
    finally:
        con.close()
    assert len(rows) == FILES_PER_LAYER + 1
    assert rows[-1][0] is None and rows[-1][1] == 32 - FILES_PER_LAYER
    assert sum(r[2] for r in rows) == 32 * 1_000_000 * 64
    assert fs == [{"mount": "/scratch", "fs_type": "lustre", "files": 32,
                   "bytes": 32 * 1_000_000 * 64, "io_time_s": pytest.approx(60.01)}]
    io_s, posix_s, mpiio_s, stdio_s = layers["wrf.exe"]
    assert posix_s == pytest.approx(io_s) and mpiio_s == 0 and stdio_s == 0
    io_s, posix_s, mpiio_s, _ = layers["indep.exe"]
    assert mpiio_s == pytest.approx(io_s) and 0 < posix_s < mpiio_s


@corpus.needs_real_logs
def test_layers_of_the_real_corpus(tmp_path: Path) -> None:
    """expected every layer's time at most the job's I/O time, the HDF5, PnetCDF and MPI-IO
    layers seen in the corpus, at most FILES_PER_LAYER + 1 file rows per job and layer"""
    where = tmp_path / "store"
    assert main(["triage", str(corpus.REAL_LOGS_DIR), "--store", str(where), "-q",
                 "--csv", "--table", "layers"]) == 0
    con = store.connect(where)
    try:
        cols = ", ".join(spec.column for spec in LAYERS)
        jobs = con.execute(f"SELECT io_time_s, {cols} FROM jobs WHERE status = 'read'"
                           ).fetchall()
        most, = con.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM files "
                            "GROUP BY job_key, layer)").fetchone()
    finally:
        con.close()
    assert jobs
    seen = set()
    for io_s, *layer_s in jobs:
        for spec, t in zip(LAYERS, layer_s):
            assert t <= io_s * (1 + 1e-6) + 1e-5, (spec.name, t, io_s)
            if t > 0:
                seen.add(spec.name)
    assert {"POSIX", "MPI-IO", "HDF5"} <= seen, seen
    assert most <= FILES_PER_LAYER + 1
