"""Known answers for the cross-layer rules and the cost ranking, on logs written with
libdarshan-util's write API (hundreds of ranks, reduced records as Darshan writes them).

Each test asserts the finding, its place among the findings, its cost in seconds, and what it
must not recommend; the data-honesty cases (partial records, anonymised names) assert that a
rule stays silent and says why.
"""

from __future__ import annotations

from pathlib import Path

import corpus
import numpy as np
import pytest
from darshan_writer import Lustre, Rec, write_log

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose, to_dict
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def _run(path: Path, **kw):
    return diagnose(build_model([load_darshan_log(path)], **kw), Thresholds())


def _key(f) -> str:
    return f.rule.id + (f"/{f.hit.direction}" if f.hit.direction else "")


def _rank(rep, key: str) -> int:
    return [_key(f) for f in rep.findings].index(key)


def _get(rep, key: str):
    return rep.findings[_rank(rep, key)]


def _shared(path: str, nprocs: int, posix: dict, mpiio: dict) -> list[Rec]:
    return [Rec("POSIX", path, -1, {"POSIX_OPENS": nprocs, **posix}),
            Rec("MPI-IO", path, -1, {"MPIIO_COLL_OPENS": nprocs, **mpiio})]


def _rmw_records(n: int = 256) -> list[Rec]:
    """256 ranks write 4 GiB collectively (MPI-IO writes only); under them, aggregators read
    each file domain first: 4096 POSIX reads, 1024 of them empty (past the end of file)."""
    return _shared("/scratch/run/field.dat", n, {
        "POSIX_READS": 4096, "POSIX_BYTES_READ": 3 * GiB, "POSIX_MAX_BYTE_READ": 4 * GiB - 1,
        "POSIX_CONSEC_READS": 4095, "POSIX_SEQ_READS": 4095, "POSIX_WRITES": 4096,
        "POSIX_BYTES_WRITTEN": 4 * GiB, "POSIX_MAX_BYTE_WRITTEN": 4 * GiB - 1,
        "POSIX_SIZE_WRITE_1M_4M": 4096, "POSIX_SIZE_READ_1M_4M": 3072,
        "POSIX_SIZE_READ_0_100": 1024, "POSIX_F_READ_TIME": 400.0,
        "POSIX_F_WRITE_TIME": 200.0, "POSIX_F_SLOWEST_RANK_TIME": 60.0,
        "POSIX_F_FASTEST_RANK_TIME": 0.01, "POSIX_SLOWEST_RANK_BYTES": 256 * MiB,
        "POSIX_FASTEST_RANK_BYTES": 0}, {
        "MPIIO_COLL_WRITES": n * 16, "MPIIO_BYTES_WRITTEN": 4 * GiB,
        "MPIIO_SIZE_WRITE_AGG_1M_4M": n * 16, "MPIIO_F_WRITE_TIME": n * 65.0,
        "MPIIO_F_SLOWEST_RANK_TIME": 66.0, "MPIIO_F_FASTEST_RANK_TIME": 64.0,
        "MPIIO_SLOWEST_RANK_BYTES": 16 * MiB, "MPIIO_FASTEST_RANK_BYTES": 16 * MiB})


def test_read_modify_write_first_with_its_cost(tmp_path: Path) -> None:
    log = write_log(tmp_path / "rmw.darshan", nprocs=256, run_time_s=300.0, exe="./sim",
                    records=_rmw_records())
    rep = _run(log)
    f = rep.findings[0]
    assert _key(f) == "read-modify-write" and f.severity == "high"
    assert f.hit.values["posix_reads"] == 4096 and f.hit.values["zero_byte_reads"] == 0
    assert f.hit.values["mpiio_reads"] == 0
    # the slowest rank's 60 s on the file, scaled to its read share (400 of 600 s summed)
    assert f.cost_s == pytest.approx(40.0, rel=1e-6)
    assert to_dict(rep)["findings"][0]["cost_s"] == pytest.approx(40.0)
    # collective writes: romio_ds_write does not act inside them (expected / was: the fix
    # was romio_ds_write disable); on this Lustre mount ROMIO's Lustre driver's switch does
    hints = next(a for a in f.fix.artifacts if a.kind == "romio-hints").content
    assert "romio_lustre_ds_in_coll disable" in hints and "romio_ds_write" not in hints
    assert "striping_unit" not in hints  # no Lustre layout in the log: no stripe to name
    assert "romio_ds_write does not act inside collective" in f.fix.text
    assert "file view" in f.fix.text
    assert "saves up to 40.0 s (13.3% of the run)" in rep.summary.top_fixes[0]


def test_partial_records_are_not_judged(tmp_path: Path) -> None:
    """Expected / was: a rule comparing layers stays silent on partial POSIX records and the
    report says why / ratios were computed from whatever records fitted."""
    log = write_log(tmp_path / "rmw_partial.darshan", nprocs=256, run_time_s=300.0,
                    exe="./sim", records=_rmw_records(), partial=("POSIX",))
    rep = _run(log)
    assert "POSIX" in rep.model.job.partial_modules
    assert not any(f.rule.id == "read-modify-write" for f in rep.findings)
    reasons = dict(rep.not_judged)
    assert "partial" in reasons["read-modify-write"]
    assert "partial" in reasons["write-amplification"]
    from iolab.diagnose.render_html import render_html

    assert "<li>read-modify-write: needs complete POSIX records" in render_html([rep])


