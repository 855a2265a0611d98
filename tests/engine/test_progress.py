"""In-phase progress (--progress): rank 0 prints ``progress-bytes`` lines within a long
phase, at most every 0.5 s, bytes done of the phase's total; the JSON result is the same
with and without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_helpers import Engine, run_engine

from iolab.bench.engine import PhaseBytes, Progress, parse_progress

MIB = 1 << 20
# 2 ranks x 24 transfers of 1 MiB at 80 ms each: about 1.9 s per phase
LONG_NULL = ["--api", "null", "--null.delay-us", "80000", "--transfer", "1M", "--block", "24M",
             "--reps", "1", "--quiet"]


def _lines(stderr: str) -> list[PhaseBytes | Progress]:
    return [p for p in map(parse_progress, stderr.splitlines()) if p is not None]


def test_progress_within_a_long_phase_is_monotonic(engine: Engine, tmp_path: Path) -> None:
    r = run_engine(engine, 2, [*LONG_NULL, "--write", "--read", "--progress"], tmp_path)
    assert r.rc == 0, r.why()
    seen = _lines(r.stderr)
    for op in ("write", "read"):
        ticks = [p for p in seen if isinstance(p, PhaseBytes) and p.op == op]
        assert len(ticks) >= 2, (op, r.stderr)
        total = 2 * 24 * MIB  # the phase's bytes over both ranks, as the JSON counts them
        assert {t.total_bytes for t in ticks} == {total}
        assert [r.phases(op)[0]["bytes"]] == [total]
        done = [t.done_bytes for t in ticks]
        assert done == sorted(done) and 0 < done[0] and done[-1] <= total
        secs = [t.elapsed_s for t in ticks]
        # at most every 0.5 s (the first one 0.5 s into the phase)
        assert secs[0] >= 0.5 and all(b - a >= 0.49 for a, b in zip(secs, secs[1:]))
    # the phase lines come after their phase's in-phase lines, in order
    kinds = [(type(p).__name__, p.op) for p in seen]
    assert kinds.index(("Progress", "write")) < kinds.index(("PhaseBytes", "read"))
    assert kinds[-1] == ("Progress", "read")


def _shape(doc: Any, path: str = "") -> set[str]:
    """Every key path of a JSON document (values aside: times differ run to run)."""
    if isinstance(doc, dict):
        return {k2 for k, v in doc.items() for k2 in {f"{path}/{k}"} | _shape(v, f"{path}/{k}")}
    if isinstance(doc, list):
        return {k for v in doc for k in _shape(v, f"{path}[]")}
    return set()


def test_json_result_unchanged_by_progress(engine: Engine, tmp_path: Path) -> None:
    args = ["--api", "null", "--null.delay-us", "60000", "--transfer", "1M", "--block", "12M",
            "--reps", "1", "--quiet", "--write"]
    with_p = run_engine(engine, 2, [*args, "--progress"], tmp_path)
    without = run_engine(engine, 2, args, tmp_path)
    assert with_p.rc == without.rc == 0, (with_p.why(), without.why())
    assert any(isinstance(p, PhaseBytes) for p in _lines(with_p.stderr))
    assert not _lines(without.stderr)
    assert with_p.doc is not None and without.doc is not None
    assert _shape(with_p.doc) == _shape(without.doc)
    for key in ("bytes", "ops"):
        assert [p[key] for p in with_p.phases()] == [p[key] for p in without.phases()]


@pytest.mark.parametrize("extra", [["--threads", "2"], ["--layout", "serial"]],
                         ids=["threads", "serial-aggregated"])
def test_progress_from_other_loops(engine: Engine, tmp_path: Path, extra: list[str]) -> None:
    args = ["--api", "null", "--null.delay-us", "100000", "--transfer", "1M", "--block", "12M",
            "--reps", "1", "--quiet", "--write", "--progress", *extra]
    r = run_engine(engine, 2, args, tmp_path)
    assert r.rc == 0, r.why()
    ticks = [p for p in _lines(r.stderr) if isinstance(p, PhaseBytes)]
    assert ticks and all(t.total_bytes == 2 * 12 * MIB for t in ticks), r.stderr
    assert [t.done_bytes for t in ticks] == sorted(t.done_bytes for t in ticks)
