"""iolab sweep (stored point by point, an interrupted sweep resumes without repeating a
finished point), report of a sweep, a run and a log, compare of two sweeps and two logs,
diagnose --html. Real engine runs (the null backend, so each point takes well under a
second of I/O), real logs when the corpus is there."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpus import GENERATED_DIR
from one_host_mpi import ONE_HOST_OPEN_MPI

# Open MPI's one-host start-up (tests/one_host_mpi.py) unless the caller set its own
ENV = {**ONE_HOST_OPEN_MPI, **os.environ, "PYTHONUNBUFFERED": "1"}


def iolab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, cwd=cwd, env=ENV, timeout=300)


def _points(db: Path, sweep: int) -> list[tuple[int, int]]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT number, run_id FROM sweep_points WHERE sweep_id = ? AND "
                         "status = 'ok' ORDER BY number", (sweep,)).fetchall()


def test_interrupted_sweep_resumes_without_repeating_points(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    # 50 ms a call: the interruption waits for the first stored point, and the three left
    # take seconds anyway (a bench start each); the resumed points run at the same delay
    cmd = [sys.executable, "-m", "iolab", "sweep", "-p", "np=1,2", "-p", "t=64k,128k",
           "--reps", "2", "--db", str(db), "--", "-a", "null", "-b", "256k",
           "--null.delay-us", "50000"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if db.exists() and _table_has(db) and len(_points(db, 1)) >= 1:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "iolab sweep --resume 1" in err
    before = _points(db, 1)
    assert 1 <= len(before) < 4
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT status FROM sweeps WHERE id = 1").fetchone()[0] == "interrupted"
    r = iolab("sweep", "--resume", "1", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    after = _points(db, 1)
    assert [n for n, _ in after] == [0, 1, 2, 3]
    assert after[:len(before)] == before  # finished points kept, not run again
    assert f"{len(before)} of 4 points already stored" in r.stderr
    assert "point 4/4" in r.stderr and "left)" in r.stderr
    # the report plots it, and compare sets it against itself
    out = tmp_path / "s.html"
    r = iolab("report", "sweep", "1", "--db", str(db), "-o", str(out), "--figures",
              str(tmp_path / "figs"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "write bandwidth against np" in page and page.count("<svg") >= 2
    assert (tmp_path / "figs" / "sweep-write.png").stat().st_size > 1000
    assert (tmp_path / "figs" / "sweep-write.svg").exists()
    r = iolab("compare", "sweep:1", "sweep:1", "--db", str(db), "-o", str(tmp_path / "c.html"),
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "np=2 transfer=128k write" in r.stdout and "1.00" in r.stdout
    page = (tmp_path / "c.html").read_text()
    assert 'id="fig-ratios"' in page and 'id="fig-overlay-write"' in page


def _table_has(db: Path) -> bool:
    try:
        with sqlite3.connect(db) as c:
            return bool(c.execute("SELECT 1 FROM sqlite_master WHERE name = 'sweep_points'"
                                  ).fetchone())
    except sqlite3.Error:
        return False


def test_bad_sweep_input_is_one_line_and_stores_nothing(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    for args in (["-p", "nosuch=1,2"], ["-p", "np"], ["-p", "collective=maybe"],
                 ["-p", "np=1", "--", "--np", "2"], ["-p", "np=1", "--", "--json"],
                 ["-p", "np=1,2", "--", "--no-such-flag"], ["-p", "posix.mode=fast"],
                 ["-p", "np=1,2", "--", "stray"]):
        r = iolab("sweep", *args, "--db", str(db), cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
    assert not db.exists()
    r = iolab("report", "sweep", "x", cwd=tmp_path)
    assert r.returncode == 2 and "report sweep ID" in r.stderr


LOG = GENERATED_DIR / "mpiio_4ranks_strided4K_coll.darshan"
LOG_B = GENERATED_DIR / "mpiio_4ranks_strided4K_indep.darshan"


@pytest.mark.skipif(not LOG.exists() or not LOG_B.exists(), reason="needs ../shared logs")
def test_log_report_diagnose_html_and_compare_of_two_logs(tmp_path: Path) -> None:
    r = iolab("report", str(LOG), "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "iolab-report-mpiio_4ranks_strided4K_coll.html").read_text()
    for part in ("Most common access sizes", "File count summary", "Average I/O per process",
                 "Data per file system", "Variance in shared files", "tiny-collective-calls",
                 "MPI-IO", "<svg"):
        assert part in page, part
    r = iolab("diagnose", "-q", "--html", str(tmp_path / "d.html"), str(LOG), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Darshan summary tables" in (tmp_path / "d.html").read_text()
    r = iolab("compare", str(LOG), str(LOG_B), "-o", str(tmp_path / "c.html"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "MPI-IO" in r.stdout and "time B/A" in r.stdout
    r = iolab("report", str(LOG), "-o", str(LOG), cwd=tmp_path)
    assert r.returncode == 2  # never over an input
