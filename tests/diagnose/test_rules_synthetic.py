"""Each rule on a job built through the loader contract (a RawJob built record by record, as
the profile loader builds it): fires on the pattern it is about, stays quiet just below it.

These cover the rules no shared log triggers (file per process, files per directory, opens,
small shared input, stragglers, striping, single stream, direct I/O, fill mode, aggregators).
"""

from __future__ import annotations

from typing import Any

import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.model.raw import SHARED_RANK, RawJob, RawRecord

MiB, GiB = 1 << 20, 1 << 30


def posix(path: str, rank: int, rid: int, **c: Any) -> RawRecord:
    f = {k: v for k, v in c.items() if k.startswith("POSIX_F_")}
    n = {k: v for k, v in c.items() if not k.startswith("POSIX_F_")}
    return RawRecord(module="POSIX", rank=rank, record_id=rid, path=path, counters=n,
                     fcounters=f)


def job(records: list[RawRecord], nprocs: int = 1, run: float = 100.0, **kw: Any) -> RawJob:
    return RawJob.build(source="iolab-profile", source_paths=["synthetic"], nprocs=nprocs,
                        start_time=0.0, end_time=run, run_time_s=run, records=records, **kw)


def fired(raw: RawJob, th: Thresholds | None = None, **model_kw: Any) -> dict[str, Any]:
    rep = diagnose(build_model([raw], **model_kw), th or Thresholds())
    return {f.rule.id + (f"/{f.hit.direction}" if f.hit.direction else ""): f
            for f in rep.findings}


