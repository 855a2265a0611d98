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
from engine_helpers import Engine, _env, doc, run_engine, run_refused
from refused_runs import REFUSED_RUN_ENV

from iolab.settings import catalogue


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
    # numbers outside the catalogue's domain (hint_forms.def's least / multiple)
    ("cb_nodes=0", "cb_nodes takes a whole number, at least 1 (no suffix)"),
    ("striping_factor=0", "a Lustre stripe count, at least 1"),
    ("striping_unit=1000", "a Lustre stripe size in bytes, a multiple of 64 KiB"),
    ("striping_unit=0", "a multiple of 64 KiB"),
    ("cb_buffer_size=0", "a whole number of bytes, at least 1"),
    ("cb_buffer_size=99999999999999999999999", "a whole number of bytes"),
    ("nc_var_align_size=0", "a whole number of bytes, at least 1"),
])
def test_refused_from_the_command_line(engine: Engine, scratch: Path, hint: str, form: str):
    r = run_refused(engine, 2, [*base(scratch), "--hint", hint], scratch.parent)
    assert r.rc == 2 and r.doc is None
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("iolab-bench:")]
    assert len(lines) == 1, r.stderr
    assert f"hint {hint} (from the command line)" in lines[0] and form in lines[0]
    assert list(scratch.iterdir()) == []


def test_refused_from_a_hints_file_and_romio_hints(engine: Engine, scratch: Path,
                                                   tmp_path: Path):
    hf = tmp_path / "hints"
    hf.write_text("cb_nodes two\n")
    r = run_refused(engine, 1, [*base(scratch), "--hints-file", str(hf)], scratch.parent)
    assert r.rc == 2 and "hint cb_nodes=two (from the hints file)" in r.stderr, r.stderr
    r = run_refused(engine, 1, base(scratch), scratch.parent, env={"ROMIO_HINTS": str(hf)})
    assert r.rc == 2 and "(from the ROMIO_HINTS)" in r.stderr, r.stderr


def test_good_values_and_unknown_keys_pass(engine: Engine, scratch: Path):
    r = run_engine(engine, 2, [*base(scratch), "--hint", "cb_buffer_size=16777216", "--hint",
                               "romio_cb_write=Enable", "--hint", "romio_no_indep_rw=true",
                               "--hint", "my_own_key=anything"], scratch.parent)
    assert r.rc == 0, r.stderr
    assert doc(r)["hints"]["requested"]["romio_cb_write"] == "Enable"


@pytest.mark.parametrize("hint,said", [
    ("cb_buffer_size=abc", "cb_buffer_size takes a whole number"),
    ("cb_nodes=0", "cb_nodes takes a whole number, at least 1"),
])
def test_iolab_bench_stores_nothing(engine: Engine, scratch: Path, tmp_path: Path,
                                    hint: str, said: str):
    """expected: refused, exit 2, one line, nothing stored / was (cb_nodes=0): ran, stored."""
    db = tmp_path / "r.db"
    p = subprocess.run([sys.executable, "-m", "iolab", "bench", "--db", str(db), "--np", "2",
                        *base(scratch)[:-1], "--hint", hint],
                       capture_output=True, text=True, env={**_env(), **REFUSED_RUN_ENV},
                       timeout=120)
    assert p.returncode == 2
    assert [ln for ln in p.stderr.splitlines() if said in ln] and "Traceback" not in p.stderr
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert list(scratch.iterdir()) == []


def _valid(row: catalogue.Setting) -> str:
    """A value of the row's domain the library takes (its default where it has one)."""
    sample = {"stripe": str(1 << 20), "config": "*:1", "number": "1"}
    return catalogue.default(row, "romio") or (row.accepted() or (sample.get(row.domain, "1"),))[0]


def test_engine_takes_every_catalogue_hint_at_a_valid_value(engine: Engine, scratch: Path):
    """expected: the engine runs with each catalogue hint at a value of its domain /
    was: romio_lustre_ds_in_coll=automatic refused (exit 2) although ROMIO's Lustre driver
    takes it."""
    args = [a for r in catalogue.hints() for a in ("--hint", f"{r.name}={_valid(r)}")]
    r = run_engine(engine, 2, [*base(scratch), *args], scratch.parent)
    assert r.rc == 0, r.why()
    assert doc(r)["hints"]["requested"]["romio_lustre_ds_in_coll"] == "enable"
    r = run_engine(engine, 1, [*base(scratch), "--hint", "romio_lustre_ds_in_coll=automatic"],
                   scratch.parent)
    assert r.rc == 0, r.why()


