"""IOR's -j (outlierThreshold): its warning lines for ranks far from the mean of a timer,
from the engine's per-rank times, as IOR's CheckForOutliers prints them."""

from __future__ import annotations

import math
from pathlib import Path

from ior_helpers import run_iolab

from iolab.ior.output import outlier_warnings
from iolab.runs.engine_doc import Phase, from_json


def one_phase(phase: dict[str, object]) -> Phase:
    """The phase as the run model reads it from a document holding only it."""
    return next(from_json({"repetitions": [{"index": 0, "phases": [phase]}]}).phases())


def test_outlier_warning_names_the_late_rank_as_ior() -> None:
    """expected one IOR line for the rank 3 s late in its transfers (population stddev) /
    was -j refused."""
    xfer = [1.0, 1.0, 1.0, 5.0]
    ranks = [{"rank": r, "host": "n1", "start_s": 0.0, "open_s": 0.1, "xfer_s": x,
              "close_s": 0.1, "end_s": 0.2 + x} for r, x in enumerate(xfer)]
    got = outlier_warnings(one_phase({"op": "write", "per_rank": ranks}), 2)
    mean = sum(xfer) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in xfer) / 4)
    ends = [0.2 + x for x in xfer]
    emean = sum(ends) / 4
    esd = math.sqrt(sum((e - emean) ** 2 for e in ends) / 4)
    assert got == [
        f"WARNING: for n1, task 3, write elapsed transfer time is {5.0:f} (mean={mean:f}, "
        f"stddev={sd:f})",
        f"WARNING: for n1, task 3, write end time is {5.2:f} (mean={emean:f}, "
        f"stddev={esd:f})"]
    assert outlier_warnings(one_phase({"op": "write", "per_rank": ranks}), 4) == []


def test_j_runs_and_warns_only_for_outliers(engine: Path, tmp_path: Path) -> None:
    """expected -j 1 accepted and no warning when the ranks keep pace / was refused."""
    out = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-j", "1", "-t",
                    "4k", "-b", "16k", "-o", str(tmp_path / "f"))
    assert out.returncode == 0, out.stderr
    assert "Summary of all tests" in out.stdout and "WARNING" not in out.stdout