def test_write_amplification_cost_is_the_extra_share(tmp_path: Path) -> None:
    recs = _shared("/scratch/run/out.nc", 64, {
        "POSIX_WRITES": 3072, "POSIX_BYTES_WRITTEN": 3 * GiB, "POSIX_MAX_BYTE_WRITTEN": GiB - 1,
        "POSIX_CONSEC_WRITES": 3000, "POSIX_SEQ_WRITES": 3000,
        "POSIX_SIZE_WRITE_1M_4M": 3072, "POSIX_F_WRITE_TIME": 640.0,
        "POSIX_F_FASTEST_RANK_TIME": 29.0,
        "POSIX_F_SLOWEST_RANK_TIME": 30.0, "POSIX_SLOWEST_RANK_BYTES": 48 * MiB,
        "POSIX_FASTEST_RANK_BYTES": 48 * MiB}, {
        "MPIIO_COLL_WRITES": 1024, "MPIIO_BYTES_WRITTEN": GiB, "MPIIO_F_WRITE_TIME": 700.0,
        "MPIIO_SIZE_WRITE_AGG_1M_4M": 1024, "MPIIO_F_SLOWEST_RANK_TIME": 33.0,
        "MPIIO_F_FASTEST_RANK_TIME": 32.0,
        "MPIIO_SLOWEST_RANK_BYTES": 16 * MiB, "MPIIO_FASTEST_RANK_BYTES": 16 * MiB})
    log = write_log(tmp_path / "amp.darshan", nprocs=64, run_time_s=60.0, exe="./sim",
                    records=recs)
    rep = _run(log)
    f = _get(rep, "write-amplification")
    assert f.hit.values["amplification"] == pytest.approx(3.0)
    assert f.cost_s == pytest.approx(30.0 * (1 - 1 / 3))
    assert f.severity == "high"
    assert _rank(rep, "write-amplification") == 0
    # the program wrote each byte once through MPI-IO: the 2 GiB MPI-IO rewrote are not also
    # "redundant traffic" telling it to write each region once (was: both, the same cost)
    assert "redundant-traffic/write" not in {_key(g) for g in rep.findings}


def test_mpiio_program_rewriting_its_data_is_redundant_traffic(tmp_path: Path) -> None:
    """The program itself writes its 1 GiB twice through MPI-IO (2 GiB at MPI-IO, 3 GiB at
    POSIX): 1 GiB is redundant traffic, the other 1 GiB MPI-IO's own amplification."""
    recs = _shared("/scratch/run/out.nc", 64, {
        "POSIX_WRITES": 3072, "POSIX_BYTES_WRITTEN": 3 * GiB, "POSIX_MAX_BYTE_WRITTEN": GiB - 1,
        "POSIX_SIZE_WRITE_1M_4M": 3072, "POSIX_F_WRITE_TIME": 640.0,
        "POSIX_F_SLOWEST_RANK_TIME": 30.0, "POSIX_F_FASTEST_RANK_TIME": 29.0,
        "POSIX_SLOWEST_RANK_BYTES": 48 * MiB, "POSIX_FASTEST_RANK_BYTES": 48 * MiB}, {
        "MPIIO_COLL_WRITES": 2048, "MPIIO_BYTES_WRITTEN": 2 * GiB, "MPIIO_F_WRITE_TIME": 700.0,
        "MPIIO_SIZE_WRITE_AGG_1M_4M": 2048, "MPIIO_F_SLOWEST_RANK_TIME": 33.0,
        "MPIIO_F_FASTEST_RANK_TIME": 32.0,
        "MPIIO_SLOWEST_RANK_BYTES": 32 * MiB, "MPIIO_FASTEST_RANK_BYTES": 32 * MiB})
    log = write_log(tmp_path / "rewrite.darshan", nprocs=64, run_time_s=60.0, exe="./sim",
                    records=recs)
    rep = _run(log)
    f = _get(rep, "redundant-traffic/write")
    assert f.hit.values["redundant_bytes"] == GiB
    assert f.cost_s == pytest.approx(30.0 / 3)
    assert _get(rep, "write-amplification").hit.values["amplification"] == pytest.approx(1.5)


