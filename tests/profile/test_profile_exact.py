"""Counter exactness: programs with known I/O, every (non-timing) counter asserted."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS, ints_except_time, profile, record

from iolab import counters as ctr
from iolab.model.raw import RawJob

SHIM_MPICH = "libiolab-trace-mpi-mpich.so"


def _expected(module: str, **nonzero: int) -> dict[str, int]:
    names = ctr.load()[module].int_names()
    out = {n: 0 for n in names}
    prefix = "MPIIO" if module == "MPI-IO" else module
    for k, v in nonzero.items():
        out[f"{prefix}_{k}"] = v
    skip = ("_MAX_READ_TIME_SIZE", "_MAX_WRITE_TIME_SIZE", "_FASTEST_RANK", "_SLOWEST_RANK")
    return {k: v for k, v in out.items() if not any(s in k for s in skip)}


def test_posix_64B_writes_then_1MiB_reads(prog: Callable[[str], Path], tmp_path: Path) -> None:
    src = tmp_path / "in.dat"
    with open(src, "wb") as f:
        f.truncate(100 << 20)  # sparse: 100 MiB to read, no disk traffic
    _, job = profile(
        [str(prog("posix_exact")), str(tmp_path / "out.dat"), str(src)], tmp_path / "p"
    )
    blk = os.stat(tmp_path / "out.dat").st_blksize
    aligned = sum(1 for i in range(10000) if (i * 64) % blk == 0)
    w = record(job, "POSIX", "out.dat")
    assert ints_except_time(w) == _expected(
        "POSIX",
        OPENS=1,
        WRITES=10000,
        MODE=0o644,
        BYTES_WRITTEN=640000,
        MAX_BYTE_WRITTEN=639999,
        CONSEC_WRITES=9999,
        SEQ_WRITES=9999,
        MEM_ALIGNMENT=8,
        FILE_NOT_ALIGNED=10000 - aligned,
        FILE_ALIGNMENT=blk,
        SIZE_WRITE_0_100=10000,
        ACCESS1_ACCESS=64,
        ACCESS1_COUNT=10000,
    )
    assert w.counters["POSIX_MAX_WRITE_TIME_SIZE"] == 64
    r = record(job, "POSIX", "in.dat")
    assert ints_except_time(r) == _expected(
        "POSIX",
        OPENS=1,
        READS=100,
        BYTES_READ=100 << 20,
        MAX_BYTE_READ=(100 << 20) - 1,
        CONSEC_READS=99,
        SEQ_READS=99,
        MEM_ALIGNMENT=8,
        FILE_ALIGNMENT=blk,
        SIZE_READ_100K_1M=100,
        ACCESS1_ACCESS=1 << 20,
        ACCESS1_COUNT=100,
    )
    assert r.counters["POSIX_MAX_READ_TIME_SIZE"] == 1 << 20
    f = r.fcounters
    assert 0 < f["POSIX_F_OPEN_START_TIMESTAMP"] <= f["POSIX_F_READ_START_TIMESTAMP"]
    assert (
        f["POSIX_F_READ_START_TIMESTAMP"]
        <= f["POSIX_F_READ_END_TIMESTAMP"]
        <= f["POSIX_F_CLOSE_END_TIMESTAMP"]
    )
    assert 0 < f["POSIX_F_MAX_READ_TIME"] <= f["POSIX_F_READ_TIME"] <= job.run_time_s
    assert job.nprocs == 1 and not job.partial_modules and len(job.rows()) == 2


def test_stdio_2000_x_512B_fwrite(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile(
        [str(prog("stdio_write")), str(tmp_path / "s.dat"), "2000", "512"], tmp_path / "p"
    )
    s = record(job, "STDIO", "s.dat")
    assert ints_except_time(s) == _expected(
        "STDIO", OPENS=1, WRITES=2000, BYTES_WRITTEN=1024000, MAX_BYTE_WRITTEN=1023999
    )
    assert [r for r in job.rows() if r.module == "POSIX"] == []  # glibc's own writes are not calls
    assert s.fcounters["STDIO_F_WRITE_TIME"] > 0


def test_file_per_process_mpi(prog: Callable[[str], Path], tmp_path: Path) -> None:
    """4 ranks, each writing its own file: 4 records, one per rank, none reduced."""
    exe = prog("posix_write")
    script = tmp_path / "fpp.sh"
    script.write_text(f"#!/bin/sh\nexec {exe} {tmp_path}/fpp.$OMPI_COMM_WORLD_RANK 100 4096\n")
    script.chmod(0o755)
    _, job = profile([str(script)], tmp_path / "p", np=4)
    assert job.nprocs == 4
    recs = sorted(
        (
            r
            for r in job.rows()
            if r.path.startswith(f"{tmp_path}/fpp.") and not r.path.endswith(".sh")
        ),
        key=lambda r: r.rank,
    )
    assert [r.rank for r in recs] == [0, 1, 2, 3]
    for r in recs:
        assert r.path.endswith(f"fpp.{r.rank}")
        assert ints_except_time(r) == _expected(
            "POSIX",
            OPENS=1,
            WRITES=100,
            MODE=0o644,
            BYTES_WRITTEN=409600,
            MAX_BYTE_WRITTEN=409599,
            CONSEC_WRITES=99,
            SEQ_WRITES=99,
            MEM_ALIGNMENT=8,
            FILE_ALIGNMENT=4096,
            SIZE_WRITE_1K_10K=100,
            ACCESS1_ACCESS=4096,
            ACCESS1_COUNT=100,
        )


@pytest.mark.parametrize("mode", ["coll", "indep"])
def test_mpiio_strided_4KiB_4_ranks(prog: Callable[[str], Path], tmp_path: Path, mode: str) -> None:
    n = 256
    _, job = profile(
        [str(prog("mpi_strided")), str(tmp_path / "m.dat"), str(n), "4096", mode],
        tmp_path / "p",
        np=4,
    )
    m = record(job, "MPI-IO", "m.dat")
    assert m.rank == -1 and job.nprocs == 4
    kind = "COLL_WRITES" if mode == "coll" else "INDEP_WRITES"
    assert ints_except_time(m) == _expected(
        "MPI-IO",
        COLL_OPENS=4,
        MODE=5,
        BYTES_WRITTEN=4 * n * 4096,
        SIZE_WRITE_AGG_1K_10K=4 * n,
        ACCESS1_ACCESS=4096,
        ACCESS1_COUNT=4 * n,
        **{kind: 4 * n},
    )
    assert m.counters["MPIIO_MAX_WRITE_TIME_SIZE"] == 4096
    assert (
        m.counters["MPIIO_FASTEST_RANK_BYTES"] == m.counters["MPIIO_SLOWEST_RANK_BYTES"] == n * 4096
    )
    assert m.fcounters["MPIIO_F_VARIANCE_RANK_BYTES"] == 0
    p = record(job, "POSIX", "m.dat")  # what Open MPI wrote below, reduced over the ranks
    assert p.rank == -1 and p.counters["POSIX_BYTES_WRITTEN"] == 4 * n * 4096


def test_trace_mode_bounded(prog: Callable[[str], Path], tmp_path: Path) -> None:
    src = tmp_path / "in.dat"
    with open(src, "wb") as f:
        f.truncate(100 << 20)
    argv = [str(prog("posix_exact")), str(tmp_path / "out.dat"), str(src)]
    _, job = profile(argv, tmp_path / "p", trace=True)
    writes = [s for s in job.segments() if s.op == "write"]
    reads = [s for s in job.segments() if s.op == "read"]
    assert len(writes) == 10000 and len(reads) == 100
    assert [s.offset for s in writes[:3]] == [0, 64, 128] and {s.length for s in writes} == {64}
    assert reads[-1].offset == 99 << 20 and all(s.path.endswith("/in.dat") for s in reads)
    assert all(0 <= s.start_s <= s.end_s <= job.run_time_s + 1 for s in job.segments())
    assert not job.partial_modules
    _, job = profile(argv, tmp_path / "p2", trace=True, extra_env={"IOLAB_TRACE_SEGMENTS": "1000"})
    assert len(job.segments()) == 1000
    assert "DXT_POSIX" in job.partial_modules
    assert any("9100 segments left out" in n for n in job.notes)
    assert record(job, "POSIX", "out.dat").counters["POSIX_WRITES"] == 10000  # counters complete


def test_reduction_at_finalize_equals_loader_reduction(
    prog: Callable[[str], Path], tmp_path: Path
) -> None:
    """Shared files are reduced at MPI_Finalize (rank 0 writes one rank -1 record); with
    IOLAB_TRACE_NO_REDUCE=1 every rank writes its own and the loader reduces: same result."""
    argv = [str(prog("mpi_strided")), str(tmp_path / "m.dat"), "300", "4096", "indep"]
    _, at_finalize = profile(argv, tmp_path / "a", np=4)
    _, at_load = profile(argv, tmp_path / "b", np=4, extra_env={"IOLAB_TRACE_NO_REDUCE": "1"})
    parts = (tmp_path / "a" / "job.iolab").read_text()
    assert parts.count('"rank":-1,') >= 2  # MPI-IO and POSIX records of m.dat, from rank 0
    assert '"rank":-1,' not in (tmp_path / "b" / "job.iolab").read_text()
    for mod in ("MPI-IO", "POSIX"):
        a, b = record(at_finalize, mod, "m.dat"), record(at_load, mod, "m.dat")
        assert a.rank == b.rank == -1
        assert ints_except_time(a) == ints_except_time(b)
        assert set(a.fcounters) == set(b.fcounters)
        for k in ("F_OPEN_START_TIMESTAMP", "F_WRITE_END_TIMESTAMP"):
            key = f"{'MPIIO' if mod == 'MPI-IO' else mod}_{k}"
            assert 0 < a.fcounters[key] < at_finalize.run_time_s


def test_trace_mode_mpiio(prog: Callable[[str], Path], tmp_path: Path) -> None:
    n = 64
    argv = [str(prog("mpi_strided")), str(tmp_path / "t.dat"), str(n), "4096", "indep"]
    _, job = profile(argv, tmp_path / "p", np=4, trace=True)
    segs = [s for s in job.segments() if s.module == "DXT_MPIIO"]
    assert len(segs) == 4 * n and {s.length for s in segs} == {4096}
    for r in range(4):
        mine = sorted(s.offset for s in segs if s.rank == r)
        assert mine == [(i * 4 + r) * 4096 for i in range(n)]
    posix = [s for s in job.segments() if s.module == "DXT_POSIX" and s.path.endswith("/t.dat")]
    assert sum(s.length for s in posix) == 4 * n * 4096  # what Open MPI wrote below


def test_record_limit_says_what_was_left_out(prog: Callable[[str], Path], tmp_path: Path) -> None:
    """17 files with room for 5 records: 5 complete records, 12 files counted as left out."""
    _, job = profile(
        [str(prog("posix_mixed")), str(tmp_path)],
        tmp_path / "p",
        extra_env={"IOLAB_TRACE_MAX_RECORDS": "5"},
    )
    assert len([r for r in job.rows() if r.module == "POSIX"]) == 5
    assert record(job, "POSIX", "mixed_main.dat").counters["POSIX_READS"] == 12000
    assert "POSIX" in job.partial_modules
    assert any("12 POSIX left out" in n for n in job.notes)


def test_stdio_formatted_character_and_fileno(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile([str(prog("stdio_mix")), str(tmp_path / "mix.txt")], tmp_path / "p")
    s = record(job, "STDIO", "mix.txt")
    assert ints_except_time(s) == _expected(
        "STDIO",
        OPENS=1,
        WRITES=11,
        BYTES_WRITTEN=540,
        MAX_BYTE_WRITTEN=539,
        FLUSHES=1,
        FORMATTED_WRITES=3,
        CHAR_WRITES=7,
        SEEKS=2,
        READS=5,
        BYTES_READ=109,
        MAX_BYTE_READ=99,
        CHAR_READS=4,
    )
    p = record(job, "POSIX", "mix.txt")  # fsync(fileno(f)) goes through POSIX
    blk = os.stat(tmp_path / "mix.txt").st_blksize
    assert ints_except_time(p) == _expected(
        "POSIX", OPENS=1, FILENOS=1, FSYNCS=1, MEM_ALIGNMENT=8, FILE_ALIGNMENT=blk
    )


def test_stdio_freopen(prog: Callable[[str], Path], tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    _, job = profile([str(prog("stdio_freopen")), str(a), str(b)], tmp_path / "p")
    assert a.read_text() == "one\nthree\n" and b.read_text() == "two!\n"
    ra, rb = record(job, "STDIO", "a.txt"), record(job, "STDIO", "b.txt")
    assert [ra.counters[f"STDIO_{k}"] for k in ("OPENS", "WRITES", "BYTES_WRITTEN")] == [2, 2, 10]
    assert [rb.counters[f"STDIO_{k}"] for k in ("OPENS", "WRITES", "BYTES_WRITTEN")] == [1, 1, 5]


@pytest.mark.parametrize("how", ["np", "singleton"])
def test_mpiio_strided_mpich(tmp_path: Path, how: str) -> None:
    """A program built with mpicc.mpich gets the MPICH shim (libiolab-trace-mpi-mpich.so),
    chosen from its DT_NEEDED libmpich (singleton run) or from --mpi mpich (under
    mpirun.mpich): exact MPI-IO counters, like the Open MPI case."""
    if shutil.which("mpicc.mpich") is None or shutil.which("mpirun.mpich") is None:
        pytest.skip("MPICH is not installed")
    if not (LIBDIR.parents[2] / "mpich" / "interpose" / "trace" / SHIM_MPICH).is_file():
        pytest.skip(f"{SHIM_MPICH} is not built (./setup builds it in build/mpich)")
    exe = tmp_path / "mpi_strided_mpich"
    subprocess.run(["mpicc.mpich", "-O2", "-o", str(exe), str(PROGS / "mpi_strided.c")], check=True)
    n, ranks = 128, (4 if how == "np" else 1)
    _, job = profile(
        [str(exe), str(tmp_path / "m.dat"), str(n), "4096", "coll"],
        tmp_path / "p",
        np=ranks if how == "np" else None,
        mpi="mpich",
    )
    m = record(job, "MPI-IO", "m.dat")
    assert job.nprocs == ranks and m.rank == (-1 if ranks > 1 else 0)
    assert ints_except_time(m) == _expected(
        "MPI-IO",
        **({"COLL_OPENS": ranks} if ranks > 1 else {"INDEP_OPENS": 1}),  # as Darshan: by size
        MODE=5,
        BYTES_WRITTEN=ranks * n * 4096,
        COLL_WRITES=ranks * n,
        SIZE_WRITE_AGG_1K_10K=ranks * n,
        ACCESS1_ACCESS=4096,
        ACCESS1_COUNT=ranks * n,
    )
    assert "romio_cb_write" in job.metadata[f"hints:{tmp_path}/m.dat"]  # MPICH's ROMIO hints
    p = record(job, "POSIX", "m.dat")  # what ROMIO wrote below, reduced over the ranks
    assert p.counters["POSIX_BYTES_WRITTEN"] == ranks * n * 4096


def _std(job: RawJob, name: str) -> dict[str, int]:
    found = [r for r in job.rows() if r.module == "STDIO" and r.path == name]
    assert len(found) == 1, name
    return ints_except_time(found[0])


def test_stdio_standard_streams_scanf_getline_rename(
    prog: Callable[[str], Path], tmp_path: Path
) -> None:
    """<STDIN>/<STDOUT>/<STDERR> records as Darshan's (opened at start, kept when used);
    printf/puts/putchar/fputs_unlocked, fscanf/getline/fsetpos; rename and renameat."""
    run, job = profile([str(prog("stdio_std")), str(tmp_path)], tmp_path / "p", stdin_text="7 z")
    assert run.stdout == "42 items\nhello\nxab\n" and run.stderr == "warn me\n"
    assert _std(job, "<STDOUT>") == _expected(
        "STDIO",
        OPENS=1,
        WRITES=4,
        BYTES_WRITTEN=19,
        MAX_BYTE_WRITTEN=18,
        FORMATTED_WRITES=1,
        CHAR_WRITES=3,
    )
    assert _std(job, "<STDERR>") == _expected(
        "STDIO", OPENS=1, WRITES=1, BYTES_WRITTEN=8, MAX_BYTE_WRITTEN=7, FORMATTED_WRITES=1
    )
    assert _std(job, "<STDIN>") == _expected(
        "STDIO", OPENS=1, READS=2, BYTES_READ=1, FORMATTED_READS=1, CHAR_READS=1
    )
    assert ints_except_time(record(job, "STDIO", "data.txt")) == _expected(
        "STDIO",
        OPENS=2,
        WRITES=1,
        BYTES_WRITTEN=15,
        MAX_BYTE_WRITTEN=14,
        FORMATTED_WRITES=1,
        READS=4,
        BYTES_READ=20,
        MAX_BYTE_READ=14,
        FORMATTED_READS=1,
        CHAR_READS=2,
        SEEKS=1,
    )
    blk = os.stat(tmp_path / "c.dat").st_blksize
    posix = {Path(r.path).name: r for r in job.rows() if r.module == "POSIX"}
    assert set(posix) == {"a.dat", "b.dat", "c.dat", "x.dat"}  # 2 x.dat: one per folder
    rel = {r.path: r.counters["POSIX_BYTES_WRITTEN"] for r in job.rows() if "x.dat" in r.path}
    assert rel == {f"{tmp_path}/x.dat": 1, f"{tmp_path}/sub/x.dat": 2}
    base = {"MEM_ALIGNMENT": 8, "FILE_ALIGNMENT": blk}
    assert ints_except_time(posix["a.dat"]) == _expected(
        "POSIX",
        OPENS=1,
        MODE=0o644,
        WRITES=1,
        BYTES_WRITTEN=5,
        MAX_BYTE_WRITTEN=4,
        SIZE_WRITE_0_100=1,
        ACCESS1_ACCESS=5,
        ACCESS1_COUNT=1,
        RENAME_SOURCES=1,
        **base,
    )
    ids = [posix[n].record_id for n in ("a.dat", "b.dat")]  # stored as a signed counter
    signed = [i - (1 << 64) if i >= 1 << 63 else i for i in ids]
    assert ints_except_time(posix["b.dat"]) == _expected(
        "POSIX", RENAME_SOURCES=1, RENAME_TARGETS=1, RENAMED_FROM=signed[0], **base
    )
    assert ints_except_time(posix["c.dat"]) == _expected(
        "POSIX", RENAME_TARGETS=1, RENAMED_FROM=signed[1], **base
    )
