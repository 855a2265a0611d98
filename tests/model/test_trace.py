"""Trace metrics from DXT logs equal what plain Python computes from pydarshan's own DXT
records (a second reader: pydarshan's DarshanReport, not iolab's cffi/numpy loader).

Each independent computation below walks the records one by one, with the definitions
written out again: per (file, rank, direction), in start-time order, a request is
consecutive (starts where the previous one ended), repeated (same offset again), backward,
strided (a forward jump equal to the previous or next jump) or a random forward jump.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import corpus
import pytest

from iolab.model.files import APP, categorize
from iolab.model.job import build_model

GENERATED = corpus.GENERATED_DIR
LOGS = corpus.REAL_LOGS_DIR
corpus.require()
RANDOM_DXT = GENERATED / "posix_mixed_rw_random_reads_dxt.darshan"
MPI_DXT = next((LOGS / "mpi_io_test_with_dxt").glob("*.darshan"))
MiB = 1 << 20
PARTIAL_DXT = LOGS / "partial_data_dxt" / "partial_data_dxt.darshan"
HDF5_DXT = LOGS / "hdf5_diagonal_write_only" / "hdf5_diagonal_write_1_byte_dxt.darshan"

darshan = pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
from iolab.sources import darshan as loader  # noqa: E402


def _dxt(path: Path, mod: str) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """pydarshan's DXT records (dicts with segment lists) and the record names."""
    with darshan.DarshanReport(str(path), read_all=True) as r:
        recs = r.records[mod].to_numpy() if mod in r.records else []
        return recs, dict(r.name_records)


def _segments(path: Path, mod: str = "DXT_POSIX") -> list[tuple[int, int, str, dict]]:
    """(record id, rank, direction, segment) of application files, in the log's order."""
    recs, names = _dxt(path, mod)
    out = []
    for rec in recs:
        if categorize(names.get(rec["id"], "")) != APP:
            continue
        for d in ("read", "write"):
            out.extend((rec["id"], rec["rank"], d, s) for s in rec[f"{d}_segments"])
    return out


def _jumps_by_hand(segs: list[tuple[int, int, str, dict]], direction: str) -> dict[str, int]:
    streams: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for rid, rank, d, s in segs:
        if d == direction:
            streams[(rid, rank)].append(s)
    n = {"ops": 0, "consecutive": 0, "repeated": 0, "backward": 0, "strided": 0,
         "random_forward": 0}
    for ss in streams.values():
        ss = sorted(ss, key=lambda s: s["start_time"])
        n["ops"] += len(ss)
        gaps: list[int | None] = [None]
        for a, b in zip(ss, ss[1:]):
            gaps.append(b["offset"] - (a["offset"] + a["length"]))
        for i in range(1, len(ss)):
            gap = gaps[i]
            assert gap is not None
            if gap == 0:
                n["consecutive"] += 1
            elif ss[i]["offset"] == ss[i - 1]["offset"]:
                n["repeated"] += 1
            elif gap < 0:
                n["backward"] += 1
            else:
                prev_fwd = i >= 2 and gaps[i - 1] is not None and gaps[i - 1] > 0 and \
                    gaps[i - 1] == gap
                next_eq = i + 1 < len(ss) and gaps[i + 1] == gap
                n["strided" if prev_fwd or next_eq else "random_forward"] += 1
    return n


@pytest.fixture(scope="module")
def random_model():
    return build_model([loader.load_darshan_log(RANDOM_DXT)])


def test_jumps_equal_pydarshan_records(random_model) -> None:
    segs = _segments(RANDOM_DXT)
    tm = random_model.metrics.trace
    assert tm is not None and tm.complete and tm.exact == {"read": True, "write": True}
    for d in ("read", "write"):
        a = tm.access[d]
        got = {"ops": a.ops, "consecutive": a.consecutive, "repeated": a.repeated,
               "backward": a.backward, "strided": a.strided, "random_forward": a.random_forward}
        assert got == _jumps_by_hand(segs, d), d
    # The known program: 10,000 random 4 KiB preads, then 2,000 reads of 100 B strided by 8 KiB.
    r = tm.access["read"]
    assert r.ops == 12000 and 9990 <= r.random <= 10001 and 1998 <= r.strided <= 2010
    assert r.consecutive == 0


def test_sizes_equal_pydarshan_records(random_model) -> None:
    segs = _segments(RANDOM_DXT)
    edges = [100, 1024, 10240, 102400, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30]
    for d in ("read", "write"):
        lengths = [s["length"] for _, _, dd, s in segs if dd == d]
        bins = [0] * 10
        for n in lengths:
            bins[sum(1 for e in edges if n > e)] += 1
        s = random_model.metrics.trace.sizes[d]
        assert s.bins == bins
        assert s.small == sum(1 for n in lengths if n < 1 << 20)
        assert s.exactly_1mib == lengths.count(1 << 20)
    assert random_model.metrics.trace.sizes["read"].common == [(4096, 10000), (100, 2000)]
    w = random_model.metrics.trace.sizes["write"]
    assert w.exactly_1mib == 64 and w.small == 1600  # 64 x 1 MiB, 16 files x 100 small writes
    # The trace's bins are Darshan's own: they equal the POSIX counters' histogram.
    assert w.bins == random_model.metrics.ifaces["POSIX"].hist["write"]