def test_single_posix_writer_behind_512_balanced_ranks(tmp_path: Path) -> None:
    n = 512
    recs = _shared("/scratch/run/ckpt.dat", n, {
        "POSIX_WRITES": 2048, "POSIX_BYTES_WRITTEN": 8 * GiB, "POSIX_SIZE_WRITE_4M_10M": 2048,
        "POSIX_MAX_BYTE_WRITTEN": 8 * GiB - 1, "POSIX_CONSEC_WRITES": 2047,
        "POSIX_SEQ_WRITES": 2047,
        "POSIX_F_WRITE_TIME": 90.0, "POSIX_F_SLOWEST_RANK_TIME": 90.0,
        "POSIX_SLOWEST_RANK_BYTES": 8 * GiB, "POSIX_FASTEST_RANK_BYTES": 0}, {
        "MPIIO_COLL_WRITES": n * 4, "MPIIO_BYTES_WRITTEN": 8 * GiB,
        "MPIIO_SIZE_WRITE_AGG_4M_10M": n * 4, "MPIIO_F_WRITE_TIME": n * 95.0,
        "MPIIO_F_SLOWEST_RANK_TIME": 96.0, "MPIIO_F_FASTEST_RANK_TIME": 94.0,
        "MPIIO_SLOWEST_RANK_BYTES": 16 * MiB, "MPIIO_FASTEST_RANK_BYTES": 16 * MiB})
    log = write_log(tmp_path / "one_writer.darshan", nprocs=n, run_time_s=200.0, exe="./sim",
                    records=recs)
    rep = _run(log, nodes=16)
    f = rep.findings[0]
    assert _key(f) == "single-posix-writer" and f.severity == "high"
    assert f.hit.values["posix_top_rank_share"] == 1.0
    k = f.hit.values["aggregators_wanted"]
    assert k == 16  # one per node (no Lustre layout in the log)
    assert f.cost_s == pytest.approx(90.0 * (1 - 1 / 16))
    hints = next(a for a in f.fix.artifacts if a.kind == "romio-hints").content
    assert "cb_nodes 16\n" in hints
    assert "cb_config_list" not in hints  # one per node: ROMIO's default "*:1"


def test_mpiio_waiting_not_writing(tmp_path: Path) -> None:
    recs = _shared("/scratch/run/out.dat", 128, {
        "POSIX_WRITES": 1024, "POSIX_BYTES_WRITTEN": 4 * GiB, "POSIX_SIZE_WRITE_4M_10M": 1024,
        "POSIX_MAX_BYTE_WRITTEN": 4 * GiB - 1, "POSIX_CONSEC_WRITES": 1023,
        "POSIX_SEQ_WRITES": 1023,
        "POSIX_F_WRITE_TIME": 100.0, "POSIX_F_SLOWEST_RANK_TIME": 4.0,
        "POSIX_SLOWEST_RANK_BYTES": 32 * MiB, "POSIX_FASTEST_RANK_BYTES": 32 * MiB}, {
        "MPIIO_COLL_WRITES": 1024, "MPIIO_BYTES_WRITTEN": 4 * GiB,
        "MPIIO_SIZE_WRITE_AGG_4M_10M": 1024, "MPIIO_F_WRITE_TIME": 128 * 30.0,
        "MPIIO_F_SLOWEST_RANK_TIME": 54.0, "MPIIO_F_FASTEST_RANK_TIME": 5.0,
        "MPIIO_SLOWEST_RANK_BYTES": 32 * MiB, "MPIIO_FASTEST_RANK_BYTES": 32 * MiB})
    log = write_log(tmp_path / "skew.darshan", nprocs=128, run_time_s=400.0, exe="./sim",
                    records=recs)
    rep = _run(log)
    f = _get(rep, "mpiio-time-skew")
    assert f.cost_s == pytest.approx(50.0) and f.severity == "high"
    assert _rank(rep, "mpiio-time-skew") == 0
    assert "MPI_Barrier" in f.fix.text  # collective calls: find the late rank


def test_slow_close_and_small_file_costing_minutes(tmp_path: Path) -> None:
    recs = [
        # rank 0 closes its 2 GiB output: 12 s of write-back in close()
        Rec("POSIX", "/scratch/run/rank0.bin", 0, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 2048, "POSIX_BYTES_WRITTEN": 2 * GiB,
            "POSIX_SIZE_WRITE_1M_4M": 2048, "POSIX_F_WRITE_TIME": 3.0,
            "POSIX_F_META_TIME": 12.1, "POSIX_F_CLOSE_START_TIMESTAMP": 100.0,
            "POSIX_F_CLOSE_END_TIMESTAMP": 112.0}),
        # rank 1 appends 3 KiB of progress lines, flushing each: 150 s
        Rec("STDIO", "/home/u/progress.log", 1, {
            "STDIO_OPENS": 1, "STDIO_WRITES": 3000, "STDIO_BYTES_WRITTEN": 3000,
            "STDIO_FLUSHES": 3000, "STDIO_F_WRITE_TIME": 150.0}),
    ]
    log = write_log(tmp_path / "close.darshan", nprocs=2, run_time_s=600.0, exe="./sim",
                    records=recs)
    rep = _run(log)
    tiny = _get(rep, "tiny-file-slow")
    assert _rank(rep, "tiny-file-slow") == 0 and tiny.cost_s == pytest.approx(150.0)
    assert tiny.severity == "high"
    close = _get(rep, "slow-close")
    assert close.gross_s == pytest.approx(12.0) and close.hit.values["layer"] == "POSIX"
    # rank 0's close ran while rank 1, the slowest, wrote its 150 s of progress lines: the
    # job's I/O time is counted once (was: 162 s of findings in 150 s of I/O)
    assert close.cost_s == pytest.approx(0.0) and close.beside == ["tiny-file-slow"]
    assert "not in addition" in close.cost_text()
    assert sum(f.cost_s or 0.0 for f in rep.findings if not f.rule.overview) <= 150.0 + 1e-6


