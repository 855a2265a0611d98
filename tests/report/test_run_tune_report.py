"""report run and report tune on what iolab bench and iolab tune really stored."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _iolab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_report_of_a_run_and_of_a_tune(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    r = _iolab("bench", "-a", "posix", "-t", "64k", "-b", "512k", "--np", "2", "-i", "3",
               "--db", db, "-q", "--label", "<b>mine</b>", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _iolab("bench", "-a", "null", "--np", "1", "--db", db, "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _iolab("report", "run", "1", "--db", db, "--figures", str(tmp_path / "f"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "iolab-report-run-1.html"
    assert str(out) in r.stdout  # the path is printed
    page = out.read_text()
    assert "Bandwidth of each repetition" in page and "slowest rank" in page
    assert "&lt;b&gt;mine&lt;/b&gt;" in page and "<b>mine" not in page
    assert "transfer_bytes</td><td class=\"n\">64 KiB" in page
    assert {p.name for p in (tmp_path / "f").iterdir()} >= {
        "bandwidth.png", "bandwidth.svg", "ranks-write.png", "ranks-read.svg"}
    r = _iolab("tune", "--knob", "posix.mode=buffered,sync", "--trials", "3", "--confirm", "2",
               "--db", db, "-q", "--", "iolab", "bench", "-a", "posix", "-t", "64k", "-b",
               "256k", "--np", "1", "-w", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _iolab("report", "tune", "1", "--db", db, "-o", str(tmp_path / "t.html"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "t.html").read_text()
    assert 'id="fig-convergence"' in page and 'id="fig-importances"' in page
    assert "posix.mode=sync" in page or "posix.mode=buffered" in page
    r = _iolab("report", "run", "1", "2", "--db", db, "-q", cwd=tmp_path)  # the default job's way
    page = (tmp_path / "iolab-report-run-1-2.html").read_text()
    assert r.returncode == 0 and "Run 1" in page and "Run 2" in page
    assert 'id="fig-run1-bandwidth"' in page and 'id="fig-run2-bandwidth"' in page
    for bad in (["report", "run", "99", "--db", db], ["report", "sweep", "1", "2", "--db", db],
                ["report", "tune", "x"],
                ["report", "run", "1", "--db", str(tmp_path / "none.db")]):
        r = _iolab(*bad, cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "none.db").exists()
