"""Known answers at scale: logs written with libdarshan-util's write API in the shapes of
large production jobs (65,536 ranks, reduced records, names anonymised after the mount
point, no node count, a site whose scheduler is not Slurm). The first finding is the known
costliest waste with its cause, no second is counted twice, and every emitted file passes
the artifact validator.

Expected / was (a 512-rank PnetCDF job of the same shape, judged by an expert): "many small
requests" and "misaligned file" first, both HIGH on the same reads, read-modify-write third
as "the same time", ~420 s a rank of two-phase exchange unreported, a restripe script on
the hashed names, srun for an LSF machine."""

from __future__ import annotations

from pathlib import Path

import pytest
from artifact_check import all_problems
from darshan_writer import Lustre, Rec, write_log

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
MiB, GiB = 1 << 20, 1 << 30
RANKS = 65536
OUT = "/gpfs/alpine/6c2a91f0aa11/f09a1b2c3d4e5f60"  # hashed after the mount point


def _holes_job(tmp_path: Path) -> Path:
    """65,536 ranks write small pieces collectively (16 calls each) into one shared file
    with holes: the aggregators read each file domain first (4,096 reads, 205 s on the
    slowest rank, every one past the end: 0 bytes) and write 319 GiB for 82 GiB of data; the
    slowest rank spends 700 s in MPI-IO, 280 s of it in POSIX calls: 420 s of exchange."""
    recs = [
        Rec("POSIX", OUT, -1, {
            "POSIX_OPENS": RANKS, "POSIX_READS": 4096, "POSIX_BYTES_READ": 0,
            "POSIX_SIZE_READ_0_100": 4096, "POSIX_WRITES": 81920,
            "POSIX_BYTES_WRITTEN": 319 * GiB, "POSIX_MAX_BYTE_WRITTEN": 319 * GiB - 1,
            "POSIX_SIZE_WRITE_1M_4M": 81920, "POSIX_FILE_NOT_ALIGNED": 81920,
            "POSIX_F_READ_TIME": 205.0 * 256, "POSIX_F_WRITE_TIME": 75.0 * 256,
            "POSIX_F_META_TIME": 5.0, "POSIX_F_SLOWEST_RANK_TIME": 280.0,
            "POSIX_F_FASTEST_RANK_TIME": 0.0, "POSIX_SLOWEST_RANK_BYTES": 2 * GiB,
            "POSIX_FASTEST_RANK_BYTES": 0}),
        Rec("MPI-IO", OUT, -1, {
            "MPIIO_COLL_OPENS": RANKS, "MPIIO_COLL_WRITES": RANKS * 16,
            "MPIIO_BYTES_WRITTEN": 82 * GiB, "MPIIO_SIZE_WRITE_AGG_10K_100K": RANKS * 16,
            "MPIIO_F_WRITE_TIME": RANKS * 700.0, "MPIIO_F_SLOWEST_RANK_TIME": 700.0,
            "MPIIO_F_FASTEST_RANK_TIME": 690.0, "MPIIO_SLOWEST_RANK_BYTES": 2 * MiB,
            "MPIIO_FASTEST_RANK_BYTES": 1 * MiB}),
    ]
    return write_log(tmp_path / "holes65k.darshan", nprocs=RANKS, run_time_s=760.0,
                     exe="/gpfs/alpine/6c2a91f0aa11/a1b2c3d4e5f6a7b8 -i x", records=recs)


def test_a_65536_rank_collective_write_with_holes(tmp_path: Path) -> None:
    rep = diagnose(build_model([load_darshan_log(_holes_job(tmp_path))]), Thresholds())
    model = rep.model
    assert model.job.names_anonymised and model.job.nodes is None
    problems = [f for f in rep.findings if not f.rule.overview]
    # the two mechanisms first, costliest first: the exchange, then the hole reads
    assert [f.key for f in problems[:2]] == ["mpiio-time-skew", "read-modify-write"]
    assert problems[0].cost_s == pytest.approx(420.0, rel=0.01)
    assert problems[0].hit.data["together"]  # every rank alike: the exchange, no late rank
    assert problems[1].cost_s == pytest.approx(205.0, rel=0.01)
    assert problems[0].severity == problems[1].severity == "high"
    # the symptoms of the same reads own nothing more and say whose time it is
    small = next(f for f in problems if f.key == "small-requests/read")
    assert small.cost_s == pytest.approx(0.0, abs=1e-6)
    assert small.same_time_as == ["read-modify-write"] and small.severity != "high"
    # every second once: within the slowest rank's I/O time
    assert sum(f.cost_s or 0.0 for f in problems) <= model.metrics.io_time_s + 1e-6
    arts = [a for f in rep.findings for a in f.fix.artifacts]
    assert not any(a.kind == "lfs" for a in arts)  # hashed names: no per-file script
    assert not any("cb_config_list" in a.content and not a.content.count("# left out")
                   for a in arts if a.kind == "romio-hints")  # no node count: no *:N
    batch = [a for a in arts if a.kind in ("slurm", "pbs", "lsf", "cobalt")]
    assert batch and {a.kind for a in batch} == {"lsf"}  # Summit's GPFS: LSF, jsrun
    assert all_problems(model, rep.findings) == []