def test_not_io_bound_job_has_no_high_finding(tmp_path: Path) -> None:
    """Expected / was: a job spending 5% of its run in I/O gets no HIGH / 4 HIGH findings."""
    log = write_log(tmp_path / "rmw_long.darshan", nprocs=256, run_time_s=3000.0,
                    exe="./sim", records=_rmw_records())
    rep = _run(log)
    assert rep.model.metrics.io_fraction < 0.1
    assert _get(rep, "read-modify-write").severity == "warn"
    assert not any(f.severity == "high" for f in rep.findings)


def test_anonymised_names_switch_off_name_rules(tmp_path: Path) -> None:
    recs = [Rec("POSIX", f"/{i:016x}/{(i * 7919) % (1 << 60):016x}", i % 64, {
        "POSIX_OPENS": 1, "POSIX_WRITES": 1, "POSIX_BYTES_WRITTEN": MiB,
        "POSIX_SIZE_WRITE_100K_1M": 1, "POSIX_F_WRITE_TIME": 0.01})
        for i in range(1200)]
    for r in recs:  # one obfuscated directory for all, as an anonymised log shows them
        r.path = "/5f3a9c0d12e4b7a8/" + r.path.rsplit("/", 1)[1]
    log = write_log(tmp_path / "anon.darshan", nprocs=64, run_time_s=100.0, exe="./sim",
                    records=recs)
    rep = _run(log)
    assert rep.model.job.names_anonymised
    assert not any(f.rule.id == "files-per-directory" for f in rep.findings)
    assert "anonymised" in dict(rep.not_judged)["files-per-directory"]


@corpus.needs_real_logs
def test_timeline_counts_each_byte_once() -> None:
    """Expected / was: the DXT timeline counts 4 GiB for a job writing 2 GiB through MPI-IO
    / POSIX and MPI-IO segments added together."""
    from diagnose_logs import REAL_LOGS

    path = next(p for p in REAL_LOGS if "mpi_io_test_with_dxt" in str(p))
    rep = _run(path)
    tl = rep.summary.timeline
    assert tl is not None
    phase_bytes = sum(p["bytes_read"] + p["bytes_written"] for p in tl["phases"])
    px = rep.model.metrics.ifaces["POSIX"]
    assert phase_bytes == px.bytes["read"] + px.bytes["write"]


def _one_writer_records(n: int, path: str = "/scratch/run/ckpt.dat") -> list[Rec]:
    return _shared(path, n, {
        "POSIX_WRITES": 2048, "POSIX_BYTES_WRITTEN": 8 * GiB, "POSIX_SIZE_WRITE_4M_10M": 2048,
        "POSIX_MAX_BYTE_WRITTEN": 8 * GiB - 1, "POSIX_CONSEC_WRITES": 2047,
        "POSIX_SEQ_WRITES": 2047, "POSIX_F_WRITE_TIME": 90.0,
        "POSIX_F_SLOWEST_RANK_TIME": 90.0, "POSIX_SLOWEST_RANK_BYTES": 8 * GiB,
        "POSIX_FASTEST_RANK_BYTES": 0}, {
        "MPIIO_COLL_WRITES": n * 4, "MPIIO_BYTES_WRITTEN": 8 * GiB,
        "MPIIO_SIZE_WRITE_AGG_4M_10M": n * 4, "MPIIO_F_WRITE_TIME": n * 95.0,
        "MPIIO_F_SLOWEST_RANK_TIME": 96.0, "MPIIO_F_FASTEST_RANK_TIME": 94.0,
        "MPIIO_SLOWEST_RANK_BYTES": 16 * MiB, "MPIIO_FASTEST_RANK_BYTES": 16 * MiB})


@pytest.mark.parametrize("count", [1, 8])
def test_single_writer_cause_from_the_lustre_layout(tmp_path: Path, count: int) -> None:
    """512 ranks on 16 nodes; the file on 1 OST (ROMIO's Lustre driver: one aggregator per
    OST) or on 8 OSTs with one aggregator anyway (cb_nodes): the cause and the numbers of
    the fix come from the layout the log records."""
    log = write_log(tmp_path / f"lustre{count}.darshan", nprocs=512, run_time_s=200.0,
                    exe="./sim", records=_one_writer_records(512),
                    lustre=[Lustre("/scratch/run/ckpt.dat", 4 * MiB, count)])
    rep = _run(log, nodes=16)
    f = _get(rep, "single-posix-writer")
    hints = next(a for a in f.fix.artifacts if a.kind == "romio-hints").content
    if count == 1:
        # the mechanism (one aggregator, because the file has one stripe) leads and owns the
        # writer's time; the striping rule and more aggregators per node are experiments that
        # own none (was: the striping bound first, the writer "the same time")
        assert _rank(rep, "single-posix-writer") == 0 and f.same_time_as == []
        for exp in ("stripe-shared-file", "aggregators-per-node"):
            e = _get(rep, exp)
            assert e.rule.experiment and e.cost_s is None and e.severity != "high"
            assert _rank(rep, exp) > 0 and "to be proven" in e.cost_text()
        assert f.hit.values["aggregators_wanted"] == 16
        assert "one OST" in f.fix.text
        assert "striping_factor 16\n" in hints and "cb_nodes 16\n" in hints
    else:
        assert _rank(rep, "single-posix-writer") == 0
        assert f.hit.values["aggregators_wanted"] == 8
        assert "below the 8 OSTs" in f.fix.text
        assert "cb_nodes 8\n" in hints and "striping_factor" not in hints
    assert f.cost_s == pytest.approx(90.0 * (1 - 1 / f.hit.values["aggregators_wanted"]))


