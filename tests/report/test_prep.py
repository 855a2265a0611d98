"""Data preparation of the report: table cells and plot series, numbers for people."""

from __future__ import annotations

import numpy as np
import pytest
from report_jobs import MIB, traced_job

from iolab.pages import fmt, prep_bench, prep_log, prep_run


def test_numbers_for_people() -> None:
    assert fmt.human_bytes(1536) == "1.5 KiB"
    assert fmt.human_bytes(1.2 * (1 << 30)) == "1.2 GiB"
    assert fmt.human_bytes(100) == "100 B"
    assert fmt.human_bytes(4096) == "4 KiB" and fmt.human_bytes(47008) == "45.9 KiB"
    assert fmt.human_rate(512.25 * MIB) == "512.2 MiB/s"
    assert fmt.human_seconds(3) == "3.0 s" and fmt.human_seconds(0.0042) == "4.2 ms"
    assert fmt.human_seconds(754) == "12.6 min" and fmt.human_seconds(0) == "0 s"
    assert fmt.human_seconds(3e-5) == "30 µs" and fmt.human_seconds(9000) == "2.5 h"
    assert fmt.human_count(1234567) == "1,234,567"


def test_spread_bytes_puts_every_byte_in_one_bin() -> None:
    edges = np.array([0.0, 1.0, 2.0, 3.0])
    # 300 B over [0.5, 2.0]: 100 in bin 0, 200 in bin 1; 50 B at an instant in bin 2
    out = prep_log.spread_bytes(np.array([0.5, 2.5]), np.array([2.0, 2.5]),
                                np.array([300.0, 50.0]), edges, chunk=1)
    assert out.tolist() == pytest.approx([100.0, 200.0, 50.0])
    rng = np.random.default_rng(1)
    s = rng.uniform(0, 9, 1000)
    e = s + rng.uniform(0, 1, 1000) * (rng.uniform(size=1000) > 0.2)
    n = rng.integers(1, 1 << 20, 1000).astype(float)
    got = prep_log.spread_bytes(s, e, n, np.linspace(0, 10, 37), chunk=97)
    assert got.sum() == pytest.approx(n.sum()) and (got >= 0).all()


def test_timeline_counts_mpiio_bytes_once_and_posix_only_files_at_posix() -> None:
    model = traced_job(ranks=2)
    tl = prep_log.timeline(model, bins=50)
    assert tl is not None
    # 2 ranks x 4 MiB through MPI-IO (the 8 POSIX writes under them not again) + 2 x 1 MiB
    assert tl.write.sum() == pytest.approx(2 * 4 * MIB + 2 * MIB)
    assert tl.read.sum() == 0
    layers = {model.files.paths[i]: lay for i, lay in tl.layer_of_file.items()}
    assert layers == {"/scratch/out.dat": "MPI-IO", "/scratch/side.dat": "POSIX"}
    assert tl.ops == 2 * 4 + 2
    assert tl.edges[0] == pytest.approx(1.0) and tl.edges[-1] == pytest.approx(2.05)
    act = prep_log.rank_activity(model)
    assert set(act) == {0, 1}
    assert act[1][0][0] == pytest.approx(1.0)


def test_rank_bars_name_the_slowest_rank() -> None:
    rb = prep_log.rank_bars(traced_job(ranks=4, slow_rank=2))
    assert rb is not None and rb.slowest == 2
    assert rb.bytes.tolist() == [5 * MIB] * 4


def test_layers_and_summary_tables() -> None:
    model = traced_job(ranks=2)
    lay = {r.layer: r for r in prep_log.layers(model)}
    assert list(lay) == ["MPI-IO", "POSIX"]
    assert lay["MPI-IO"].bytes_written == 8 * MIB and lay["POSIX"].bytes_written == 10 * MIB
    assert prep_log.common_access_sizes(model)[:2] == [["POSIX", "512 KiB", "16"],
                                                      ["POSIX", "1 MiB", "2"]]
    counts = {r[0]: r[1:] for r in prep_log.file_counts(model)}
    assert counts["total opened"] == ["2", "4.5 MiB", "8 MiB"]
    assert counts["write-only"][0] == "2" and counts["read-only"][0] == "0"
    per_proc = {r[0]: r for r in prep_log.average_io_per_process(model)}
    assert per_proc["POSIX"][5] == "5 MiB"  # 10 MiB over 2 processes
    assert prep_log.data_per_file_system(model) == [
        ["/scratch", "lustre", "2", "0 B", "10 MiB"]]
    env = dict((r[0], r[1]) for r in prep_log.environment_rows(model))
    assert env["processes"] == "2" and env["file system used"] == "/scratch (lustre)"
    hist = {h.interface: h for h in prep_log.access_sizes(model)}
    assert hist["POSIX"].write[4] == 18 and hist["MPI-IO"].write[4] == 8


