"""The file removal phase of ``mdtest -F -n N`` (a ``-r`` line after a ``-C`` line, as
benchmarks compare it) against a real mdtest (IOLAB_MDTEST) under strace on 2 ranks: every
system call a rank makes from its first item's unlink to its last, of any kind, so work per
removed item that names no item (a record of what the run made, written or read per item; a
stat before each unlink) shows too. Skipped, with the reason, without a real mdtest."""

from __future__ import annotations

import re
import stat
import subprocess
from pathlib import Path

from mdtest_helpers import mpirun_env, run_iolab

ITEMS = 50
ITEM_UNLINK = re.compile(r'^unlink\("[^"]*/file\.mdtest\.\d+\.\d+"\)')
CALL = re.compile(r"^(\w+)\(")


def removal_calls(trace_dir: Path) -> list[list[str]]:
    """Per traced thread that unlinked items: its calls from the first item unlink to the
    last (both included)."""
    out = []
    for path in sorted(trace_dir.iterdir()):
        lines = path.read_text().splitlines()
        hits = [k for k, ln in enumerate(lines) if ITEM_UNLINK.match(ln)]
        if hits:
            span = lines[hits[0]:hits[-1] + 1]
            out.append([m.group(1) for ln in span if (m := CALL.match(ln))])
    return out


def test_file_removal_makes_no_call_per_item_but_mdtests(real_mdtest: Path, engine: Path,
                                                         tmp_path: Path) -> None:
    """expected: each rank's removal phase is its items' unlinks and no other system call,
    call for call as many as mdtest's (issue #29's '-F -n 500' File removal row, 0.79) /
    was: the same (a guard: strace of both showed 500 unlinks a rank and nothing between
    them, so the row's gap is not extra calls per item)."""
    words = ["-F", "-n", str(ITEMS)]
    theirs_trace, ours_trace = tmp_path / "t-mdtest", tmp_path / "t-iolab"
    theirs_trace.mkdir()
    ours_trace.mkdir()
    theirs_dir = str(tmp_path / "mdtest-out")
    for phase, trace in (("-C", None), ("-r", theirs_trace)):
        wrap = ["strace", "-ff", "-qq", "-o", str(trace / "t")] if trace else []
        p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", *wrap, str(real_mdtest),
                            *words, phase, "-d", theirs_dir], cwd=tmp_path,
                           env=mpirun_env(), capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
    script = tmp_path / "traced-iolab-bench"
    script.write_text(f'#!/bin/sh\nexec strace -ff -qq -o "{ours_trace}/t" "{engine}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    for phase, bench in (("-C", str(engine)), ("-r", str(script))):
        out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words, phase,
                        "-d", str(tmp_path / "iolab-out"), env={"IOLAB_BENCH": bench})
        assert out.returncode == 0, out.stderr
    theirs, ours = removal_calls(theirs_trace), removal_calls(ours_trace)
    assert len(theirs) == len(ours) == 2, (len(theirs), len(ours))
    for calls in theirs + ours:
        assert calls.count("unlink") == ITEMS, calls[:20]
    extra = sorted(len(c) - ITEMS for c in ours)
    theirs_extra = sorted(len(c) - ITEMS for c in theirs)
    assert all(o <= t for o, t in zip(extra, theirs_extra)), (
        extra, theirs_extra, [sorted(set(c) - {"unlink"}) for c in ours])