def test_rmw_fix_names_the_stripe(tmp_path: Path) -> None:
    log = write_log(tmp_path / "rmw_lustre.darshan", nprocs=256, run_time_s=300.0,
                    exe="./sim", records=_rmw_records(),
                    lustre=[Lustre("/scratch/run/field.dat", 4 * MiB, 16)])
    f = _get(_run(log), "read-modify-write")
    hints = next(a for a in f.fix.artifacts if a.kind == "romio-hints").content
    # on Lustre, ROMIO's Lustre driver has the switch that acts inside collective writes
    assert "striping_unit 4194304\n" in hints and "romio_lustre_ds_in_coll disable\n" in hints
    assert "romio_ds_write" not in hints


def _interleaved(n: int, path: str = "/scratch/run/grid.dat") -> list[Rec]:
    """n ranks, 4096 independent 32 KiB writes each, interleaved; POSIX sees them unmerged."""
    ops = 4096 * n
    return _shared(path, n, {
        "POSIX_WRITES": ops, "POSIX_BYTES_WRITTEN": ops * 32 * KiB,
        "POSIX_MAX_BYTE_WRITTEN": ops * 32 * KiB - 1, "POSIX_SIZE_WRITE_10K_100K": ops,
        "POSIX_CONSEC_WRITES": 0, "POSIX_SEQ_WRITES": ops - n, "POSIX_F_WRITE_TIME": 64.0 * n,
        "POSIX_F_SLOWEST_RANK_TIME": 66.0, "POSIX_F_FASTEST_RANK_TIME": 62.0,
        "POSIX_SLOWEST_RANK_BYTES": 128 * MiB, "POSIX_FASTEST_RANK_BYTES": 128 * MiB}, {
        "MPIIO_INDEP_WRITES": ops, "MPIIO_BYTES_WRITTEN": ops * 32 * KiB,
        "MPIIO_SIZE_WRITE_AGG_10K_100K": ops, "MPIIO_F_WRITE_TIME": 66.0 * n,
        "MPIIO_F_SLOWEST_RANK_TIME": 68.0, "MPIIO_F_FASTEST_RANK_TIME": 64.0,
        "MPIIO_SLOWEST_RANK_BYTES": 128 * MiB, "MPIIO_FASTEST_RANK_BYTES": 128 * MiB})


@pytest.mark.parametrize("stripe, small", [(1 * MiB, True), (64 * KiB, False)])
def test_small_is_a_share_of_the_stripe(tmp_path: Path, stripe: int, small: bool) -> None:
    """32 KiB requests: small on 1 MiB stripes (below 128 KiB), not on 64 KiB stripes
    (below 8 KiB); Darshan's 100K-1M bin is never small by default."""
    log = write_log(tmp_path / "grid.darshan", nprocs=64, run_time_s=100.0, exe="./sim",
                    records=_interleaved(64),
                    lustre=[Lustre("/scratch/run/grid.dat", stripe, 4)])
    rep = _run(log)
    hit = [f for f in rep.findings if _key(f) == "small-requests/write"]
    assert bool(hit) == small
    if small:
        assert hit[0].hit.values["small_below_bytes"] == 128 * KiB


def test_collective_buffering_hints_only_what_is_not_in_use(tmp_path: Path) -> None:
    """Expected / was: no cb_buffer_size equal to ROMIO's 16 MiB default, no cb_config_list
    *:2 for one node / both, always."""
    log = write_log(tmp_path / "grid.darshan", nprocs=64, run_time_s=100.0, exe="./sim",
                    records=_interleaved(64),
                    lustre=[Lustre("/scratch/run/grid.dat", 4 * MiB, 4)])
    for nodes, per_node in ((1, False), (4, True)):
        f = _get(_run(log, nodes=nodes), "collective-buffering/write")
        # independent calls only: no hints file (they could not act), the switch first
        assert not any(a.kind == "romio-hints" for a in f.fix.artifacts)
        assert "independent calls" in f.fix.text and "MPI_File_write_all" in f.fix.text
        assert "cb_buffer_size" not in f.fix.text  # 4 x 4 MiB stripes = ROMIO's default
        assert ("cb_config_list *:2" in f.fix.text) == per_node


