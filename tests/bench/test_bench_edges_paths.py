"""``iolab bench`` at the edges of paths: nothing made where the user did not ask, the lines
it prints run as printed and name what the real run uses.

- ``--path /scratch/$USER/md`` with USER unset (``/scratch//md``) created ``/scratch``;
  expected: a test path whose folder does not exist is refused (one line, exit 2), nothing
  created or stored.
- ``--db X`` printed ``iolab results show N`` without ``--db X``; expected: the follow-up
  carries the same ``--db`` and works as printed.
- ``--dry-run`` showed ``--path ./iolab-bench.data`` while the real run uses a private
  ``.iolab-bench-*`` folder; expected: the printed lines make, use and remove that folder.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from bench_helpers import db_rows, run_iolab

NULL = ["--api", "null", "-t", "64k", "-b", "256k", "--np", "1", "--launcher", "none"]
PRIVATE_PATH = re.compile(r"/\.iolab-bench-[A-Za-z0-9_]{8}/data$")


def test_test_path_in_a_missing_folder_is_refused(engine: Path, workdir: Path,
                                                 db: Path) -> None:
    """Expected: exit 2, one line, no folder made / was: the missing folder (/scratch for
    ``/scratch/$USER/md`` with USER unset) created and the run stored."""
    for path, folder, says in (
            (f"{workdir}/scratch//md", "scratch", "is a variable such as $USER unset?"),
            (f"{workdir}/scratch/me/md", "scratch/me", "create it first")):
        r = run_iolab("bench", *NULL, "--path", path, "--db", str(db), cwd=workdir)
        assert r.returncode == 2, r.stderr
        (line,) = r.err_lines()
        assert f"{workdir}/{folder} does not exist" in line and says in line, line
        assert "create it first" in line
        assert not list(workdir.iterdir()) and not db.exists()


def test_follow_up_carries_the_db(engine: Path, workdir: Path) -> None:
    """Expected: ``(iolab results show N --db X)``, which shows the run / was: without
    --db, so the command printed looked in the home database."""
    db = workdir / "my runs.db"
    r = run_iolab("bench", *NULL, "--db", str(db), cwd=workdir)
    assert r.returncode == 0, r.stderr
    m = re.search(r"\((iolab results show \d+ --db .+)\)$", r.stdout, re.M)
    assert m, r.stdout
    follow = shlex.split(m.group(1))
    assert follow[-1] == str(db)
    shown = run_iolab(*follow[1:], cwd=workdir, env={"IOLAB_DB": str(workdir / "other.db")})
    assert shown.returncode == 0, shown.stderr
    assert not (workdir / "other.db").exists()


def test_dry_run_uses_the_real_runs_test_folder(engine: Path, workdir: Path, db: Path) -> None:
    """Expected: the dry run's lines put the test file where the real run does (a private
    .iolab-bench-* folder in the current folder, removed after) / was: ./iolab-bench.data."""
    dry = run_iolab("bench", *NULL, "--dry-run", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    assert "iolab-bench.data" not in dry.stdout
    p = subprocess.run(["bash", "-c", dry.stdout], cwd=workdir, capture_output=True,
                       text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    pasted = json.loads(p.stdout)
    assert not list(workdir.iterdir())  # made, used, removed
    real = run_iolab("bench", *NULL, "--db", str(db), cwd=workdir)
    assert real.returncode == 0, real.stderr
    (run,) = db_rows(db)
    real_path = json.loads(run["engine_json"])["config"]["path"]
    for path in (pasted["config"]["path"], real_path):
        assert PRIVATE_PATH.search(path), path
    assert Path(real_path).parent.parent == workdir
    assert not list(workdir.iterdir())


def test_bad_input_only_the_ranks_see_creates_no_database(engine: Path, workdir: Path) -> None:
    """Expected: a block that is not a whole number of transfers (judged by the engine's
    ranks, after bench's own checks) is one line, exit 2, and no database or folder is left
    / was: the run refused but the --db file (and its folder) created."""
    for db in (workdir / "r.db", workdir / "new" / "r.db"):
        r = run_iolab("bench", "-a", "posix", "-t", "3k", "-b", "4k", "--np", "2",
                      "--db", str(db), cwd=workdir)
        assert r.returncode == 2, r.stderr
        (line,) = r.err_lines()
        assert "not a multiple of --transfer" in line, line
        assert not list(workdir.iterdir()), list(workdir.iterdir())
    kept = workdir / "kept.db"  # a database that was there stays, with what it held
    assert run_iolab("bench", *NULL, "--db", str(kept), "-q", cwd=workdir).returncode == 0
    before = db_rows(kept)
    r = run_iolab("bench", "-a", "posix", "-t", "3k", "-b", "4k", "--np", "2", "--db",
                  str(kept), cwd=workdir)
    assert r.returncode == 2 and kept.exists() and db_rows(kept) == before
