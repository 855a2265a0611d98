"""Hints with a fixed value form are checked before the run: a number where ROMIO, Cray MPICH
or PnetCDF read a number, one of their words where they read a switch.

Expected: exit 2, one line naming the hint, its source and the form; nothing stored. Was:
`--hint cb_buffer_size=abc` ran (ROMIO's atoi read 0) and was stored as a measurement."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import Engine, _env, doc, run_engine


def base(scratch: Path) -> list[str]:
    return ["--api", "mpiio", "--transfer", "4K", "--block", "8K", "--path", str(scratch / "f"),
            "--quiet"]


@pytest.mark.parametrize("hint,form", [
    ("cb_buffer_size=abc", "a whole number"),
    ("cb_buffer_size=16m", "a whole number"),
    ("striping_unit=-1", "a whole number"),
    ("nc_header_align_size=4k", "a whole number"),
    ("romio_cb_write=yes", "one of enable|disable|automatic"),
    ("romio_no_indep_rw=1", "one of true|false"),
])
def test_refused_from_the_command_line(engine: Engine, scratch: Path, hint: str, form: str):
    r = run_engine(engine, 2, [*base(scratch), "--hint", hint], scratch.parent)
    assert r.rc == 2 and r.doc is None
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("iolab-bench:")]
    assert len(lines) == 1, r.stderr
    assert f"hint {hint} (from the command line)" in lines[0] and form in lines[0]
    assert list(scratch.iterdir()) == []


def test_refused_from_a_hints_file_and_romio_hints(engine: Engine, scratch: Path,
                                                   tmp_path: Path):
    hf = tmp_path / "hints"
    hf.write_text("cb_nodes two\n")
    r = run_engine(engine, 1, [*base(scratch), "--hints-file", str(hf)], scratch.parent)
    assert r.rc == 2 and "hint cb_nodes=two (from the hints file)" in r.stderr, r.stderr
    r = run_engine(engine, 1, base(scratch), scratch.parent, env={"ROMIO_HINTS": str(hf)})
    assert r.rc == 2 and "(from the ROMIO_HINTS)" in r.stderr, r.stderr


def test_good_values_and_unknown_keys_pass(engine: Engine, scratch: Path):
    r = run_engine(engine, 2, [*base(scratch), "--hint", "cb_buffer_size=16777216", "--hint",
                               "romio_cb_write=Enable", "--hint", "romio_no_indep_rw=true",
                               "--hint", "my_own_key=anything"], scratch.parent)
    assert r.rc == 0, r.stderr
    assert doc(r)["hints"]["requested"]["romio_cb_write"] == "Enable"


def test_iolab_bench_stores_nothing(engine: Engine, scratch: Path, tmp_path: Path):
    db = tmp_path / "r.db"
    p = subprocess.run([sys.executable, "-m", "iolab", "bench", "--db", str(db), "--np", "2",
                        *base(scratch)[:-1], "--hint", "cb_buffer_size=abc"],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 2
    assert "cb_buffer_size takes a whole number" in p.stderr
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
