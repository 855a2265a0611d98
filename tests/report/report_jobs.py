"""Synthetic jobs for the report tests, built through the loader contract (RawJob)."""

from __future__ import annotations

from iolab.model.job import Model, build_model
from iolab.model.raw import RawJob, RawRecord, TraceSegment

MIB = 1 << 20


def traced_job(name: str = "/scratch/out.dat", ranks: int = 2, slow_rank: int = 1,
               exe: str = "./app") -> Model:
    """``ranks`` ranks each write 4 MiB to ``name`` through MPI-IO (4 calls of 1 MiB), which
    reach POSIX as 8 writes of 512 KiB; rank ``slow_rank`` takes twice as long; a second
    file is written through POSIX only (1 MiB per rank)."""
    recs, segs = [], []
    for r in range(ranks):
        dur = 0.2 if r == slow_rank else 0.1
        recs.append(RawRecord("MPI-IO", r, 1, name, {
            "MPIIO_COLL_WRITES": 4, "MPIIO_BYTES_WRITTEN": 4 * MIB, "MPIIO_COLL_OPENS": 1,
            "MPIIO_SIZE_WRITE_AGG_100K_1M": 4},
            {"MPIIO_F_WRITE_TIME": 4 * dur}))
        recs.append(RawRecord("POSIX", r, 1, name, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 8, "POSIX_BYTES_WRITTEN": 4 * MIB,
            "POSIX_SIZE_WRITE_100K_1M": 8, "POSIX_MAX_BYTE_WRITTEN": 8 * MIB - 1,
            "POSIX_ACCESS1_ACCESS": 512 * 1024, "POSIX_ACCESS1_COUNT": 8},
            {"POSIX_F_WRITE_TIME": 4 * dur}))
        recs.append(RawRecord("POSIX", r, 2, "/scratch/side.dat", {
            "POSIX_OPENS": 1, "POSIX_WRITES": 1, "POSIX_BYTES_WRITTEN": MIB,
            "POSIX_SIZE_WRITE_100K_1M": 1, "POSIX_MAX_BYTE_WRITTEN": MIB - 1,
            "POSIX_ACCESS1_ACCESS": MIB, "POSIX_ACCESS1_COUNT": 1},
            {"POSIX_F_WRITE_TIME": 0.05}))
        for k in range(4):
            t0 = 1.0 + k * dur
            segs.append(TraceSegment("DXT_MPIIO", r, name, "write", (r * 4 + k) * MIB, MIB,
                                     t0, t0 + dur, record_id=1))
            for h in range(2):
                segs.append(TraceSegment("DXT_POSIX", r, name, "write",
                                         (r * 4 + k) * MIB + h * MIB // 2, MIB // 2,
                                         t0 + h * dur / 2, t0 + (h + 1) * dur / 2,
                                         record_id=1))
        segs.append(TraceSegment("DXT_POSIX", r, "/scratch/side.dat", "write", 0, MIB,
                                 2.0, 2.05, record_id=2))
    raw = RawJob.build(recs, segs, source="iolab-profile", source_paths=[f"{exe}.iolab"],
                       nprocs=ranks, start_time=0.0, end_time=3.0, run_time_s=3.0, exe=exe,
                       mounts=[("/scratch", "lustre"), ("/", "ext4")])
    return build_model([raw])
