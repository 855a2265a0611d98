"""The cross-layer columns of the model (iolab.model.layers): what each layer moved per file,
the bounds a reduced record allows, and the few derivations rules read."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from iolab.model.files import names_anonymised
from iolab.model.job import build_model
from iolab.model.layers import slowest_rank_time
from iolab.model.raw import SHARED_RANK, RawJob, RawRecord

MiB = 1 << 20


def rec(module: str, path: str, rank: int, rid: int, **c: Any) -> RawRecord:
    f = {k: v for k, v in c.items() if "_F_" in k}
    n = {k: v for k, v in c.items() if "_F_" not in k}
    return RawRecord(module=module, rank=rank, record_id=rid, path=path, counters=n,
                     fcounters=f)


def model(records: list[RawRecord], nprocs: int = 4, run: float = 100.0):
    return build_model([RawJob.build(source="iolab-profile", source_paths=["t"], nprocs=nprocs,
                                     start_time=0.0, end_time=run, run_time_s=run,
                                     records=records)])


def _i(m, path: str) -> int:
    return m.files.paths.index(path)


def test_per_rank_records_give_exact_rank_shares_and_times() -> None:
    recs = [rec("POSIX", "/s/a", r, 1, POSIX_OPENS=1, POSIX_WRITES=1,
                POSIX_BYTES_WRITTEN=(3 if r == 0 else 1) * MiB, POSIX_F_WRITE_TIME=1.0 + r)
            for r in range(4)]
    m = model(recs)
    i = _i(m, "/s/a")
    px = m.layers.posix
    assert px.bytes_written[i] == 6 * MiB and px.writes[i] == 4
    assert px.top_rank_bytes[i] == 3 * MiB and px.ranks_moving_bytes[i] == 4
    assert m.layers.posix_top_rank_share[i] == pytest.approx(0.5)
    assert px.slowest_rank_time_s[i] == 4.0  # rank 3
    sel = np.zeros(len(m.files), dtype=bool)
    sel[i] = True
    assert slowest_rank_time(m, "POSIX", ("write",), sel) == 4.0


def test_reduced_record_bounds() -> None:
    """A record reduced over 8 ranks: the top rank's bytes are at least the larger of the
    slowest/fastest rank's, the ranks moving bytes are unknown (-1), and the slowest rank's
    time is scaled to the kind of operation asked for."""
    r = rec("POSIX", "/s/b", SHARED_RANK, 2, POSIX_OPENS=8, POSIX_READS=8, POSIX_WRITES=8,
            POSIX_BYTES_READ=8 * MiB, POSIX_BYTES_WRITTEN=8 * MiB,
            POSIX_SLOWEST_RANK_BYTES=3 * MiB, POSIX_FASTEST_RANK_BYTES=1 * MiB,
            POSIX_F_READ_TIME=6.0, POSIX_F_WRITE_TIME=2.0, POSIX_F_SLOWEST_RANK_TIME=4.0,
            POSIX_F_META_TIME=0.5, POSIX_F_CLOSE_START_TIMESTAMP=10.0,
            POSIX_F_CLOSE_END_TIMESTAMP=40.0)
    m = model([r], nprocs=8)
    i = _i(m, "/s/b")
    px = m.layers.posix
    assert px.top_rank_bytes[i] == 3 * MiB and px.ranks_moving_bytes[i] == -1
    sel = np.zeros(len(m.files), dtype=bool)
    sel[i] = True
    # read is 6 of the record's 8.5 s: the slowest rank's 4 s times 6/8.5
    assert slowest_rank_time(m, "POSIX", ("read",), sel) == pytest.approx(4.0 * 6 / 8.5)
    # first close start to last close end spans 30 s of rank skew: capped by the record's
    # metadata time (a close is metadata time)
    assert px.close_s[i] == pytest.approx(0.5)


def test_opens_leave_out_fileno_and_dup() -> None:
    r = rec("POSIX", "/s/log", 0, 3, POSIX_OPENS=2003, POSIX_FILENOS=2000, POSIX_DUPS=1,
            POSIX_FSYNCS=2000)
    m = model([r], nprocs=1)
    i = _i(m, "/s/log")
    assert m.layers.posix.opens[i] == 2 and m.layers.posix.syncs[i] == 2000
    assert m.metrics.ifaces["POSIX"].opens == 2


def test_mpiio_over_posix_derivations() -> None:
    """A file written only through MPI-IO: POSIX reads under it (read-modify-write), empty
    reads, the amplification of POSIX over MPI-IO bytes, calls by kind."""
    recs = [rec("MPI-IO", "/s/c", SHARED_RANK, 4, MPIIO_COLL_OPENS=4, MPIIO_COLL_WRITES=40,
                MPIIO_INDEP_WRITES=10, MPIIO_BYTES_WRITTEN=50 * MiB),
            rec("POSIX", "/s/c", SHARED_RANK, 4, POSIX_OPENS=4, POSIX_READS=12,
                POSIX_BYTES_READ=0, POSIX_WRITES=100, POSIX_BYTES_WRITTEN=75 * MiB)]
    m = model(recs)
    i = _i(m, "/s/c")
    L = m.layers
    assert L.calls.writes["COLL"][i] == 40 and L.calls.total("write")[i] == 50
    assert L.mpi_write_only[i] and L.posix_reads_under_mpi_writes[i] == 12
    assert L.zero_byte_posix_reads[i] == 12
    assert L.write_amplification[i] == pytest.approx(1.5)


def test_datasets_linked_to_their_file() -> None:
    recs = [rec("H5F", "/s/d.h5", SHARED_RANK, 5, H5F_OPENS=4, H5F_USE_MPIIO=1),
            rec("H5D", "/s/d.h5:/g/x", SHARED_RANK, 6, H5D_BYTES_WRITTEN=5 * MiB),
            rec("H5D", "/s/d.h5:/g/y", SHARED_RANK, 7, H5D_BYTES_WRITTEN=3 * MiB),
            rec("H5D", "/elsewhere.h5:/z", SHARED_RANK, 8, H5D_BYTES_WRITTEN=1 * MiB)]
    m = model(recs)
    i = _i(m, "/s/d.h5")
    assert m.layers.library[i] == "HDF5" and m.layers.library_uses_mpiio[i]
    assert m.layers.library_bytes_written[i] == 8 * MiB  # its two datasets, not the third


@pytest.mark.parametrize("paths,anon", [
    (["/scratch/run/out.dat", "/home/u/in.nml"], False),
    (["18446744073709551", "9223372036854775"], True),  # darshan-convert --obfuscate
    (["/5f3a9c0d12e4b7a8/0011223344556677"], True),
    (["/scratch/deadbeef/cafebabe"], False),  # a real directory above hex names
    # expected / was: names hashed after a readable mount point were taken as real
    (["/lus/theta-fs0/6c2a91f0aa11/f09a1b2c3d4e5f60"], True),
    (["/gpfs/alpine/proj/f09a1b2c3d4e5f60a1"], True),
    (["/scratch/run/00000001.dat"], False),
    ([], False),
])
def test_anonymised_names(paths: list[str], anon: bool) -> None:
    assert names_anonymised(paths) is anon
