"""Every kind of report page made from what iolab really stored, opened in headless Chromium.

Real runs (an I/O run of 3 repetitions, a 1-rank run of one repetition, a metadata run, a
BTIO run), a sweep over transfer sizes and modes, a sweep of metadata runs, a tune, a
synthetic traced job, an iolab profile with its trace and a real Darshan log with DXT: each
page's plots have labelled axes in their SVG and data in them, and its screenshot is a
picture, not one colour. A metadata run's page speaks in operations per second, a BTIO
run's in grid, steps and method. (The study page is checked the same way by
test_study.py, on the study it runs.)
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from corpus import GENERATED_DIR, GENERATED_MISSING
from page_checks import HAS_CHROMIUM, Chromium, assert_picture_in_chromium, check_figures
from report_jobs import traced_job

from iolab.pages.page import Page, draw_all, render

DXT_LOG = GENERATED_DIR / "posix_mixed_rw_random_reads_dxt.darshan"
# Page kind -> how the stored fixture names it: ("run", [id]), ("sweep", [id]), ("tune", [id]).
STORED = {"run-io": ("run", [1]), "run-one-rank": ("run", [2]), "run-metadata": ("run", [3]),
          "run-btio": ("run", [4]), "sweep": ("sweep", [1]), "sweep-metadata": ("sweep", [2]),
          "tune": ("tune", [1])}


def _iolab(*args: str, cwd: Path) -> None:
    _finish(_start(*args, cwd=cwd))


def _start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "iolab", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)


def _finish(proc: subprocess.Popen[str]) -> None:
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, (proc.args, err[-2000:])


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database holding a run of each kind, a sweep and a tune, made by the CLI."""
    tmp = tmp_path_factory.mktemp("stored")
    path = tmp / "r.db"
    d = ["--db", str(path), "-q"]
    # The profile (no database) runs beside everything; the tune (the only tune; its trials
    # are runs, stored after run 4) beside the two sweeps (the pages name their sweep ids).
    data = tmp / "data.bin"  # a real program under the real tracer, with its trace
    beside = [_start("profile", "-o", str(tmp / "prof"), "--trace", "--name", "job.iolab",
                     "-q", "--", "/bin/sh", "-c", f"dd if=/dev/zero of={data} bs=64k "
                     f"count=32 2>/dev/null; cat {data} > /dev/null", cwd=tmp)]
    try:
        _iolab("bench", "-a", "posix", "-t", "64k", "-b", "256k", "--np", "2", "-i", "3", *d,
               cwd=tmp)
        _iolab("bench", "-a", "posix", "-t", "64k", "-b", "256k", "--np", "1", *d, cwd=tmp)
        _iolab("bench", "--metadata", "easy", "--md-files", "50", "--np", "2", "--path",
               str(tmp / "md"), *d, cwd=tmp)
        _iolab("bench", "--workload", "btio", "--grid", "16x16x16", "--steps", "2", "--np",
               "1", "-a", "mpiio", "--collective", "--path", str(tmp / "bt"), *d, cwd=tmp)
        beside.append(_start("tune", "--knob", "posix.mode=buffered,sync", "--trials", "3",
                             "--confirm", "1", *d, "--", "iolab", "bench", "-a", "posix", "-t",
                             "64k", "-b", "256k", "--np", "1", "-w", cwd=tmp))
        _iolab("sweep", "-p", "t=64k,256k,1m", "-p", "mode=buffered,sync", "--reps", "2", *d,
               "--", "-a", "posix", "-b", "1m", "--np", "1", "-w", cwd=tmp)
        _iolab("sweep", "-p", "md-files=20,40", "--reps", "2", *d, "--", "--metadata",
               "easy", "--np", "1", "--path", str(tmp / "md"), cwd=tmp)
    finally:
        errs = [proc.communicate(timeout=600)[1] for proc in beside]
    for proc, err in zip(beside, errs):
        assert proc.returncode == 0, (proc.args, err[-2000:])
    return path


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium | None]:
    """One headless Chromium for every page's screenshot (page_checks.Chromium); None, so
    that each check says it is skipped, when Chromium or tornado is not installed."""
    try:
        import tornado.websocket  # noqa: F401
    except ImportError:
        yield None
        return
    if not HAS_CHROMIUM:
        yield None
        return
    browser = Chromium()
    try:
        yield browser
    finally:
        browser.close()


