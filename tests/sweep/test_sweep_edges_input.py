"""``iolab sweep`` at the edges (issue 28): a bad value anywhere in the grid is one line,
exit 2, before any point runs: nothing stored, nothing created. Real engine, real database."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def sweep(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", "sweep", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def engine_ok() -> None:
    from iolab.paths import engine_binary

    engine_binary("default")  # raises (test error) when ./setup did not build it


BAD_GRIDS = [
    ("second_transfer", ["--param", "transfer=64k,3x", "--", "-b", "8m"],
     "transfer=3x: --transfer 3x: not a size"),
    ("middle_of_two", ["--param", "transfer=64k,3x,1m", "--param", "np=1,2", "--", "-b", "8m"],
     "transfer=3x np=1: --transfer 3x: not a size"),
    ("bad_block", ["--param", "block=1m,4q,8m", "--", "-t", "64k"],
     "block=4q: --block 4q: not a size"),
]


@pytest.mark.parametrize("grid,says", [c[1:] for c in BAD_GRIDS], ids=[c[0] for c in BAD_GRIDS])
def test_bad_value_anywhere_in_the_grid_is_refused_before_any_point_runs(
        tmp_path: Path, engine_ok: None, grid: list[str], says: str) -> None:
    """expected: one line naming the point, exit 2, no sweep, no run, no database / was: the
    first point ran and was stored before the second was refused."""
    db = tmp_path / "r.db"
    before = sorted(os.listdir(tmp_path))
    out = sweep("--db", str(db), "--reps", "1", *grid, "-a", "null", "-w", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert re.match(r"^iolab( sweep)?: .+\n\Z", out.stderr), out.stderr
    assert says in out.stderr, out.stderr
    assert out.stdout == ""
    assert sorted(os.listdir(tmp_path)) == before  # no database, no scratch folder
    if db.exists():  # stricter than needed: a database, if made, holds no row
        conn = sqlite3.connect(db)
        assert conn.execute("SELECT count(*) FROM sweeps").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
        conn.close()