@pytest.mark.parametrize("name", [r.name for r in catalogue.hints() if r.engine_form()])
def test_engine_refuses_a_value_outside_the_catalogue_domain(engine: Engine, scratch: Path,
                                                             name: str):
    row = catalogue.setting(name)
    assert row is not None
    bad = "1m" if row.engine_form() == "number" else "maybe"
    assert catalogue.parse(row, bad) is None
    r = run_refused(engine, 1, [*base(scratch), "--hint", f"{name}={bad}"], scratch.parent)
    assert r.rc == 2 and f"hint {name}={bad}" in r.stderr, r.stderr


def test_a_new_catalogue_row_reaches_the_engine(engine: Engine, scratch: Path,
                                                monkeypatch: pytest.MonkeyPatch):
    """A hint added as one catalogue row (see tests/diagnose/test_settings_one_row.py) is
    passed to the library as it is: the engine checks only the forms hints.c lists, and
    tests/settings says when a row needs one there."""
    monkeypatch.setattr(catalogue, "SETTINGS", (*catalogue.SETTINGS, NEW_ROW))
    value = catalogue.parse(NEW_ROW, "4194304")
    r = run_engine(engine, 1, [*base(scratch), "--hint", f"{NEW_ROW.name}={value}"],
                   scratch.parent)
    assert r.rc == 0, r.why()
    assert doc(r)["hints"]["requested"][NEW_ROW.name] == "4194304"


NEW_ROW = catalogue.Setting("romio_example_buffer", ("romio", "cray"), "bytes",
                            "an example buffer size", defaults={"romio": str(1 << 20)},
                            explore=("2M", "8M"))


def test_romios_own_file_realm_default_is_not_refused(engine: Engine, scratch: Path):
    """expected: --hint romio_cb_fr_types=aar runs (ROMIO reports "aar", its default, and
    reads its own forms) / was: refused, exit 2, by a hand-typed enable|disable|automatic
    check in hints.c."""
    r = run_engine(engine, 1, [*base(scratch), "--hint", "romio_cb_fr_types=aar"],
                   scratch.parent)
    assert r.rc == 0, r.why()
    assert doc(r)["hints"]["requested"]["romio_cb_fr_types"] == "aar"


@pytest.mark.parametrize("hint", ["cb_nodes=1", "striping_unit=65536", "striping_unit=4194304",
                                  "start_iodevice=0", "romio_cb_ds_threshold=0"])
def test_numbers_in_the_domain_pass_in_both(engine: Engine, scratch: Path, hint: str):
    """expected: a number the catalogue's parse takes, the engine takes too (the bounds come
    from the same rows) / was: the same (the engine checked only digits)."""
    key, _, value = hint.partition("=")
    row = catalogue.setting(key)
    assert row is not None and catalogue.parse(row, value) == value
    r = run_engine(engine, 1, [*base(scratch), "--hint", hint], scratch.parent)
    assert r.rc == 0, r.stderr
    assert doc(r)["hints"]["requested"][key] == value


def test_engine_refuses_what_the_catalogue_refuses(engine: Engine, scratch: Path):
    """expected: for every numeric hint the engine checks, its least value less one (and a
    value off its multiple) is refused by both the catalogue and the engine / was: the engine
    took any digits (cb_nodes=0, striping_unit=1000 ran and were stored)."""
    from iolab.settings import c_table

    wrong = []
    for row in c_table.checked_rows():
        bounds = row.numeric_bounds()
        if bounds is None:
            continue
        least, multiple = bounds
        bad = [str(least - 1)] if least > 0 else []
        bad += [str(least + 1)] if multiple > 1 else []
        for value in bad:
            assert catalogue.parse(row, value) is None, (row.name, value)
            r = run_refused(engine, 1, [*base(scratch), "--hint", f"{row.name}={value}"],
                            scratch.parent)
            if r.rc != 2 or f"{row.name} takes {catalogue.DOMAINS[row.domain]}" not in r.stderr:
                wrong.append((row.name, value, r.rc, r.stderr[-200:]))
    assert wrong == []
    assert list(scratch.iterdir()) == []