def test_random_rule_uses_the_trace_and_small_rule_its_sizes() -> None:
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose

    rep = diagnose(build_model([loader.load_darshan_log(RANDOM_DXT)]), Thresholds())
    f = {(x.rule.id, x.hit.direction): x.hit.values for x in rep.findings}
    rnd = f[("random-access", "read")]
    tm = rep.model.metrics.trace
    assert rnd["measured_by"] == "trace" and rnd["random"] == tm.access["read"].random
    assert rnd["random_estimate"] == 9920  # the counters' estimate is still shown
    small = f[("small-requests", "write")]
    assert small["sizes_from"] == "trace" and small["small_writes"] == 1600
    assert small["exactly_1mib_writes_not_small"] == 64


def test_per_rank_busy_time_equals_pydarshan_records() -> None:
    model = build_model([loader.load_darshan_log(MPI_DXT)])
    recs, names = _dxt(MPI_DXT, "DXT_MPIIO")
    busy: dict[int, float] = defaultdict(float)
    moved: dict[int, int] = defaultdict(int)
    for rec in recs:
        if categorize(names[rec["id"]]) == APP:
            for d in ("read", "write"):
                busy[rec["rank"]] += sum(s["end_time"] - s["start_time"]
                                         for s in rec[f"{d}_segments"])
                moved[rec["rank"]] += sum(s["length"] for s in rec[f"{d}_segments"])
    (b,) = model.metrics.trace.busy
    assert b.module == "DXT_MPIIO" and b.covered and b.ranks == len(busy) == 32
    slow = max(busy, key=lambda k: busy[k])
    fast = min(busy, key=lambda k: busy[k])
    assert (b.slowest_rank, b.fastest_rank) == (slow, fast)
    assert b.slowest_s == pytest.approx(busy[slow]) and b.fastest_s == pytest.approx(busy[fast])
    assert (b.slowest_bytes, b.fastest_bytes) == (moved[slow], moved[fast])
    assert moved[slow] == 8 * 16 * MiB  # mpi-io-test: 4 writes and 4 reads of 16 MiB per rank
    assert model.job.rank_hosts == {r["rank"]: r["hostname"] for r in recs}
    assert model.job.nodes == 1  # every rank's host is known: one node


def _union(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for lo, hi in sorted(iv):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(a, b) for a, b in out]


@pytest.mark.parametrize("path", [MPI_DXT, HDF5_DXT], ids=lambda p: p.name[:24])
def test_timeline_equals_pydarshan_records(path: Path) -> None:
    model = build_model([loader.load_darshan_log(path)])
    tl = model.metrics.trace.timeline
    per_rank: dict[int, list[tuple[float, float]]] = defaultdict(list)
    every = []
    for mod in ("DXT_POSIX", "DXT_MPIIO"):
        for _, rank, _, s in _segments(path, mod):
            per_rank[rank].append((s["start_time"], s["end_time"]))
            every.append((s["start_time"], s["end_time"]))
    union = _union(every)
    assert tl.busy_fraction == pytest.approx(
        min(sum(b - a for a, b in union) / model.job.run_time_s, 1.0))
    merged = {r: _union(iv) for r, iv in per_rank.items()}
    # most ranks in flight: checked at every interval start (ends before starts at a tie)
    most = max(sum(1 for iv in merged.values() if any(a <= t < b for a, b in iv))
               for ivs in merged.values() for t, _ in ivs)
    assert tl.max_concurrency == most
    gap = tl.phase_gap_s
    phases: list[list[float]] = []
    for lo, hi in sorted(every):
        if phases and lo <= phases[-1][1] + gap:
            phases[-1][1] = max(phases[-1][1], hi)
        else:
            phases.append([lo, hi])
    assert tl.n_phases == len(phases)
    assert [(p.start_s, p.end_s) for p in tl.phases] == [tuple(p) for p in phases[:20]]
    assert sum(p.ops for p in tl.phases) == len(every) or tl.n_phases > 20


def test_hdf5_dxt_has_ten_write_phases() -> None:
    # 10 ranks write their diagonal block one after the other, ~0.2 s apart
    tl = build_model([loader.load_darshan_log(HDF5_DXT)]).metrics.trace.timeline
    assert tl.n_phases >= 10 and all(p.ranks == 1 for p in tl.phases)


def test_partial_dxt_is_said_partial_and_not_used_as_exact() -> None:
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose, to_dict

    rep = diagnose(build_model([loader.load_darshan_log(PARTIAL_DXT)]), Thresholds())
    tm = rep.model.metrics.trace
    assert not tm.complete and tm.exact == {"read": False, "write": False}
    assert any("DXT_POSIX ran out of memory" in r for r in tm.partial_reasons)
    tl = to_dict(rep)["summary"]["timeline"]
    assert tl["complete"] is False and tl["operations"] == 131065
    for f in rep.findings:
        if f.rule.id == "random-access":
            assert f.hit.values["measured_by"] == "counters (estimate)"


def test_segment_limit_marks_the_trace_partial(monkeypatch) -> None:
    # the loader forks: the child inherits the patched limit
    monkeypatch.setattr(loader, "MAX_TRACE_SEGMENTS", 1000)
    raw = loader.load_darshan_log(RANDOM_DXT)
    assert raw.trace_table is not None and len(raw.trace_table) == 1000
    assert raw.trace_table.truncated and any("cut at 1000" in n for n in raw.notes)
    tm = build_model([raw]).metrics.trace
    assert not tm.complete and not any(tm.exact.values())
    assert any("read only part of the trace" in r for r in tm.partial_reasons)
