"""Three leftovers of issue 28: the lists of sweeps, studies and tunes read a database in a
read-only place; tune's --confirm warning speaks of the interval that decides; a preset for
another interface than the workload's is refused before the baseline.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import iolab


@pytest.fixture
def read_only_db(stored_db: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the stored database in a place nobody can write (chmod for a user, a
    read-only bind mount for root); skipped, saying why, when none can be made."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(stored_db, src / "r.db")
    undo: list[str] = []
    if os.geteuid() != 0:
        (src / "r.db").chmod(0o444)
        src.chmod(0o555)
        where = src
    else:
        where = tmp_path / "ro"
        where.mkdir()
        mount = ["mount", "--bind", "-o", "ro", str(src), str(where)]
        if shutil.which("mount") and subprocess.run(mount, capture_output=True).returncode == 0:
            undo = ["umount", str(where)]
    try:
        if os.access(where, os.W_OK) and not undo:
            pytest.skip("no read-only place: chmod did not stop writes, no read-only bind mount")
        yield where / "r.db"
    finally:
        if undo:
            subprocess.run(undo, capture_output=True)
        src.chmod(0o755)


@pytest.mark.parametrize("verb", ["tune", "sweep", "study"])
def test_lists_read_a_read_only_database(read_only_db: Path, tmp_path: Path,
                                         verb: str) -> None:
    """expected the list / was "not a usable iolab results database (unable to open database
    file)": the lists opened the database read-write."""
    r = iolab(verb, "--list", "--db", str(read_only_db), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split()[:2] == ["id", "created"], r.stdout
    if verb != "study":  # the stored database has a sweep and a tune, no study
        assert r.stdout.splitlines()[1].split()[0] == "1", r.stdout
    assert sorted(p.name for p in read_only_db.parent.iterdir()) == ["r.db"]


def test_confirm_warning_names_the_interval(tmp_path: Path) -> None:
    """expected the interval's reason (1 in 20 by chance with 3 a side) / was "Mann-Whitney's
    smallest p is 0.05", a test the tune no longer makes."""
    r = iolab("tune", "--confirm", "3", "--list", "--db", str(tmp_path / "none.db"),
              cwd=tmp_path)
    warning = r.stderr.splitlines()[0]
    assert warning.startswith("iolab tune: warning: --confirm 3 cannot show"), r.stderr
    assert "Mann-Whitney" not in warning and "1 time in 20" in warning
    assert "interval" in warning and "use 4 or more" in warning
    r = iolab("tune", "--confirm", "4", "--list", "--db", str(tmp_path / "none.db"),
              cwd=tmp_path)
    assert "warning:" not in r.stderr


@pytest.mark.parametrize(("preset", "api", "fits"), [
    ("mpiio", "posix", "--preset posix"),
    ("posix", "mpiio", "--preset mpiio"),
    ("hdf5", "null", "--knob"),
])
def test_preset_for_another_interface_is_refused_before_the_baseline(
        stored_db: Path, tmp_path: Path, preset: str, api: str, fits: str) -> None:
    """expected one line naming the preset that fits, exit 2, nothing stored / was: every
    trial's collective and file-view settings failed after the baseline ran."""
    db = tmp_path / "t.db"
    r = iolab("tune", "--db", str(db), "--preset", preset, "--trials", "2", "--", "iolab",
              "bench", "-a", api, "-t", "64k", "-b", "1m", "--np", "2", "-w", cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"iolab tune: --preset {preset} tunes ") and fits in lines[0]
    assert f"-a {api}" in lines[0]
    assert not db.exists() and list(tmp_path.iterdir()) == []
