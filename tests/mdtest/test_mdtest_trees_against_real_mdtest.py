"""``iolab mdtest`` against a real mdtest (IOR 4 built from hpc/ior in a scratch folder,
IOLAB_MDTEST) on lines with trees (-z -b -I -L), neighbour strides (-N), mknod (-k), fsync
(-y), the random stat order (-R) and iterations: on 2 ranks, both under strace, each rank
makes exactly the same calls on exactly the same names below the -d folder (test-dir.0-0,
mdtest_tree.*, file.mdtest.R.N, dir.mdtest.R.N), in the same order, with the same sizes
read and written, and the reports have the same rows (Tree creation and removal included).
Skipped, with the reason, without a real mdtest."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mdtest_helpers import mpirun_env, run_iolab, summary_rows
from mdtest_trace import calls_by_rank, traced

LINES = [
    ["-z", "2", "-b", "2", "-I", "2", "-N", "1", "-L"],
    ["-F", "-u", "-N", "1", "-n", "5", "-w", "3901", "-e", "3901", "-y", "-X"],
    ["-F", "-n", "6", "-R", "--random-seed=7"],
    ["-F", "-n", "6", "--random-seed=7"],
    ["-F", "-k", "-I", "2", "-z", "1", "-b", "3"],
    ["-u", "-z", "1", "-b", "2", "-I", "2", "-i", "2"],
    ["-D", "-z", "1", "-b", "2", "-n", "7", "-N", "1"],
    ["-F", "-z", "3", "-b", "1", "-n", "9"],
]


@pytest.mark.parametrize("words", LINES, ids=[" ".join(w) for w in LINES])
def test_same_calls_on_the_same_names_as_real_mdtest(real_mdtest: Path, engine: Path,
                                                     tmp_path: Path, words: list[str]) -> None:
    """expected mdtest's own names and call order for its trees and per-item options / was
    refused (-z, -N, -k, -y, -R) or file.iolab names in mdtest_tree.md/."""
    theirs_dir, ours_dir = tmp_path / "mdtest-out", tmp_path / "iolab-out"
    theirs_wrap, theirs_trace = traced(tmp_path, real_mdtest, "mdtest")
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(theirs_wrap), *words,
                        "-d", str(theirs_dir)], cwd=tmp_path, env=mpirun_env(),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    ours_wrap, ours_trace = traced(tmp_path, engine, "iolab")
    out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-d",
                    str(ours_dir), env={"IOLAB_BENCH": str(ours_wrap)})
    assert out.returncode == 0, out.stderr
    theirs = calls_by_rank(theirs_trace, str(theirs_dir))
    ours = calls_by_rank(ours_trace, str(ours_dir))
    assert set(theirs) == {0, 1}
    for rank in (0, 1):
        assert ours[rank] == theirs[rank], rank
    assert [r[0] for r in summary_rows(out.stdout)] == [r[0] for r in summary_rows(p.stdout)]
    assert not os.path.exists(ours_dir)