def _doc(bws: list[float], read: list[float] | None = None) -> dict:
    reps = []
    for i, b in enumerate(bws):
        phases = [{"op": "write", "pass": 0, "bytes": 4 * MIB, "time_s": 1.0,
                   "bw_bytes_per_s": b * MIB, "per_rank": [
                       {"rank": 0, "bytes": 2 * MIB, "open_s": 0, "xfer_s": 0.1, "close_s": 0},
                       {"rank": 1, "bytes": 2 * MIB, "open_s": 0, "xfer_s": 0.3, "close_s": 0}]}]
        if read:
            phases.append({"op": "read", "pass": 0, "bytes": 4 * MIB, "time_s": 1.0,
                           "cache": "cold", "bw_bytes_per_s": read[i] * MIB})
        reps.append({"index": i, "phases": phases})
    return {"repetitions": reps, "config": {"api": "posix", "transfer_bytes": MIB},
            "environment": {"ranks": 2}}


def test_run_tables_and_series() -> None:
    doc = _doc([100, 300, 200], [50, 70, 60])
    rows = prep_bench.summary_rows(doc)
    assert rows[0][:5] == ["write", "3", "200.0", "100.0", "300.0"]
    assert rows[1][0] == "read" and rows[1][-1] == "cold"
    s = prep_bench.repetition_series(doc)
    assert [x.label for x in s] == ["write", "read"] and s[0].median == [100, 300, 200]
    rb = prep_bench.run_rank_bars(doc)
    assert rb is not None and rb.slowest == 1
    assert ["transfer_bytes", "1 MiB"] in prep_run.config_rows(doc)


def test_sweep_series_sorted_by_the_numeric_parameter_with_ranges() -> None:
    pts = [prep_bench.SweepPoint({"np": "4", "posix.mode": m}, "ok", _doc(b))
           for m, b in (("buffered", [400, 500, 450]), ("direct", [100, 120, 110]))]
    pts += [prep_bench.SweepPoint({"np": "1", "posix.mode": m}, "ok", _doc(b))
            for m, b in (("buffered", [90, 110, 100]), ("direct", [20, 30, 25]))]
    pts.append(prep_bench.SweepPoint({"np": "2", "posix.mode": "direct"}, "failed", None))
    series = {s.label: s for s in prep_bench.sweep_series(pts, "np", "write", "posix.mode")}
    assert series["posix.mode=buffered"].x == [1, 4]
    assert series["posix.mode=buffered"].median == [100, 450]
    assert series["posix.mode=direct"].low == [20, 100]
    assert series["posix.mode=direct"].high == [30, 120]


def test_convergence_keeps_the_best_so_far() -> None:
    assert prep_bench.convergence([3, None, 2, 5, 4]) == [3, 3, 3, 5, 5]
    assert prep_bench.convergence([3, 1, 2], maximize=False) == [3, 1, 1]


def test_ratio_with_interval_from_repetitions() -> None:
    a = prep_bench.Samples("A", {"write": [100, 101, 99, 100, 102], "read": [50.0]})
    b = prep_bench.Samples("B", {"write": [200, 198, 202, 201, 199], "read": [60.0]})
    r = {x.workload: x for x in prep_bench.ratios(a, b)}
    assert r["write"].ratio == pytest.approx(2.0)
    assert r["write"].ci_low is not None and 1.9 < r["write"].ci_low <= 2.0 <= r["write"].ci_high
    assert r["write"].note == "B better"
    assert r["read"].ratio == pytest.approx(1.2) and r["read"].ci_low is None


def test_a_page_writes_bytes_and_seconds_as_the_terminal_does() -> None:
    """expected: '1 MiB' on a page as in the terminal (diagnose, results) / was: '1.0 MiB' in
    HTML and compare; a 30 µs cost was '0.0 ms' in diagnose's text and '30 µs' on its page."""
    from iolab.diagnose.rules import base
    from iolab.results import render

    for n in (1 << 20, 1536, 47008, 100, 3 << 40):
        assert fmt.human_bytes(n) == base.fmt_bytes(n) == render.fmt_bytes(n)
    assert fmt.human_bytes(1 << 20) == "1 MiB"
    for s in (3e-5, 0.0042, 12.3, 754, 9000):
        assert fmt.human_seconds(s) == base.fmt_seconds(s)
    assert base.fmt_seconds(3e-5) == "30 µs"