def write_1m(path: str, rank: int, rid: int, nbytes: int, secs: float = 1.0) -> RawRecord:
    n = max(nbytes // MiB, 1)
    return posix(path, rank, rid, POSIX_OPENS=1, POSIX_WRITES=n, POSIX_BYTES_WRITTEN=nbytes,
                 POSIX_MAX_BYTE_WRITTEN=nbytes - 1, POSIX_CONSEC_WRITES=n - 1,
                 POSIX_SEQ_WRITES=n - 1, POSIX_SIZE_WRITE_1M_4M=n, POSIX_F_WRITE_TIME=secs,
                 POSIX_ACCESS1_ACCESS=MiB, POSIX_ACCESS1_COUNT=n)


def test_file_per_process_and_files_per_directory() -> None:
    recs = [write_1m(f"/scratch/out/rank{r:05d}.dat", r, 1000 + r, 4 * MiB) for r in range(1200)]
    got = fired(job(recs, nprocs=1200, mounts=[("/scratch", "lustre")]))
    assert got["file-per-process"].hit.values["per_rank_files"] == 1200
    assert got["files-per-directory"].hit.values["max_files_in_one_dir"] == 1200
    lfs = got["files-per-directory"].fix.artifacts[0].content
    # a new directory for the job: the layout of one other jobs may share never changes
    assert "mkdir /scratch/out/iolab-c1 && lfs setstripe -c 1 -S 1M /scratch/out/iolab-c1" in lfs
    assert "/scratch/out\n" not in lfs
    assert "stripe count" in got["files-per-directory"].fix.text
    # not on Lustre (expected / was: "set the stripe count" for /home on NFS): no stripes
    f = fired(job(recs, nprocs=1200, mounts=[("/scratch", "nfs")]))["files-per-directory"]
    assert "stripe" not in f.fix.text and f.fix.artifacts == []
    # 200 ranks: below both thresholds (256 per-rank files, 1000 per directory)
    got = fired(job(recs[:200], nprocs=200))
    assert "file-per-process" not in got and "files-per-directory" not in got


def test_frequent_open_close() -> None:
    rec = posix("/scratch/log.txt", 0, 7, POSIX_OPENS=5000, POSIX_WRITES=5000,
                POSIX_BYTES_WRITTEN=5000 * 100, POSIX_SIZE_WRITE_100_1K=5000)
    got = fired(job([rec]))
    assert got["frequent-open-close"].hit.values["opens"] == 5000
    rec.counters["POSIX_OPENS"] = 900
    assert "frequent-open-close" not in fired(job([rec]))


def test_small_shared_input_read_by_every_rank() -> None:
    recs = [posix("/home/u/config.nml", SHARED_RANK, 9, POSIX_OPENS=64, POSIX_READS=64,
                  POSIX_BYTES_READ=64 * 4096, POSIX_MAX_BYTE_READ=4095,
                  POSIX_SIZE_READ_1K_10K=64)]
    got = fired(job(recs, nprocs=64))
    f = got["small-shared-input"]
    assert f.hit.files[0].values == {"size_bytes": 4096, "ranks": 64, "bytes_read": 64 * 4096}
    assert "MPI_Bcast" in next(a for a in f.fix.artifacts if a.kind == "snippet-c").content
    # a shared input read by every rank is not also "redundant traffic" (below 16 MiB)
    assert "redundant-traffic/read" not in got


def test_stragglers_need_time_or_bytes() -> None:
    def rec(slow: float) -> RawRecord:
        return posix("/scratch/shared.dat", SHARED_RANK, 11, POSIX_OPENS=8, POSIX_WRITES=8,
                     POSIX_BYTES_WRITTEN=8 * MiB, POSIX_F_FASTEST_RANK_TIME=0.5 * slow,
                     POSIX_F_SLOWEST_RANK_TIME=slow, POSIX_FASTEST_RANK_BYTES=MiB,
                     POSIX_SLOWEST_RANK_BYTES=MiB)
    f = fired(job([rec(4.0)], nprocs=8))["shared-file-stragglers"]
    assert "shared-file-stragglers" not in fired(job([rec(0.01)], nprocs=8))  # Drishti flags
    # Expected / was: "give every rank the same share" to ranks that already move the same
    # bytes (the corpus's apmpi mpi-io-test): the slow rank waited on the file system
    assert f.fix.text.startswith("Every rank already moves the same bytes")
    assert "make the calls collective" in f.fix.text  # no MPI-IO here: POSIX calls
    uneven = rec(4.0)
    uneven.counters["POSIX_SLOWEST_RANK_BYTES"] = 4 * MiB
    g = fired(job([uneven], nprocs=8))["shared-file-stragglers"]
    assert g.fix.text.startswith("Give every rank the same share")


def test_per_rank_imbalance() -> None:
    recs = [write_1m(f"/s/r{r}.dat", r, 50 + r, (64 if r == 0 else 16) * MiB) for r in range(4)]
    v = fired(job(recs, nprocs=4))["per-rank-imbalance"].hit.values
    assert v["max_rank"] == 0 and v["max_bytes"] == 64 * MiB and v["min_bytes"] == 16 * MiB
    # Partial POSIX records (Darshan ran out of record memory): the missing records would
    # look like ranks with less data, so the rule does not judge, and says why.
    rep = diagnose(build_model([job(recs, nprocs=4, partial_modules=["POSIX"])]), Thresholds())
    assert not any(f.rule.id == "per-rank-imbalance" for f in rep.findings)
    assert "partial" in dict(rep.not_judged)["per-rank-imbalance"]


def test_striping_rules() -> None:
    big = posix("/lus/big.dat", SHARED_RANK, 21, POSIX_OPENS=64, POSIX_WRITES=4096,
                POSIX_BYTES_WRITTEN=4 * GiB, POSIX_MAX_BYTE_WRITTEN=4 * GiB - 1,
                POSIX_SIZE_WRITE_1M_4M=4096, POSIX_ACCESS1_ACCESS=MiB,
                POSIX_ACCESS1_COUNT=4096)
    small = write_1m("/lus/small.dat", 0, 22, 8 * MiB)
    odd = posix("/lus/odd.dat", 0, 23, POSIX_OPENS=1, POSIX_WRITES=2000,
                POSIX_BYTES_WRITTEN=2000 * 1536 * 1024, POSIX_MAX_BYTE_WRITTEN=2000 * 1536 * 1024,
                POSIX_SIZE_WRITE_1M_4M=2000, POSIX_ACCESS1_ACCESS=1536 * 1024,
                POSIX_ACCESS1_COUNT=2000)
    raw = job([big, small, odd], nprocs=64,
              stripes={21: (MiB, 1), 22: (MiB, 8), 23: (MiB, 4)})
    got = fired(raw)
    f = got["stripe-shared-file"]
    assert f.hit.values["recommended_stripe_count"] == 8
    assert ("lfs setstripe -c 8 -S 1M /lus/big.dat.iolab-restripe && cp -p /lus/big.dat "
            "/lus/big.dat.iolab-restripe" in f.fix.artifacts[0].content)
    assert got["stripe-small-files"].hit.files[0].path == "/lus/small.dat"
    assert got["stripe-size-mismatch"].hit.values["access_bytes"] == 1536 * 1024
    assert "stripe-huge-file" not in got
    raw.stripes = {}
    assert not {k for k in fired(raw) if k.startswith("stripe-")}


def test_single_io_stream() -> None:
    recs = [write_1m("/s/all.dat", 0, 31, 4 * GiB)] + [
        write_1m(f"/s/tiny{r}.dat", r, 40 + r, MiB) for r in range(1, 16)]
    assert fired(job(recs, nprocs=16))["single-io-stream"].hit.values["rank"] == 0


def test_direct_io_one_time_read_and_dirty_ratio() -> None:
    rd = posix("/s/input.bin", 0, 61, POSIX_OPENS=1, POSIX_READS=2048,
               POSIX_BYTES_READ=2 * GiB, POSIX_MAX_BYTE_READ=2 * GiB - 1,
               POSIX_CONSEC_READS=2047, POSIX_SEQ_READS=2047, POSIX_SIZE_READ_1M_4M=2048)
    got = fired(job([rd]))
    assert got["direct-io/read"].hit.values["bytes_read"] == 2 * GiB
    got = fired(job([write_1m("/s/out.bin", 0, 62, 8 * GiB)]), node_memory_bytes=16 * GiB)
    assert got["direct-io/write"].hit.values["bytes_written_per_node"] == 8 * GiB
    assert "direct-io/write" not in fired(job([write_1m("/s/o", 0, 63, 4 * GiB)]),
                                          node_memory_bytes=16 * GiB)


def test_aggregators_need_nodes() -> None:
    rec = RawRecord(module="MPI-IO", rank=SHARED_RANK, record_id=71, path="/s/c.dat",
                    counters={"MPIIO_COLL_OPENS": 64, "MPIIO_COLL_WRITES": 640,
                              "MPIIO_BYTES_WRITTEN": 640 * 4 * MiB,
                              "MPIIO_SIZE_WRITE_AGG_4M_10M": 640})
    assert "aggregators-per-node" not in fired(job([rec], nprocs=64))
    f = fired(job([rec], nprocs=64), nodes=2)["aggregators-per-node"]
    assert f.hit.values["ranks_per_node"] == 32
    assert "cb_config_list *:2" in f.fix.artifacts[0].content
    # Expected / was: nothing for a single-node job / "two aggregators per node" for 4 ranks
    # on one node (per-node aggregators change nothing there).
    four = RawRecord(module="MPI-IO", rank=SHARED_RANK, record_id=72, path="/s/d.dat",
                     counters={**rec.counters, "MPIIO_COLL_OPENS": 4})
    assert "aggregators-per-node" not in fired(job([four], nprocs=4), nodes=1)


def test_fill_mode_pnetcdf() -> None:
    recs = [RawRecord(module="PNETCDF_FILE", rank=SHARED_RANK, record_id=81, path="/s/a.nc",
                      counters={"PNETCDF_FILE_CREATES": 4, "PNETCDF_FILE_BYTES_WRITTEN": 64 * MiB}),
            write_1m("/s/a.nc", SHARED_RANK, 81, 128 * MiB)]
    f = fired(job(recs, nprocs=4))["fill-mode"]
    assert f.hit.values["posix_bytes_written"] == 128 * MiB
    assert "NC_NOFILL" in f.fix.artifacts[0].content


def test_fill_mode_hdf5_per_file() -> None:
    """Two HDF5 files of 64 MiB of datasets each; only b.h5 received 128 MiB (fill values
    first). Expected / was: b.h5 alone, from its own datasets ("<file>:<dataset>" records) /
    the datasets' bytes spread evenly over the files."""
    recs = []
    for rid, name, posix in ((91, "/s/a.h5", 64 * MiB), (92, "/s/b.h5", 128 * MiB)):
        recs += [RawRecord(module="H5F", rank=SHARED_RANK, record_id=rid, path=name,
                           counters={"H5F_OPENS": 4, "H5F_USE_MPIIO": 1}),
                 RawRecord(module="H5D", rank=SHARED_RANK, record_id=rid + 100,
                           path=f"{name}:/grid/temperature",
                           counters={"H5D_OPENS": 4, "H5D_WRITES": 64,
                                     "H5D_BYTES_WRITTEN": 64 * MiB}),
                 write_1m(name, SHARED_RANK, rid, posix)]
    f = fired(job(recs, nprocs=4))["fill-mode"]
    assert [e.path for e in f.hit.files] == ["/s/b.h5"]
    assert f.hit.files[0].values == {"posix_bytes": 128 * MiB, "data_bytes": 64 * MiB,
                                     "library": "HDF5"}


def test_formatted_output() -> None:
    rec = RawRecord(module="STDIO", rank=0, record_id=91, path="/s/results.csv",
                    counters={"STDIO_OPENS": 1, "STDIO_WRITES": 200_000,
                              "STDIO_BYTES_WRITTEN": 200_000 * 24})
    f = fired(job([rec]))["formatted-output"]
    assert f.hit.values["stdio_writes"] == 200_000


def test_metadata_time_per_rank() -> None:
    rec = posix("/s/m.dat", 0, 95, POSIX_OPENS=100, POSIX_F_META_TIME=45.0)
    assert fired(job([rec]))["metadata-time"].severity == "high"
    rec.fcounters["POSIX_F_META_TIME"] = 5.0
    assert "metadata-time" not in fired(job([rec]))


def test_thresholds_change_the_verdict() -> None:
    rec = posix("/s/r.dat", 0, 99, POSIX_OPENS=1, POSIX_READS=2000, POSIX_BYTES_READ=2000 * MiB,
                POSIX_SEQ_READS=1000, POSIX_MAX_BYTE_READ=4 * GiB, POSIX_SIZE_READ_1M_4M=2000)
    assert "random-access/read" in fired(job([rec]))  # ~2000 random of 2000
    th = Thresholds()
    th.set("random_min_ops", "5000", "test")
    assert "random-access/read" not in fired(job([rec]), th)


def test_aggregators_read_the_hints_in_effect() -> None:
    rec = RawRecord(module="MPI-IO", rank=SHARED_RANK, record_id=72, path="/s/c.dat",
                    counters={"MPIIO_COLL_OPENS": 64, "MPIIO_COLL_WRITES": 640,
                              "MPIIO_BYTES_WRITTEN": 640 * 4 * MiB})
    two = job([rec], nprocs=64, metadata={"hints:/s/c.dat": "cb_nodes=4;cb_config_list=*:2"})
    assert "aggregators-per-node" not in fired(two, nodes=2)
    one = job([rec], nprocs=64, metadata={"hints:/s/c.dat": "cb_nodes=2;romio_cb_write=enable"})
    assert fired(one, nodes=2)["aggregators-per-node"].hit.values["cb_nodes"] == 2
    # Darshan's own 'h' hints are never taken for the application's
    darshan_h = job([rec], nprocs=64, metadata={"h": "romio_no_indep_rw=true;cb_nodes=4"})
    assert fired(darshan_h, nodes=2)["aggregators-per-node"].hit.values["cb_nodes"] is None


def test_shell_artifacts_quote_hostile_paths(tmp_path) -> None:
    import subprocess

    evil = "/s/x'; touch " + str(tmp_path / "pwned") + "; echo '"
    rec = posix(evil, 0, 5, POSIX_OPENS=1, POSIX_WRITES=200_000, POSIX_BYTES_WRITTEN=200_000 * 8,
                POSIX_CONSEC_WRITES=199_999, POSIX_SIZE_WRITE_0_100=200_000)
    f = fired(job([rec]))["small-serial-io/write"]
    env = next(a for a in f.fix.artifacts if a.name == "buffering.env").content
    script = tmp_path / "b.env"
    script.write_text(env)
    out = subprocess.run(["bash", "-c", f"IOLAB_PREFIX=/opt/iolab; . {script}; "
                          "printf %s \"$IOLAB_BUFFER\""],
                         capture_output=True, text=True, check=True).stdout
    assert not (tmp_path / "pwned").exists()
    assert out == evil + ":size=64M:count=4"


def test_collective_buffering_already_on_is_not_recommended() -> None:
    """Expected / was: with romio_cb_write enable read back from the job (an iolab profile),
    the fix asks for larger calls / it handed out 'romio_cb_write enable' again."""
    n = 20000
    recs = [posix("/s/grid.dat", SHARED_RANK, 7, POSIX_OPENS=8, POSIX_WRITES=n,
                  POSIX_BYTES_WRITTEN=n * 4096, POSIX_SIZE_WRITE_1K_10K=n,
                  POSIX_F_WRITE_TIME=40.0, POSIX_F_SLOWEST_RANK_TIME=6.0),
            RawRecord(module="MPI-IO", rank=SHARED_RANK, record_id=7, path="/s/grid.dat",
                      counters={"MPIIO_COLL_OPENS": 8, "MPIIO_COLL_WRITES": n,
                                "MPIIO_BYTES_WRITTEN": n * 4096,
                                "MPIIO_SIZE_WRITE_AGG_1K_10K": n},
                      fcounters={"MPIIO_F_WRITE_TIME": 48.0, "MPIIO_F_SLOWEST_RANK_TIME": 7.0})]
    hints = {"hints:/s/grid.dat": "romio_cb_write=enable;romio_ds_write=disable;"
                                  "romio_no_indep_rw=false;cb_buffer_size=16777216"}
    f = fired(job(recs, nprocs=8, metadata=hints))["collective-buffering/write"]
    assert f.fix.text.startswith("Collective buffering is already on (romio_cb_write enable)")
    assert not any(a.kind == "romio-hints" for a in f.fix.artifacts)
    # without the hints read back, the same counters get the hint
    f = fired(job(recs, nprocs=8))["collective-buffering/write"]
    assert "romio_cb_write enable" in next(a for a in f.fix.artifacts
                                           if a.kind == "romio-hints").content


def test_slow_hdf5_close_is_the_metadata_flush() -> None:
    """H5Fclose on rank 0 takes 8 s (metadata cache flush) in a 100 s run; POSIX shows the
    flush as many small writes. The finding names the HDF5 layer and its fix."""
    recs = [RawRecord(module="H5F", rank=0, record_id=5, path="/s/out.h5",
                      counters={"H5F_OPENS": 1, "H5F_FLUSHES": 0, "H5F_USE_MPIIO": 1},
                      fcounters={"H5F_F_CLOSE_START_TIMESTAMP": 90.0,
                                 "H5F_F_CLOSE_END_TIMESTAMP": 98.0, "H5F_F_META_TIME": 8.5}),
            posix("/s/out.h5", 0, 5, POSIX_OPENS=1, POSIX_WRITES=50000,
                  POSIX_BYTES_WRITTEN=50000 * 512, POSIX_SIZE_WRITE_100_1K=50000,
                  POSIX_F_WRITE_TIME=8.0, POSIX_F_CLOSE_START_TIMESTAMP=97.9,
                  POSIX_F_CLOSE_END_TIMESTAMP=98.0)]
    f = fired(job(recs, nprocs=1))["slow-close"]
    assert f.hit.values["layer"] == "HDF5" and f.cost_s == 8.0
    assert "H5Pset_coll_metadata_write" in f.fix.text
    # opened 3 times: Darshan's first-close-start to last-close-end is no close duration
    recs[0].counters["H5F_OPENS"] = 3
    assert "slow-close" not in fired(job(recs, nprocs=1))


def test_direct_io_write_case_with_memory_but_no_node_count() -> None:
    """16 ranks wrote 2 GiB each, 16 GiB nodes, node count unknown: 2 GiB per node (one rank
    per node) to 32 GiB (all on one): the log cannot decide, the text names --nodes; with
    --nodes 2 it is judged (16 GiB > 40% of 16 GiB), with --nodes 16 too (2 GiB: no)."""
    recs = [write_1m(f"/s/out{r}.bin", r, 80 + r, 2 * GiB) for r in range(16)]
    rep = diagnose(build_model([job(recs, nprocs=16)], node_memory_bytes=16 * GiB), Thresholds())
    (needs,) = [n for r, n in rep.not_judged if r == "direct-io"]
    assert "pass --nodes N" in needs and "between 2 GiB and 32 GiB" in needs
    got = fired(job(recs, nprocs=16), node_memory_bytes=16 * GiB, nodes=2)
    assert got["direct-io/write"].hit.values["bytes_written_per_node"] == 16 * GiB
    rep = diagnose(build_model([job(recs, nprocs=16)], node_memory_bytes=16 * GiB, nodes=16),
                   Thresholds())
    assert not any(r == "direct-io" for r, _ in rep.not_judged)
    assert "direct-io/write" not in {f.rule.id + f"/{f.hit.direction}" for f in rep.findings}


def test_small_striped_inputs_cost_their_metadata_time_and_stay_inputs() -> None:
    """Expected / was: 14 training files of ~200 MB on 160 OSTs, read by one process (the
    DLIO logs of the corpus), cost "4.9 s", all their read time, and the fix spoke of "the
    next run's output"; extra stripes cost at open/close/stat, and these files are inputs.
    And one process re-reading its data is not told to broadcast it to other ranks."""
    size = 200 * MiB
    rec = posix("/lus/train/img_1.npz", 0, 31, POSIX_OPENS=3, POSIX_READS=600,
                POSIX_BYTES_READ=3 * size, POSIX_MAX_BYTE_READ=size - 1,
                POSIX_SIZE_READ_1M_4M=600, POSIX_F_READ_TIME=9.0, POSIX_F_META_TIME=0.7)
    got = fired(job([rec], run=100.0, stripes={31: (MiB, 160)}))
    f = got["stripe-small-files"]
    assert f.estimate_s == pytest.approx(0.7)  # an experiment: an estimate, owns nothing
    assert "create the data set in a directory with one stripe" in f.fix.text
    assert "output" not in f.fix.text
    r = got["redundant-traffic/read"]
    assert "broadcast" not in r.fix.text and "node-local cache" in r.fix.text


def _mpiio_reads(size: int, n: int) -> list[RawRecord]:
    mp = RawRecord(module="MPI-IO", rank=0, record_id=41, path="/s/in.dat",
                   counters={"MPIIO_INDEP_OPENS": 1, "MPIIO_INDEP_READS": n,
                             "MPIIO_BYTES_READ": n * size},
                   fcounters={"MPIIO_F_READ_TIME": 40.0})
    px = posix("/s/in.dat", 0, 41, POSIX_OPENS=1, POSIX_READS=n, POSIX_BYTES_READ=n * size,
               POSIX_MAX_BYTE_READ=n * size - 1, POSIX_CONSEC_READS=n - 1,
               POSIX_SEQ_READS=n - 1, POSIX_F_READ_TIME=30.0,
               **{"POSIX_SIZE_READ_0_100" if size <= 100 else "POSIX_SIZE_READ_4M_10M": n})
    return [mp, px]


def test_nonblocking_only_for_calls_worth_overlapping() -> None:
    """Expected / was: "overlap I/O with computation" also for a million 1-byte calls (the
    corpus's partial_data_dxt, first finding); overlap hides none of a tiny call's cost."""
    got = fired(job(_mpiio_reads(4 * MiB, 2000), run=100.0))
    nb = got["mpiio-nonblocking"]
    # the twin of the job's independent reads (not the collective _all)
    assert "MPI_File_iread_at " in nb.fix.text and "_all" not in nb.fix.text
    assert "iwrite" not in nb.fix.text
    assert nb.estimate_s == pytest.approx(40.0)  # the MPI-IO time: less than the 60 s left
    assert "mpiio-nonblocking" not in fired(job(_mpiio_reads(1, 1_000_000), run=100.0))


def test_small_mpiio_requests_of_one_rank_are_not_sent_to_collective_buffering() -> None:
    """Expected / was: a million 1-byte MPI-IO reads by one process (partial_data_dxt in the
    corpus) were told "collective MPI-IO with a larger collective buffer" plus ROMIO hints
    files: with one rank there is nothing to merge; the fix is fewer, larger calls."""
    f = fired(job(_mpiio_reads(16, 1_000_000), run=100.0))["small-requests/read"]
    assert f.fix.text.startswith("Issue fewer, larger MPI-IO calls")
    assert "read blocks of 1 MiB" in f.fix.text and f.fix.artifacts == []


def test_redundant_reads_of_own_data_are_not_told_to_broadcast() -> None:
    """4 ranks each read their own 256 MiB file three times (epochs): keep it in memory;
    8 ranks reading the same 256 MiB (one reduced record): read once and broadcast."""
    size = 256 * MiB
    own = [posix(f"/s/part{r}.bin", r, 50 + r, POSIX_OPENS=3, POSIX_READS=768,
                 POSIX_BYTES_READ=3 * size, POSIX_MAX_BYTE_READ=size - 1,
                 POSIX_SIZE_READ_1M_4M=768, POSIX_F_READ_TIME=3.0) for r in range(4)]
    f = fired(job(own, nprocs=4))["redundant-traffic/read"]
    assert "broadcast" not in f.fix.text and "node-local cache" in f.fix.text
    same = [posix("/s/table.bin", SHARED_RANK, 60, POSIX_OPENS=8, POSIX_READS=2048,
                  POSIX_BYTES_READ=8 * size, POSIX_MAX_BYTE_READ=size - 1,
                  POSIX_SIZE_READ_1M_4M=2048, POSIX_F_READ_TIME=8.0)]
    f = fired(job(same, nprocs=8))["redundant-traffic/read"]
    assert "broadcast it to the others" in f.fix.text


def test_stdio_share_only_for_small_stdio_calls() -> None:
    """Large fwrite calls are one write() each: STDIO carrying most bytes in 16 MiB calls
    is not a problem (the corpus's partial_data_stdio, told to move off STDIO); the same
    bytes in 512-byte calls are."""
    def stdio(calls: int, size: int) -> RawRecord:
        return RawRecord(module="STDIO", rank=0, record_id=97, path="/s/data.bin",
                         counters={"STDIO_OPENS": 1, "STDIO_WRITES": calls,
                                   "STDIO_BYTES_WRITTEN": calls * size},
                         fcounters={"STDIO_F_WRITE_TIME": 5.0})
    assert "stdio-share" not in fired(job([stdio(64, 16 * MiB)]))
    assert "stdio-share" in fired(job([stdio(2_000_000, 512)]))
