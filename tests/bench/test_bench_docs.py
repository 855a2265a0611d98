"""docs/bench.md is a twin of the code in two places; this keeps them equal."""

from __future__ import annotations

import re
from pathlib import Path

from iolab.bench import jobs, options

DOC = Path(__file__).resolve().parents[2] / "docs" / "bench.md"


def test_ior_flag_table_matches_the_aliases() -> None:
    rows = re.findall(r"^\| `(-\w|--[\w.]+)`\s+\| `([^`]+)`", DOC.read_text(), flags=re.M)
    documented = {flag: target for flag, target in rows}
    expected = {}
    for a in options.IOR_ALIASES:
        if a.const is None or a.const is True:
            expected[a.flag] = f"--{a.option}"
        else:
            expected[a.flag] = f"--{a.option} {a.const}"
    assert documented == expected


def test_default_job_sizes_are_documented() -> None:
    text = DOC.read_text()
    args = dict(zip(jobs.DEFAULT_COMMON[::2], jobs.DEFAULT_COMMON[1::2]))
    assert args["--transfer"] == "1M" and "transfer 1 MiB" in text
    assert args["--block"] == "16M" and "block 16 MiB" in text
    assert args["--reps"] == "3" and "3 repetitions" in text
    assert [c.label for c in jobs.DEFAULT_JOB] == re.findall(r"^\| `(default:\w+)`", text,
                                                             flags=re.M)
