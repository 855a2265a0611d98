"""What a verb imports before it does anything: the test suite and every tune trial start
``python -m iolab VERB`` thousands of times, and numpy alone costs each start ~0.2 s of CPU."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "matplotlib", "scipy", "pyarrow", "duckdb", "optuna", "pandas", "dask")


@pytest.mark.parametrize("verb", ["profile", "tune", "sweep", "compare", "study"])
def test_verbs_that_need_no_numpy_start_without_it(verb: str) -> None:
    """Expected: `iolab profile` (it merges its parts' text), `tune` (a refusal, --list, or
    up to its search), `sweep`, `compare` and `study` (of stored runs; a page or two logs
    load what they draw and read) parse their command line with none of numpy, matplotlib,
    scipy, pyarrow, duckdb, optuna, pandas, dask imported / was: numpy at every start
    (iolab.sources, tune.proof and tune.fromlog, pages.prep_bench and pages.page, compare's
    log readers, study's page imported it)."""
    code = ("import sys\nfrom iolab.cli import main\n"
            "try:\n"
            f"    main([{verb!r}, '--no-such-option'])\n"
            "except SystemExit:\n"
            "    pass\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [], f"iolab {verb} imports {r.stdout.strip()} at start-up"