THETA = "/lus/theta-fs0/projects/clim/run7"


def _lone_writer_job(tmp_path: Path) -> Path:
    """65,536 ranks on Theta (Cobalt, aprun); every rank reads an 8 KiB namelist (one
    reduced record), then rank 0 gathers every step and writes the whole 512 GiB history
    file alone in 16 MiB writes: 1,500 s of writes and 2 s of opens on rank 0, on a file of
    one stripe. The other 65,535 ranks only wait in MPI (no record)."""
    recs = [
        Rec("POSIX", f"{THETA}/history.dat", 0, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 32768, "POSIX_BYTES_WRITTEN": 512 * GiB,
            "POSIX_MAX_BYTE_WRITTEN": 512 * GiB - 1, "POSIX_SIZE_WRITE_10M_100M": 32768,
            "POSIX_CONSEC_WRITES": 32767, "POSIX_SEQ_WRITES": 32767,
            "POSIX_ACCESS1_ACCESS": 16 * MiB, "POSIX_ACCESS1_COUNT": 32768,
            "POSIX_F_WRITE_TIME": 1500.0, "POSIX_F_META_TIME": 2.0}),
        Rec("POSIX", f"{THETA}/namelist.in", -1, {
            "POSIX_OPENS": RANKS, "POSIX_READS": RANKS, "POSIX_BYTES_READ": RANKS * 8192,
            "POSIX_MAX_BYTE_READ": 8191, "POSIX_SIZE_READ_1K_10K": RANKS,
            "POSIX_F_READ_TIME": RANKS * 0.002, "POSIX_F_META_TIME": RANKS * 0.004,
            "POSIX_F_SLOWEST_RANK_TIME": 0.05, "POSIX_F_FASTEST_RANK_TIME": 0.001,
            "POSIX_SLOWEST_RANK_BYTES": 8192, "POSIX_FASTEST_RANK_BYTES": 8192}),
    ]
    return write_log(tmp_path / "gather65k.darshan", nprocs=RANKS, run_time_s=2000.0,
                     exe="/lus/theta-fs0/projects/clim/bin/model.x -n 400", records=recs,
                     lustre=[Lustre(f"{THETA}/history.dat", MiB, 1)],
                     mounts=(("/lus/theta-fs0", "lustre"),))


def test_a_65536_rank_job_whose_rank_0_writes_everything(tmp_path: Path) -> None:
    """Expected: the lone writer first, HIGH, costing the job rank 0's 1,502 s of I/O (less
    the 1/65,536 an even share would take), with parallel I/O as the fix and a stripe count
    for the file; was: no such finding below 1 GiB, and above it an experiment ("one process
    does all the I/O", owning no time) ranked after the waste."""
    rep = diagnose(build_model([load_darshan_log(_lone_writer_job(tmp_path))]), Thresholds())
    model = rep.model
    problems = [f for f in rep.findings if not f.rule.overview]
    first = problems[0]
    assert first.key == "single-io-stream" and first.severity == "high"
    assert not first.rule.experiment and first.rule.tier == "mechanism"
    rank0 = 1502.0
    assert first.cost_s == pytest.approx(rank0 * (1 - 1 / RANKS), rel=1e-3)
    assert model.metrics.io_time_s == pytest.approx(rank0, rel=1e-3)  # the job's I/O time
    v = first.hit.values
    assert v["rank"] == 0 and v["share"] >= 0.99 and v["nprocs"] == RANKS
    assert v["bytes_written"] == 512 * GiB and v["bytes_read"] == 0
    # the time is the job's: every other rank waits for it
    assert v["waiting_rank_s"] == pytest.approx(rank0 * (RANKS - 1), rel=1e-3)
    assert "65535 other ranks" in first.hit.summary and "wait" in first.hit.summary
    assert [e.path for e in first.hit.files] == [f"{THETA}/history.dat"]
    assert "MPI_File_write_at_all" in first.fix.text and "stripe" in first.fix.text
    names = {a.name for a in first.fix.artifacts}
    assert {"lone_writer.c", "stripe_for_parallel_io.lfs.sh"} <= names
    lfs = next(a for a in first.fix.artifacts if a.kind == "lfs").content
    assert f"{THETA}/history.dat" in lfs and "-c 1 " not in lfs  # off its one OST
    # every second once, within the slowest rank's I/O time
    assert sum(f.cost_s or 0.0 for f in problems) <= model.metrics.io_time_s + 1e-6
    batch = [a for f in rep.findings for a in f.fix.artifacts
             if a.kind in ("slurm", "pbs", "lsf", "cobalt")]
    assert {a.kind for a in batch} <= {"cobalt"}  # Theta: Cobalt, aprun
    assert all_problems(model, rep.findings) == []
