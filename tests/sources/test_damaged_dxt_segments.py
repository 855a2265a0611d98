"""DXT segments that a damaged log inflates to are left out, with one note, and never reach a
figure.

Expected: a log whose compressed DXT section has 256 bytes zeroed keeps the segments before the
damage (exactly those of the undamaged log), says in one note which section lost how many, and
`iolab diagnose` prints no library warning and no NaN, infinite or out-of-run time / was:
libdarshan-util read the garbage after the damage as segments (times of 1e190 s, negative
lengths, NaN), the timeline printed phases at -1.7e308 s and numpy's RuntimeWarnings
(trace.py: "invalid value encountered in subtract") went to stderr, exit 0.

Real log: the corpus's partial_data_dxt (Darshan 3.21, DXT_POSIX and DXT_MPIIO), copied and
damaged here."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from corpus import REAL_LOGS_DIR, REAL_MISSING

from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

REPO = Path(__file__).resolve().parents[2]
PARTIAL_DXT = REAL_LOGS_DIR / "partial_data_dxt" / "partial_data_dxt.darshan"
pytestmark = pytest.mark.skipif(not PARTIAL_DXT.is_file(), reason=REAL_MISSING)
pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
COLUMNS = ("module", "rank", "record_id", "write", "offset", "length", "start_s", "end_s")


def _zeroed(out: Path, share: float, nbytes: int = 256) -> Path:
    """A copy of the log with ``nbytes`` zeroed at ``share`` of its size (in its DXT data)."""
    data = bytearray(PARTIAL_DXT.read_bytes())
    at = int(len(data) * share)
    data[at:at + nbytes] = bytes(nbytes)
    out.write_bytes(bytes(data))
    return out


def _no_bad_floats(text: str) -> None:
    def refuse(name: str) -> float:
        raise AssertionError(f"{name} in the JSON")
    json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("share", [0.25, 0.5, 0.75])
def test_segments_after_dxt_damage_are_left_out(tmp_path: Path, share: float) -> None:
    """Expected: the kept trace is the undamaged log's first segments, one note names the
    section and the count / was: garbage segments kept (times 1e190 s, lengths < 0)."""
    whole = load_darshan_log(PARTIAL_DXT).trace_table
    raw = load_darshan_log(_zeroed(tmp_path / "damaged.darshan", share))
    t = raw.trace_table
    assert whole is not None and t is not None
    damaged = [n for n in raw.notes if "segments read are damaged" in n]
    assert len(damaged) == 1, raw.notes
    section = "DXT_MPIIO" if share == 0.75 else "DXT_POSIX"
    assert f"{section}:" in damaged[0] and t.truncated
    # the kept segments are the undamaged log's, row for row, in the same order
    n = len(t)
    assert 0 < n < len(whole)
    for col in COLUMNS:
        np.testing.assert_array_equal(getattr(t, col), getattr(whole, col)[:n], err_msg=col)
    left_out = int(damaged[0].split(" of the ")[0].rsplit(" ", 1)[-1])
    kept_in_section = int((t.module == (1 if section == "DXT_MPIIO" else 0)).sum())
    assert f"of the {kept_in_section + left_out} segments read" in damaged[0]
    model = build_model([raw])
    assert model.trace is not None and model.trace.partial_reasons


def test_diagnose_of_damaged_dxt_prints_no_warning_or_nan(tmp_path: Path) -> None:
    """Expected: exit 0, empty stderr even with RuntimeWarnings as errors, the timeline inside
    the run / was: three numpy RuntimeWarnings on stderr, phases at +-1e308 s, NaN in-flight."""
    log = _zeroed(tmp_path / "damaged.darshan", 0.75)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    run = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "iolab",
                          "diagnose", "--json", str(log)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    _no_bad_floats(run.stdout)
    doc = json.loads(run.stdout)
    tl = doc["summary"]["timeline"]
    assert tl is not None
    run_s = doc["job"]["run_time_s"]
    assert 0 <= tl["first_s"] <= tl["last_s"] <= run_s + 1
    for ph in tl["phases"]:
        assert 0 <= ph["start_s"] <= ph["end_s"] <= run_s + 1
        assert math.isfinite(ph["start_s"])
