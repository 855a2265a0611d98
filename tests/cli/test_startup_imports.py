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
    heavy = _heavy_modules_after(verb, "--no-such-option")
    assert heavy == [], f"iolab {verb} imports {' '.join(heavy)} at start-up"


def test_report_starts_without_numpy_or_the_pages_of_other_verbs() -> None:
    """Expected: `iolab report` refusing its command line (a bad option, a bad id) has none of
    numpy, matplotlib, scipy, pyarrow, duckdb, optuna, pandas, dask, nor diagnose's or
    tune's modules imported / was: numpy, diagnose's model and rules and tune's search at
    every start (report.cli imported every kind of page at its top: 0.45 s of CPU)."""
    for argv in (("--no-such-option",), ("tune", "x")):
        heavy = _heavy_modules_after("report", *argv,
                                     also=("iolab.diagnose.report", "iolab.tune.search"))
        assert heavy == [], f"iolab report {' '.join(argv)} imports {' '.join(heavy)}"


def _heavy_modules_after(verb: str, *argv: str, also: tuple[str, ...] = ()) -> list[str]:
    """The HEAVY (and ``also``) modules imported once ``iolab VERB ARGV`` has refused ARGV."""
    code = ("import sys\nfrom iolab.cli import main\n"
            "try:\n"
            f"    main([{verb!r}, *{argv!r}])\n"
            "except SystemExit:\n"
            "    pass\n"
            f"print(' '.join(m for m in {HEAVY + also!r} if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()
