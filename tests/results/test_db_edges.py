"""The results database at the edges (issue 28): read-only use, an empty IOLAB_DB, deleting a
run that belongs to a sweep or a tune.

Every database here is filled by real ``iolab bench``, ``sweep`` and ``tune`` runs (the null
and posix backends, one process); the read-only place is a real one: a 0555 folder for a
normal user, a read-only bind (or bindfs) mount for root, whom modes do not stop.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def iolab(*args: str, cwd: Path, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, cwd=cwd, env=env or ENV, timeout=300)


def one_line_exit_2(r: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs 1-2 (bench), sweep 1 (2 points), tune 1 (its trials' runs): a database that
    every writer has closed (no -wal or -shm beside it)."""
    where = tmp_path_factory.mktemp("stored")
    db = str(where / "r.db")
    for _ in range(2):
        r = iolab("bench", "-a", "null", "--np", "1", "-i", "3", "--db", db, "-q", cwd=where)
        assert r.returncode == 0, r.stderr
    r = iolab("sweep", "-p", "t=64k,128k", "--reps", "2", "--db", db, "-q", "--", "-a", "null",
              "-b", "256k", cwd=where)
    assert r.returncode == 0, r.stderr
    r = iolab("tune", "--knob", "posix.mode=buffered,sync", "--trials", "2", "--confirm", "2",
              "--db", db, "-q", "--", "iolab", "bench", "-a", "posix", "-t", "64k", "-b", "256k",
              "--np", "1", "-w", cwd=where)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in where.iterdir() if p.name.startswith("r.db")) == ["r.db"]
    return Path(db)


