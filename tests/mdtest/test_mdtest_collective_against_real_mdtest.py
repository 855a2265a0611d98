"""``iolab mdtest -c`` (collective creates) and ``-B`` against a real mdtest (IOR 4 built from
hpc/ior in a scratch folder, IOLAB_MDTEST), both under strace on 2 ranks: with -c rank 0
makes every rank's directories and files (empty), each rank then opens its own
files and writes them, and rank 0 removes them all -- the same calls on the same names in
the same order on each rank. mdtest 4 stops every -B other than 0 in its own checks, so
iolab refuses it with mdtest's reason and runs -B 0 as mdtest does. Skipped, with the
reason, without a real mdtest."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mdtest_helpers import mpirun_env, run_iolab, summary_rows
from mdtest_trace import calls_by_rank, traced

# A rank that makes nothing under -c (rank 1) is known by the first item it touches.
TOUCHED = ("create", "mkdir", "mknod", "open", "stat", "unlink", "rmdir")

LINES = [
    ["-c", "-n", "3", "-w", "5", "-e", "5"],
    ["-c", "-F", "-n", "2", "-y", "-w", "7", "-e", "7", "-i", "2"],
    ["-c", "-z", "1", "-b", "2", "-I", "2"],
    ["-c", "-F", "-z", "2", "-b", "2", "-I", "1", "-L"],
    ["-B=0", "-F", "-n", "3"],
]


def _both(tmp_path: Path, real_mdtest: Path, engine: Path, words: list[str]
          ) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str],
                     Path, Path, Path, Path]:
    theirs_dir, ours_dir = tmp_path / "mdtest-out", tmp_path / "iolab-out"
    theirs_wrap, theirs_trace = traced(tmp_path, real_mdtest, "mdtest")
    theirs = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(theirs_wrap), *words,
                             "-d", str(theirs_dir)], cwd=tmp_path, env=mpirun_env(),
                            capture_output=True, text=True, timeout=300)
    ours_wrap, ours_trace = traced(tmp_path, engine, "iolab")
    ours = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-d",
                     str(ours_dir), env={"IOLAB_BENCH": str(ours_wrap)})
    return theirs, ours, theirs_dir, ours_dir, theirs_trace, ours_trace


@pytest.mark.parametrize("words", LINES, ids=[" ".join(w) for w in LINES])
def test_collective_creates_make_mdtests_calls(real_mdtest: Path, engine: Path,
                                               tmp_path: Path, words: list[str]) -> None:
    """expected rank 0 to make and remove every rank's items as mdtest -c, each rank to open
    and write its own files after / was refused ('every rank creates its own files')."""
    theirs, ours, theirs_dir, ours_dir, theirs_trace, ours_trace = _both(
        tmp_path, real_mdtest, engine, words)
    assert theirs.returncode == 0, theirs.stdout + theirs.stderr
    assert ours.returncode == 0, ours.stderr
    want = calls_by_rank(theirs_trace, str(theirs_dir), made=TOUCHED)
    got = calls_by_rank(ours_trace, str(ours_dir), made=TOUCHED)
    assert set(want) == {0, 1}
    if "-c" in words:  # rank 0 made rank 1's items: the -c shape is there to compare
        assert any(c[0] in ("create", "mkdir") and ".mdtest.1." in c[1] for c in want[0])
    for rank in (0, 1):
        assert got[rank] == want[rank], rank
    assert [r[0] for r in summary_rows(ours.stdout)] == [r[0] for r in summary_rows(
        theirs.stdout)]
    assert not os.path.exists(ours_dir)


def test_no_barriers_is_refused_with_mdtests_own_reason(real_mdtest: Path, engine: Path,
                                                        tmp_path: Path) -> None:
    """expected -B 1 refused with mdtest's own failure (its md_validate_tests stops every
    -B run), exit 2 and nothing made / was refused as 'the engine starts every phase with a
    barrier' (as if mdtest ran it)."""
    theirs = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(real_mdtest), "-B=1",
                             "-F", "-n", "3", "-d", str(tmp_path / "m")], cwd=tmp_path,
                            env=mpirun_env(), capture_output=True, text=True, timeout=300)
    assert theirs.returncode != 0
    assert "with barriers" in theirs.stdout + theirs.stderr
    ours = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), "-B=1", "-F",
                     "-n", "3", "-d", str(tmp_path / "o"))
    assert ours.returncode == 2
    assert len(ours.stderr.strip().splitlines()) == 1
    assert "with barriers" in ours.stderr and "nearest in iolab: mdtest without -B" in (
        ours.stderr)
    assert not (tmp_path / "o").exists() and not (tmp_path / "r.db").exists()