def test_evidence_names_the_file_that_costs_most(tmp_path: Path) -> None:
    """Expected / was: the file that cost 113 s comes first / the one with the most small
    requests (0.16 s) was pointed at and the costly one was not."""
    recs = [
        Rec("POSIX", "/scratch/run/many_fast.dat", 0, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 1_000_000, "POSIX_BYTES_WRITTEN": 64_000_000,
            "POSIX_SIZE_WRITE_0_100": 1_000_000, "POSIX_CONSEC_WRITES": 999_999,
            "POSIX_SEQ_WRITES": 999_999, "POSIX_MAX_BYTE_WRITTEN": 63_999_999,
            "POSIX_F_WRITE_TIME": 0.16}),
        Rec("POSIX", "/scratch/run/few_slow.dat", 1, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 5000, "POSIX_BYTES_WRITTEN": 5000 * 4096,
            "POSIX_SIZE_WRITE_1K_10K": 5000, "POSIX_CONSEC_WRITES": 4999,
            "POSIX_SEQ_WRITES": 4999, "POSIX_MAX_BYTE_WRITTEN": 5000 * 4096 - 1,
            "POSIX_F_WRITE_TIME": 113.0}),
    ]
    log = write_log(tmp_path / "two.darshan", nprocs=2, run_time_s=300.0, exe="./sim",
                    records=recs)
    rep = _run(log)
    f = _get(rep, "small-requests/write")
    assert [e.path for e in f.hit.files] == ["/scratch/run/few_slow.dat",
                                            "/scratch/run/many_fast.dat"]
    assert f.hit.files[0].values["write_time_s"] == 113.0
    assert f.cost_s == pytest.approx(113.0)  # rank 1's time; rank 0's 0.16 s runs beside it
    assert f.severity == "high"
    assert not any("much of the I/O time" in g.rule.title for g in rep.findings)


@corpus.needs_real_logs
def test_trace_gives_exact_rank_shares_under_a_reduced_record() -> None:
    """The mpi-io-test DXT log: 32 ranks each move 1/32 of the shared file's POSIX bytes;
    the trace holds every byte, so the model knows it exactly (a reduced record alone only
    bounds the top rank's share by its slowest/fastest ranks)."""
    from diagnose_logs import REAL_LOGS

    path = next(p for p in REAL_LOGS if "mpi_io_test_with_dxt" in str(p))
    model = build_model([load_darshan_log(path)])
    L = model.layers
    i = int(np.argmax(L.posix.bytes * (model.files.category == 0)))
    assert L.posix.ranks_moving_bytes[i] == 32
    assert L.posix_top_rank_share[i] == pytest.approx(1 / 32)


def test_cost_never_exceeds_the_run(tmp_path: Path) -> None:
    """300 shared files whose slowest ranks are different ranks: the per-file bound adds up
    to 600 s in a 100 s run; the cost is capped at the run."""
    recs = []
    for k in range(300):
        recs += _shared(f"/scratch/run/part{k:03d}.dat", 64, {
            "POSIX_READS": 64, "POSIX_BYTES_READ": 3 * MiB, "POSIX_WRITES": 64,
            "POSIX_BYTES_WRITTEN": 4 * MiB, "POSIX_SIZE_WRITE_10K_100K": 64,
            "POSIX_F_READ_TIME": 40.0, "POSIX_F_SLOWEST_RANK_TIME": 2.0}, {
            "MPIIO_COLL_WRITES": 64, "MPIIO_BYTES_WRITTEN": 4 * MiB,
            "MPIIO_F_WRITE_TIME": 64.0, "MPIIO_F_SLOWEST_RANK_TIME": 2.0})
    log = write_log(tmp_path / "many.darshan", nprocs=64, run_time_s=100.0, exe="./sim",
                    records=recs)
    rep = _run(log)
    f = _get(rep, "read-modify-write")
    assert f.cost_s == pytest.approx(100.0) and f.cost_share == 1.0


def test_tiny_collective_calls_are_counted_per_rank(tmp_path: Path) -> None:
    """Expected / was: 512 ranks making 2 small collective calls each are not 'many tiny
    collective calls' / the record's sum over ranks (1,024) was compared with the threshold."""
    def log(n: int, per_rank: int) -> Path:
        calls = n * per_rank
        return write_log(tmp_path / f"c{n}_{per_rank}.darshan", nprocs=n, run_time_s=100.0,
                         exe="./sim", records=_shared("/scratch/run/vars.dat", n, {
                             "POSIX_WRITES": calls // 8, "POSIX_BYTES_WRITTEN": calls * 4096,
                             "POSIX_F_WRITE_TIME": 1.0, "POSIX_F_SLOWEST_RANK_TIME": 1.0}, {
                             "MPIIO_COLL_WRITES": calls, "MPIIO_BYTES_WRITTEN": calls * 4096,
                             "MPIIO_SIZE_WRITE_AGG_1K_10K": calls,
                             "MPIIO_F_WRITE_TIME": n * 30.0,
                             # every rank waits in the collective calls (30 s on average):
                             # no straggler claims the same seconds
                             "MPIIO_F_FASTEST_RANK_TIME": 29.0,
                             "MPIIO_F_SLOWEST_RANK_TIME": 31.0}))
    assert not any(f.rule.id == "tiny-collective-calls" for f in _run(log(512, 2)).findings)
    f = _get(_run(log(8, 4096)), "tiny-collective-calls")
    assert f.hit.values["collective_calls_per_rank"] == 4096
    assert f.cost_s == pytest.approx(30.0) and f.severity == "high"