def _writable(folder: Path) -> bool:
    try:
        fd, probe = tempfile.mkstemp(dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


@pytest.fixture
def read_only_copy(stored: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of ``stored`` in a folder nobody can write: chmod for a user; for root a
    read-only bind mount (or bindfs -r). Skips, saying why, when neither can be made."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(stored, src / "r.db")
    unmount: list[str] = []
    if os.geteuid() != 0:
        (src / "r.db").chmod(0o444)
        src.chmod(0o555)
        where = src
    else:
        where = tmp_path / "ro"
        where.mkdir()
        for cmd, undo in ((["mount", "--bind", "-o", "ro", str(src), str(where)], "umount"),
                          (["bindfs", "-r", str(src), str(where)], "fusermount -u")):
            if shutil.which(cmd[0]) and subprocess.run(cmd, capture_output=True).returncode == 0:
                unmount = [*undo.split(), str(where)]
                break
    try:
        if _writable(where):
            pytest.skip("no read-only place: not root and chmod did not stop writes, or no "
                        "read-only bind mount / bindfs")
        yield where / "r.db"
    finally:
        if unmount:
            subprocess.run(unmount, capture_output=True)
        src.chmod(0o755)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reading_commands_work_on_a_read_only_database(read_only_copy: Path,
                                                       tmp_path: Path) -> None:
    """expected: results, results show, report and compare read a database in a read-only
    place / was: "not a usable iolab results database" (opened read-write, WAL)."""
    db = str(read_only_copy)
    before = _digest(read_only_copy)
    r = iolab("results", "--db", db, "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ids = r.stdout.split()
    assert ids[:2] == ["1", "2"] and len(ids) > 4  # the sweep's and tune's runs too
    r = iolab("results", "show", "2", "--db", db, cwd=tmp_path)
    assert r.returncode == 0 and "null" in r.stdout, r.stderr
    r = iolab("results", "tunes", "--db", db, "--json", cwd=tmp_path)
    assert r.returncode == 0 and '"id": 1' in r.stdout, r.stderr
    out = tmp_path / "page.html"
    r = iolab("report", "run", "1", "--db", db, "-o", str(out), "-q", cwd=tmp_path)
    assert r.returncode == 0 and "Run 1" in out.read_text(), r.stderr
    r = iolab("report", "sweep", "1", "--db", db, "-o", str(out), "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = iolab("compare", "run:1", "run:2", "--db", db, cwd=tmp_path)
    assert r.returncode == 0 and "write" in r.stdout, r.stderr
    assert _digest(read_only_copy) == before
    assert sorted(p.name for p in read_only_copy.parent.iterdir()) == ["r.db"]


def test_delete_on_a_read_only_database_is_one_line(read_only_copy: Path,
                                                    tmp_path: Path) -> None:
    """expected: a writing command on a read-only database says so in one line / was: the
    same line as for a damaged file (guards that read-only opening did not hide it)."""
    r = iolab("results", "delete", "1", "--yes", "--db", str(read_only_copy), cwd=tmp_path)
    line = one_line_exit_2(r)
    assert str(read_only_copy) in line


def test_read_only_open_upgrades_nothing_it_cannot(tmp_path: Path) -> None:
    """expected: a reader opens with mode=ro and cannot write / was: read-write."""
    from iolab.results import db

    conn = db.connect(tmp_path / "r.db")
    conn.close()
    ro = db.connect(tmp_path / "r.db", read_only=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.execute("INSERT INTO studies (created_at, updated_at, status, command, size) "
                   "VALUES ('x', 'x', 'done', '[]', 'quick')")
    ro.close()


@pytest.mark.parametrize("value", ["", "  "])
def test_empty_iolab_db_is_refused(stored: Path, tmp_path: Path, value: str) -> None:
    """expected: IOLAB_DB set but empty is one line, exit 2, nothing created / was: the home
    database used silently."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**ENV, "IOLAB_DB": value, "HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    for argv in (["results"], ["results", "show", "1"], ["compare", "run:1", "run:2"],
                 ["bench", "-a", "null", "--np", "1"], ["report", "run", "1"]):
        line = one_line_exit_2(iolab(*argv, cwd=tmp_path, env=env))
        assert "IOLAB_DB is set but empty" in line, argv
    assert list(home.iterdir()) == []
    line = one_line_exit_2(iolab("results", "--db", "", cwd=tmp_path))
    assert "--db: empty path" in line


def _copy(stored: Path, tmp_path: Path) -> Path:
    db = tmp_path / "r.db"
    shutil.copy(stored, db)
    return db


def _run_of(db: Path, table: str) -> tuple[int, int]:
    key = "sweep_id" if table == "sweep_points" else "tune_id"
    with sqlite3.connect(db) as c:
        row = c.execute(f"SELECT run_id, {key} FROM {table} WHERE run_id IS NOT NULL "
                        "ORDER BY run_id LIMIT 1").fetchone()
    return int(row[0]), int(row[1])


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as c:
        return int(c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


@pytest.mark.parametrize("table,kind", [("sweep_points", "sweep"), ("trials", "tune")])
def test_deleting_a_run_of_a_sweep_or_tune_names_it(stored: Path, tmp_path: Path, table: str,
                                                    kind: str) -> None:
    """expected: one line naming the sweep/tune and how to delete it, exit 2, nothing deleted
    / was: sqlite3.IntegrityError (FOREIGN KEY constraint failed) traceback."""
    db = _copy(stored, tmp_path)
    rid, owner = _run_of(db, table)
    before = _digest(db)
    line = one_line_exit_2(iolab("results", "delete", "1", str(rid), "--yes", "--db", str(db),
                                 cwd=tmp_path))
    assert f"run {rid} belongs to {kind} {owner}" in line
    assert f"iolab results delete {kind}:{owner}" in line and "nothing deleted" in line
    assert _digest(db) == before
    # the way the line names works: the whole sweep/tune goes, with its runs, nothing else
    runs, rows = _count(db, "runs"), _count(db, table)
    r = iolab("results", "delete", f"{kind}:{owner}", "--yes", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _count(db, table) == 0 and _count(db, kind + "s") == 0
    deleted = int(r.stderr.split("deleted ")[-1].split()[0])
    assert deleted == rows - (0 if kind == "sweep" else _trials_without_run(stored))
    assert _count(db, "runs") == runs - deleted >= 2
    r = iolab("results", "show", "1", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def _trials_without_run(db: Path) -> int:
    with sqlite3.connect(db) as c:
        return int(c.execute("SELECT COUNT(*) FROM trials WHERE run_id IS NULL").fetchone()[0])


def test_deleting_a_missing_group_deletes_nothing(stored: Path, tmp_path: Path) -> None:
    """expected: an unknown sweep:ID is one line / was: not accepted at all."""
    db = _copy(stored, tmp_path)
    line = one_line_exit_2(iolab("results", "delete", "sweep:9", "--yes", "--db", str(db),
                                 cwd=tmp_path))
    assert "no sweep:9" in line and "nothing deleted" in line


def test_a_reader_leaves_nothing_beside_a_writable_database(stored: Path,
                                                            tmp_path: Path) -> None:
    """expected: after results/compare in a writable folder only r.db is there, unchanged /
    was (with mode=ro there): an empty r.db-wal and an r.db-shm left behind by every reader."""
    db = _copy(stored, tmp_path)
    before = _digest(db)
    for argv in (["results", "-q"], ["results", "show", "1"], ["compare", "run:1", "run:2"]):
        r = iolab(*argv, "--db", str(db), cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db"]
    assert _digest(db) == before


def test_unmerged_writes_in_a_read_only_place(stored: Path, tmp_path: Path) -> None:
    """expected: a -wal left by a writer that stopped is read when its -shm is there, and is
    one line (copy both elsewhere) when it is not / was: "not a usable ... database"."""
    from iolab.results import db as results_db

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(stored, src / "r.db")
    writer = results_db.connect(src / "r.db")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    rid = results_db.store_run(writer, results_db.NewRun(command=["iolab", "bench"],
                                                         status="failed", error="kept"))
    frozen = tmp_path / "frozen"  # the files as a writer killed now would leave them
    frozen.mkdir()
    for name in ("r.db", "r.db-wal", "r.db-shm"):
        shutil.copy(src / name, frozen / name)
    writer.close()
    for keep_shm in (True, False):
        if not keep_shm:
            (frozen / "r.db-shm").unlink()
        ro = _read_only_view(frozen, tmp_path / f"ro{int(keep_shm)}")
        try:
            r = iolab("results", "show", str(rid), "--db", str(ro / "r.db"), cwd=tmp_path)
        finally:
            _undo_view(ro, frozen)
        if keep_shm:
            assert r.returncode == 0 and "kept" in r.stdout, r.stderr
        else:
            line = one_line_exit_2(r)
            assert "r.db-wal holds writes not yet merged" in line and "copy" in line


def _read_only_view(folder: Path, where: Path) -> Path:
    if os.geteuid() != 0:
        for f in folder.iterdir():
            f.chmod(0o444)
        folder.chmod(0o555)
        return folder
    where.mkdir()
    p = subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(where)],
                       capture_output=True, text=True)
    if p.returncode != 0 or _writable(where):
        pytest.skip(f"no read-only bind mount: {p.stderr.strip()}")
    return where


def _undo_view(view: Path, folder: Path) -> None:
    if view != folder:
        subprocess.run(["umount", str(view)], capture_output=True)
    folder.chmod(0o755)
    for f in folder.iterdir():
        f.chmod(0o644)


def test_a_study_goes_whole(tmp_path: Path) -> None:
    """expected: a run or a sweep of a study is refused naming the study; 'delete study:ID'
    removes the study, its sweeps, their points and runs, nothing else / was: an
    IntegrityError traceback, and no way to delete a study."""
    db = tmp_path / "r.db"
    r = iolab("bench", "-a", "null", "--np", "1", "--db", str(db), "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = iolab("study", "--quick", "--db", str(db), "-q", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr  # 1: an experiment this machine refused
    with sqlite3.connect(db) as c:
        sweep, run = c.execute("SELECT sweep_id, run_id FROM sweep_points WHERE run_id IS NOT "
                               "NULL LIMIT 1").fetchone()
    line = one_line_exit_2(iolab("results", "delete", str(run), "--yes", "--db", str(db),
                                 cwd=tmp_path))
    assert f"run {run} belongs to study 1" in line and "delete study:1" in line
    line = one_line_exit_2(iolab("results", "delete", f"sweep:{sweep}", "--yes", "--db",
                                 str(db), cwd=tmp_path))
    assert f"sweep {sweep} is an experiment of study 1" in line
    r = iolab("results", "delete", "study:1", "--yes", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0 and "deleted study 1" in r.stderr, r.stderr
    for table in ("studies", "sweeps", "sweep_points"):
        assert _count(db, table) == 0, table
    assert _count(db, "runs") == 1  # the bench run alone
