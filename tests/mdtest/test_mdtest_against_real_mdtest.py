"""``iolab mdtest`` against a real mdtest (IOR 4, built from hpc/ior in a scratch folder,
IOLAB_MDTEST) on the same lines and 2 ranks, both under strace: each rank makes the same
calls on the same items (files and directories, by rank and index; both name them
file.mdtest.R.I now, iolab's older file.iolab.R.I is still read), in the same order,
with the same file sizes, and the two reports show the same phases. Skipped, with the
reason, without a real mdtest."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest
from mdtest_helpers import mpirun_env, run_iolab, summary_rows

TRACED = "trace=mkdir,rmdir,rename,openat,newfstatat,stat,unlink"
# mdtest: .../mdtest_tree.0/file.mdtest.1.3 (shared) or .../mdtest_tree.1.0/... (-u);
# iolab:  .../mdtest_tree.md/file.iolab.1.3 or .../mdtest_tree.md/1/file.iolab.1.3
ITEM = re.compile(r'"[^"]*?/(?:mdtest_tree\.(?:0|(\d+)\.0)|mdtest_tree\.md(?:/(\d+))?)/'
                  r'(file|dir)\.(?:mdtest|iolab)\.(\d+)\.(\d+(?:-XX)?)"')


def normalised_calls(trace_dir: Path) -> dict[str, list[tuple[str, ...]]]:
    """rank -> its calls on items: (call, kind, index, per-rank dir?, [size | renamed to])."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for f in sorted(trace_dir.iterdir()):
        for line in f.read_text().splitlines():
            items = list(ITEM.finditer(line))
            call = re.match(r"(?:\d+ +)?(\w+)\(", line)
            if not items or not call or "= -1" in line:
                continue
            name = call.group(1).replace("newfstatat", "stat")
            if name == "openat":
                name = "create" if "O_CREAT" in line else "open"
            first = items[0]
            own_dir = "rank dir" if (first.group(1) or first.group(2)) else "shared dir"
            entry: tuple[str, ...] = (name, first.group(3), first.group(5), own_dir)
            size = re.search(r"st_size=(\d+)", line)
            if name == "stat" and first.group(3) == "file" and size:
                entry += (size.group(1),)
            if name == "rename" and len(items) > 1:
                entry += (items[1].group(5),)
            out.setdefault(first.group(4), []).append(entry)
    return out


def mdtest_rows(report: str) -> list[str]:
    """The phases a report shows, without the Tree rows (compared, with the tree's calls, in
    test_mdtest_trees_against_real_mdtest.py)."""
    return [r[0] for r in summary_rows(report) if not r[0].startswith("Tree ")]


def strace_wrapper(tmp_path: Path, real: Path, trace_dir: Path) -> Path:
    script = tmp_path / "traced-iolab-bench"
    script.write_text(f'#!/bin/sh\nexec strace -ff -qq -e {TRACED} -o "{trace_dir}/t" '
                      f'"{real}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


LINES = [
    ["-F", "-n", "5"],
    ["-n", "4", "-i", "2"],
    ["-D", "-u", "-n", "3"],
    ["-F", "-u", "-w", "100", "-e", "100", "-n", "3"],
    ["-n", "1"],
]


@pytest.mark.parametrize("words", LINES, ids=[" ".join(w) for w in LINES])
def test_same_calls_items_and_phases_as_real_mdtest(real_mdtest: Path, engine: Path,
                                                    tmp_path: Path, words: list[str]) -> None:
    theirs_trace, ours_trace = tmp_path / "t-mdtest", tmp_path / "t-iolab"
    theirs_trace.mkdir()
    ours_trace.mkdir()
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", "strace", "-ff", "-qq",
                        "-e", TRACED, "-o", str(theirs_trace / "t"), str(real_mdtest),
                        *words, "-d", str(tmp_path / "mdtest-out")], cwd=tmp_path,
                       env=mpirun_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    wrapper = strace_wrapper(tmp_path, engine, ours_trace)
    out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-d",
                    str(tmp_path / "iolab-out"), env={"IOLAB_BENCH": str(wrapper)})
    assert out.returncode == 0, out.stderr
    theirs, ours = normalised_calls(theirs_trace), normalised_calls(ours_trace)
    assert set(theirs) == {"0", "1"}
    assert ours == theirs
    assert mdtest_rows(out.stdout) == mdtest_rows(p.stdout)
    tasks = [ln for ln in p.stdout.splitlines() if re.match(r"\d+ tasks, ", ln)]
    assert tasks and tasks[0] in out.stdout.splitlines()
    assert not os.path.exists(tmp_path / "iolab-out")