def test_cli_json_ranks_a_512_rank_job_by_cost(tmp_path: Path, capsys) -> None:
    """End to end through `iolab diagnose --json`: on a 512-rank log with a one-OST layout,
    findings come ranked by cost, each with cost_s and its share, and the top fix savings
    match the first findings."""
    import json

    from iolab.cli import main

    log = write_log(tmp_path / "prod.darshan", nprocs=512, run_time_s=200.0, exe="./sim",
                    records=_one_writer_records(512) + _rmw_records(512),
                    lustre=[Lustre("/scratch/run/ckpt.dat", 4 * MiB, 1),
                            Lustre("/scratch/run/field.dat", 4 * MiB, 16)])
    assert main(["diagnose", "--json", "--nodes", "16", str(log)]) == 0
    doc = json.loads(capsys.readouterr().out)
    problems = [f for f in doc["findings"] if f["rule_id"] not in ("io-bound",
                                                                   "read-write-balance")]
    sev = {"high": 0, "warn": 1, "info": 2}
    keys = [(sev[f["severity"]], f["kind"] == "experiment",
             -(f["cost_s"] if f["kind"] == "waste" else f["estimated_gain_s"]) or 0.0)
            for f in problems]
    assert keys == sorted(keys)
    # waste owns seconds; an experiment owns none and carries its estimate instead
    assert all((f["cost_s"] is not None) == (f["kind"] == "waste") for f in problems)
    assert all(f["estimated_gain_s"] is not None for f in problems if f["kind"] != "waste")
    assert all(0 <= f["cost_share_of_run"] <= 1 for f in problems)
    first = problems[0]
    assert first["rule_id"] == "single-posix-writer" and first["kind"] == "waste"
    assert doc["summary"]["top_fix_savings"][0]["saves_up_to_s"] == pytest.approx(
        first["cost_s"], abs=1e-5)


@pytest.mark.parametrize("posix_factor", [1, 2])
def test_independent_waiting_cause_from_the_bytes_one_layer_down(tmp_path: Path,
                                                                 posix_factor: int) -> None:
    """Expected / was: independent calls waiting on a shared file were always blamed on
    ROMIO's data-sieving locks (with romio_ds_* hints), also when POSIX moved exactly the
    MPI-IO bytes (no sieving: the corpus's mpi-io-test, 8 MiB contiguous calls, run by
    OMPIO). Sieving shows one layer down as extra POSIX bytes; only then the ds hints."""
    mb = 4 * GiB
    recs = _shared("/scratch/run/out.dat", 64, {
        "POSIX_WRITES": 1024 * posix_factor, "POSIX_BYTES_WRITTEN": mb * posix_factor,
        "POSIX_SIZE_WRITE_4M_10M": 1024 * posix_factor, "POSIX_MAX_BYTE_WRITTEN": mb - 1,
        "POSIX_F_WRITE_TIME": 100.0, "POSIX_F_SLOWEST_RANK_TIME": 4.0,
        "POSIX_SLOWEST_RANK_BYTES": 64 * MiB, "POSIX_FASTEST_RANK_BYTES": 64 * MiB}, {
        "MPIIO_INDEP_WRITES": 1024, "MPIIO_BYTES_WRITTEN": mb,
        "MPIIO_SIZE_WRITE_AGG_4M_10M": 1024, "MPIIO_F_WRITE_TIME": 64 * 30.0,
        "MPIIO_F_SLOWEST_RANK_TIME": 54.0, "MPIIO_F_FASTEST_RANK_TIME": 5.0,
        "MPIIO_SLOWEST_RANK_BYTES": 64 * MiB, "MPIIO_FASTEST_RANK_BYTES": 64 * MiB})
    recs[1].counters["MPIIO_INDEP_OPENS"] = recs[1].counters.pop("MPIIO_COLL_OPENS")
    log = write_log(tmp_path / f"indep{posix_factor}.darshan", nprocs=64, run_time_s=400.0,
                    exe="./sim", records=recs)
    f = _get(_run(log), "mpiio-time-skew")
    hints = "".join(a.content for a in f.fix.artifacts if not a.kind.startswith("snippet"))
    if posix_factor == 1:
        assert "no data sieving, so not its locks" in f.fix.text and "romio_ds" not in hints
    else:
        assert "ROMIO locks the range it sieves" in f.fix.text
        assert "romio_ds_write disable" in hints