def _page(kind: str, db: Path) -> Page:
    if kind in STORED:
        from iolab.report.cli import _stored_page

        what, ids = STORED[kind]
        return _stored_page(what, ids, str(db))
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.page import log_page
    from iolab.diagnose.report import diagnose

    if kind == "log-synthetic":
        model = traced_job(ranks=4, slow_rank=2)
    elif kind == "log-profile":
        from iolab.model.job import build_model
        from iolab.sources import load_source

        model = build_model([load_source(str(db.parent / "prof" / "job.iolab"))])
    else:
        if not DXT_LOG.exists():
            pytest.skip(GENERATED_MISSING)
        from iolab.model.job import build_model
        from iolab.sources import load_source

        model = build_model([load_source(str(DXT_LOG))])
    return log_page([diagnose(model, Thresholds())])


@pytest.mark.parametrize("kind", [*STORED, "log-synthetic", "log-profile", "log-darshan"])
def test_every_page_has_labelled_plots_and_a_picture_in_chromium(
        kind: str, db: Path, chromium: Chromium | None, tmp_path: Path) -> None:
    """expected every plot with data and labelled axes in its SVG, the screenshot a picture
    / was not checked for any page but a log's (empty or unlabelled plots went unseen)"""
    page = _page(kind, db)
    figs = draw_all(page)
    try:
        html = render(page, figs)
        assert figs, f"{kind}: a page without a plot"
        check_figures(html, figs)
    finally:
        for fig in figs.values():
            plt.close(fig)
    assert_picture_in_chromium(html, tmp_path / kind, kind, chromium)


def test_a_metadata_run_page_shows_ops_per_phase_not_bandwidth(db: Path) -> None:
    """expected create / stat / read / remove in ops/s with min, mean and max / was MiB/s
    (0.0 for stat and remove), a transfer and a block size"""
    from iolab.pages import prep_run
    from iolab.results.db import connect, get_run

    run = get_run(connect(str(db), must_exist=True), 3)
    assert run is not None
    doc = run["engine_json"]
    html = render(_page("run-metadata", db))
    text = re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
    for word in ("mean ops/s", "min ops/s", "max ops/s", "file create", "file stat",
                 "file read", "file remove", "files per rank"):
        assert word in text, word
    for word in ("MiB/s", "transfer_bytes", "block_bytes", "Bandwidth"):
        assert word not in text, word
    rates = {p.op: p for p in prep_run.metadata_rates(doc)}
    assert list(rates) == ["create", "stat", "open_read", "remove"]
    for rep in doc["repetitions"]:
        for ph in rep["phases"]:
            assert ph["iops"] in rates[ph["op"]].rates and ph["ops"] == 100  # 50 x 2 ranks
    create = next(r for r in prep_run.metadata_rows(doc) if r[0] == "file create")
    assert create[2] == f"{rates['create'].mean:,.0f}" and f"<td class=\"n\">{create[2]}" in text


def test_a_btio_run_page_shows_its_grid_steps_and_method(db: Path) -> None:
    """expected grid 16x16x16, 2 steps, method 'MPI-IO collective' / was a transfer and a
    block size the BTIO workload never uses"""
    text = re.sub(r"<svg.*?</svg>", "", render(_page("run-btio", db)), flags=re.S)
    assert "BTIO grid 16x16x16, 2 step(s), MPI-IO collective" in text
    for row in (("grid", "16x16x16"), ("steps", "2"), ("method", "MPI-IO collective"),
                ("process grid used", "1x1x1")):
        assert re.search(rf"<td>{re.escape(row[0])}</td><td[^>]*>{re.escape(row[1])}</td>",
                         text), row
    assert "transfer_bytes" not in text and "block_bytes" not in text


def test_a_sweep_of_metadata_runs_is_in_ops_per_second(db: Path) -> None:
    """expected each phase's rate in ops/s against md-files / was MiB/s, 0 for every point"""
    page = _page("sweep-metadata", db)
    text = re.sub(r"<svg.*?</svg>", "", render(page), flags=re.S)
    assert "MiB/s" not in text and "median ops/s" in text
    names = [p.name for p in page.plots()]
    assert names == ["sweep-file-create", "sweep-file-stat", "sweep-file-read",
                     "sweep-file-remove"], names
    assert "file create rate against md-files" in text
    assert not re.search(r"<td class=\"n\">0(\.0)?</td>", text)  # no rate of 0
