"""Names from a log are escaped in the HTML report; in a real browser nothing runs.

The job is built directly as a RawJob (the loader contract) with hostile file names and a
hostile executable, then rendered; headless Chromium loads the page and dumps its DOM.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.render_html import render_html
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.model.raw import RawJob, RawRecord

EVIL = [
    '/scratch/<script>document.title="pwned"</script>.dat',
    '/scratch/"><img src=x onerror="document.title=\'pwned\'">.dat',
]


def _evil_model():
    recs = []
    for i, path in enumerate(EVIL):
        recs.append(RawRecord(module="POSIX", rank=0, record_id=1000 + i, path=path, counters={
            "POSIX_OPENS": 1, "POSIX_WRITES": 200_000, "POSIX_BYTES_WRITTEN": 200_000 * 64,
            "POSIX_CONSEC_WRITES": 199_999, "POSIX_SEQ_WRITES": 199_999,
            "POSIX_SIZE_WRITE_0_100": 200_000, "POSIX_MAX_BYTE_WRITTEN": 200_000 * 64 - 1},
            fcounters={"POSIX_F_WRITE_TIME": 2.0}))
    raw = RawJob.build(source="iolab-profile", source_paths=["<b>job</b>.prof"], nprocs=1,
                       start_time=0.0, end_time=10.0, run_time_s=10.0,
                       exe='./app "><script>alert(1)</script>', records=recs)
    return build_model([raw])


def test_hostile_names_trigger_findings_and_are_escaped() -> None:
    rep = diagnose(_evil_model(), Thresholds())
    ids = {f.rule.id for f in rep.findings}
    assert {"small-requests", "small-serial-io"} <= ids  # the names reach the evidence
    page = render_html([rep])
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x onerror=" in page
    assert "&quot;&gt;&lt;img" in page


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed")
def test_nothing_runs_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html([diagnose(_evil_model(), Thresholds())]))
    try:
        out = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
             "--user-data-dir=" + str(tmp_path / "profile"), page.as_uri()],
            capture_output=True, text=True, timeout=90,
        ).stdout
    except subprocess.TimeoutExpired:
        pytest.skip("chromium did not finish in 90 s on this machine")
    assert "<title>iolab diagnose</title>" in out  # the page loaded, and no script renamed it
    assert "pwned" not in out.split("</title>")[0]
    assert "<img" not in out and "<script" not in out
    assert "&lt;script&gt;" in out
