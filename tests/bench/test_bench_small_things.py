"""The small things a careful tool gets right, each once wrong.

- ``--dry-run`` printed a line that could not be pasted (no environment, a path in a folder
  that does not exist): expected, the line runs as printed.
- ``-k`` without ``-o`` left a hidden ``.iolab-bench-*`` folder without saying where.
- the verify note printed a Python dict; ``results show`` printed MPICH's 2 KB configure line.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bench_helpers import db_rows, run_iolab

from iolab.results.render import _run_notes, fmt_mpi


def engine_doc() -> dict:  # type: ignore[type-arg]
    return {"schema_version": 1, "status": "ok", "config": {}, "environment": {},
            "hints": {}, "repetitions": [], "summary": {}}


def test_dry_run_line_runs_as_printed(engine: Path, workdir: Path) -> None:
    r = run_iolab("bench", "--dry-run", "--api", "null", "-t", "64k", "-b", "1m", "--np", "2",
                  cwd=workdir)
    assert r.returncode == 0, r.stderr
    # without --path: make the private folder, the one launch line, remove the folder
    assert len(r.stdout.splitlines()) == 3
    p = subprocess.run(["bash", "-c", r.stdout], cwd=workdir, capture_output=True, text=True,
                       timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["status"] == "ok" and doc["environment"]["ranks"] == 2
    assert not list(workdir.iterdir())  # the engine removed its files


def test_keep_without_path_says_where(engine: Path, workdir: Path, db: Path) -> None:
    r = run_iolab("bench", "--api", "posix", "-t", "64k", "-b", "256k", "-k", "--np", "2",
                  "--db", str(db), cwd=workdir)
    assert r.returncode == 0, r.stderr
    (kept,) = list(workdir.iterdir())
    assert f"test files kept (-k) in {kept}" in r.stderr
    assert len(db_rows(db)) == 1


def test_verify_note_and_mpi_are_words() -> None:
    doc = engine_doc()
    doc["verify"] = {"enabled": True, "errors": 12,
                     "first_bad": {"rank": 1, "reader": 0, "offset": 4096, "file": "/s/f"}}
    (note,) = [n for n in _run_notes({"id": 3, "status": "ok", "engine_json": doc})
               if "verify" in n]
    assert "{" not in note and "offset 4096 of /s/f" in note and "read by rank 0" in note
    mpich = ("MPICH Version: 4.0.2 MPICH Release date: Thu Apr  7 12:34:45 CDT 2022 MPICH "
             "ABI: 14:2:2 MPICH Device: ch4:ucx MPICH configure: --build=x86_64 " + "x" * 2000)
    assert fmt_mpi(mpich) == "MPICH Version: 4.0.2"
    assert len(fmt_mpi("y" * 500)) == 80


def _engine_error(engine: Path, *args: str) -> str:
    import os

    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    p = subprocess.run([str(engine), *args], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 2, p.stderr
    return p.stderr.strip().splitlines()[0]


def test_engine_error_lists_the_backends_this_build_has(engine: Path) -> None:
    """Expected: the apis named in an error are this binary's (from its registry and
    capability flags); was: a hand-typed list naming pnetcdf in builds without it."""
    import re

    from bench_helpers import engine_or_none

    from iolab.bench import options

    for exe in filter(None, (engine, engine_or_none("mpich"))):
        built = options.built_apis(options.load_table(exe))
        msg = _engine_error(exe, "--hint", "cb_nodes=1")
        named = re.search(r"apis \(([^)]*)\)", msg)
        assert named is not None, msg
        mpiio_based = [a for a in built if a in ("mpiio", "hdf5", "pnetcdf")]
        assert named.group(1).split(", ") == mpiio_based, (exe, msg)
        msg = _engine_error(exe, "--collective")
        listed = re.search(r"I/O \(([^)]*)\)", msg)
        assert listed is not None and set(listed.group(1).split(", ")) <= set(built)