def test_a_file_opened_and_closed_250_times_has_no_ten_second_close(tmp_path: Path) -> None:
    """Expected / was: a non-MPI job with 1.4 s of I/O got "slow close: 10.1 s (33.7%)" for a
    log file fopen'ed and fclose'd 250 times (POSIX_OPENS minus POSIX_FILENOS taken as "opened
    once", the first close's start to the last close's end taken as one close, the STDIO
    opens ignored). No close is longer than the file's metadata time, and none is measured
    where the record did not see exactly one open."""
    recs = [
        Rec("POSIX", "/home/u/run/progress.log", 0, {
            "POSIX_OPENS": 250, "POSIX_FILENOS": 250, "POSIX_WRITES": 250,
            "POSIX_BYTES_WRITTEN": 250 * 80, "POSIX_FSYNCS": 250,
            "POSIX_F_WRITE_TIME": 1.2, "POSIX_F_META_TIME": 0.1,
            "POSIX_F_CLOSE_START_TIMESTAMP": 0.5, "POSIX_F_CLOSE_END_TIMESTAMP": 10.6}),
        Rec("STDIO", "/home/u/run/progress.log", 0, {
            "STDIO_OPENS": 250, "STDIO_WRITES": 250, "STDIO_BYTES_WRITTEN": 250 * 80,
            "STDIO_FLUSHES": 250, "STDIO_F_WRITE_TIME": 0.05, "STDIO_F_META_TIME": 0.05,
            "STDIO_F_CLOSE_START_TIMESTAMP": 0.5, "STDIO_F_CLOSE_END_TIMESTAMP": 10.6}),
    ]
    log = write_log(tmp_path / "loop.darshan", nprocs=1, run_time_s=30.0, exe="./post",
                    records=recs)
    rep = _run(log)
    assert not any(f.rule.id == "slow-close" for f in rep.findings)
    i = rep.model.files.paths.index("/home/u/run/progress.log")
    L = rep.model.layers
    assert L.posix.close_s[i] == 0.0 and L.stdio.close_s[i] == 0.0
    io = rep.model.metrics.io_time_s
    assert io < 2.0
    for f in rep.findings:  # no cost beyond the time of the operations concerned
        assert (f.cost_s or 0.0) <= io + 1e-9, (f.key, f.cost_s)
    # one open, one long close (a checkpoint flushed at close): still measured, within the
    # metadata time
    recs[0].counters.update({"POSIX_OPENS": 1, "POSIX_FILENOS": 0, "POSIX_F_META_TIME": 12.0})
    recs[1].counters.update({"STDIO_OPENS": 0, "STDIO_F_META_TIME": 0.0})
    del recs[1]
    rep = _run(write_log(tmp_path / "once.darshan", nprocs=1, run_time_s=30.0, exe="./post",
                         records=recs))
    close = next(f for f in rep.findings if f.rule.id == "slow-close")
    assert close.gross_s == pytest.approx(10.1)


def _block_reads(n: int, mpiio_s: float, posix_s: float) -> list[Rec]:
    """n ranks read 4 MiB contiguous blocks collectively (8 each): the slowest rank spends
    mpiio_s in MPI-IO calls and posix_s in the POSIX reads under them."""
    total = n * 8 * 4 * MiB
    return _shared("/scratch/run/input.dat", n, {
        "POSIX_READS": n * 8, "POSIX_BYTES_READ": total, "POSIX_MAX_BYTE_READ": total - 1,
        "POSIX_CONSEC_READS": n * 8 - 1, "POSIX_SEQ_READS": n * 8 - 1,
        "POSIX_SIZE_READ_4M_10M": n * 8, "POSIX_ACCESS1_ACCESS": 4 * MiB,
        "POSIX_ACCESS1_COUNT": n * 8, "POSIX_F_READ_TIME": n * posix_s,
        "POSIX_F_SLOWEST_RANK_TIME": posix_s, "POSIX_F_FASTEST_RANK_TIME": 0.9 * posix_s,
        "POSIX_SLOWEST_RANK_BYTES": 32 * MiB, "POSIX_FASTEST_RANK_BYTES": 32 * MiB}, {
        "MPIIO_COLL_READS": n * 8, "MPIIO_BYTES_READ": total,
        "MPIIO_SIZE_READ_AGG_4M_10M": n * 8, "MPIIO_F_READ_TIME": n * mpiio_s,
        "MPIIO_F_SLOWEST_RANK_TIME": mpiio_s, "MPIIO_F_FASTEST_RANK_TIME": 0.95 * mpiio_s,
        "MPIIO_SLOWEST_RANK_BYTES": 32 * MiB, "MPIIO_FASTEST_RANK_BYTES": 32 * MiB})


def test_the_two_phase_exchange_is_seen_in_seconds_not_by_a_ratio(tmp_path: Path) -> None:
    """Expected / was: 2,048 ranks reading 4 MiB contiguous blocks collectively, 99% I/O
    bound, MPI-IO 651 s over POSIX 337 s (1.9x) got no finding at all (a fixed 3x ratio
    gate). The 314 s of exchange is the first finding, read as what it is (every rank waits
    alike: the exchange, no late rank), with large per-rank blocks: independent reads (a hint
    for ROMIO) would do."""
    log = write_log(tmp_path / "reads.darshan", nprocs=2048, run_time_s=660.0, exe="./ana",
                    records=_block_reads(2048, 651.0, 337.0))
    rep = _run(log, nodes=64)
    first = next(f for f in rep.findings if not f.rule.overview)
    assert first.rule.id == "mpiio-time-skew" and first.severity == "high"
    assert first.cost_s == pytest.approx(651.0 - 337.0)
    assert first.hit.data["together"] and first.hit.data["direction"] == "read"
    assert "romio_cb_read disable" in first.fix.artifacts[0].content
    assert "exchange" in first.hit.summary
    # a 3 ms exchange is not reported, whatever its ratio to the POSIX time
    small = write_log(tmp_path / "fast.darshan", nprocs=2048, run_time_s=660.0, exe="./ana",
                      records=_block_reads(2048, 0.004, 0.001))
    assert not any(f.rule.id == "mpiio-time-skew" for f in _run(small, nodes=64).findings)
