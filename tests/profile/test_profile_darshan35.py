"""Agreement with Darshan 3.5 on the logs kept in the repository (tests/profile/darshan/, each
program, build, run and environment in its README.md): the same program traced by iolab gives
the same counters as Darshan's runtime gave, except those named here with the reason.
Unlike test_profile_darshan.py, nothing outside the repository is needed.

Fortran (``mpif.h``, ``use mpi``, ``use mpi_f08``) and C++ MPI-IO programs, under Open MPI and
MPICH: expected / was: Fortran and C++ programs had no MPI-IO record at all (issue #9). HDF5
(C and Fortran) and PnetCDF programs, every layer: expected / was: an H5S_ALL read counted as a
regular hyperslab selection (Darshan counts none).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from darshan_helpers import (
    MPIIO_DIFFER,
    PARSER_MISSING,
    POSIX_DIFFER,
    PREFIX,
    SHARED_POSIX_DIFFER,
    VARIED_DIFFER,
    assert_all_agree,
    darshan_parser,
    darshan_records,
    mpi_version_differs,
    run_darshan_parser,
)
from test_profile_hdf5 import H5
from test_profile_hdf5 import _build as build_hdf5
from test_profile_mpi_languages import NP, PROGRAMS, SHIM_MPICH, _build
from test_profile_pnetcdf import _build as build_pnetcdf
from trace_helpers import PROGS, profile, record

HERE_LOGS = Path(__file__).resolve().parent / "darshan"
darshan = pytest.importorskip("darshan")

# The kept logs' names: mpiio_<program>_<MPI library>.darshan.
LOG_PROGRAM = {
    "fortran-mpif.h": "fortran_mpifh",
    "fortran-use-mpi": "fortran_usempi",
    "fortran-mpi_f08": "fortran_f08",
    "c++": "cxx",
}
# Every integer counter of Darshan's records is compared, except those darshan_helpers names
# with the reason (timing, what Darshan 3.5 misses) and those a test names itself. In the
# Fortran and C++ MPI-IO programs every access is 800 B and every rank moves the same bytes,
# so *_MAX_{READ,WRITE}_TIME_SIZE and *_{FASTEST,SLOWEST}_RANK_BYTES are exact there too.


def _c_compiler_or_skip(mpi: str) -> str:
    """The MPI C compiler of ``mpi``; skips when the logs' MPI version, the compiler or the
    MPICH shim is missing here."""
    if why := mpi_version_differs(mpi):
        pytest.skip(why)
    cc = {"openmpi": "mpicc", "mpich": "mpicc.mpich"}[mpi]
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    if mpi == "mpich" and not SHIM_MPICH.is_file():
        pytest.skip(f"{SHIM_MPICH.name} is not built (./setup builds it in build/mpich)")
    return cc


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
@pytest.mark.parametrize("kind", list(PROGRAMS))
def test_mpiio_program_any_language(kind: str, mpi: str, tmp_path: Path) -> None:
    """Each rank: 2 independent, 1 collective, 1 non-blocking write and 1 read of each kind
    of 800 B on a shared file (mpi_fortran_io.F90, mpi_cxx_io.cpp): the shared file's
    MPI-IO record and the POSIX record of what the MPI library did below, reduced over the
    ranks, equal Darshan 3.5's counter for counter."""
    if why := mpi_version_differs(mpi):
        pytest.skip(why)
    log = HERE_LOGS / f"mpiio_{LOG_PROGRAM[kind]}_{mpi}.darshan"
    exe = _build(kind, mpi, tmp_path)
    data = tmp_path / "shared.dat"
    _, job = profile([str(exe), str(data)], tmp_path / "p", np=NP,
                     mpi="mpich" if mpi == "mpich" else None)
    assert job.nprocs == NP
    theirs = {m: c for m, rk, p, c in darshan_records(log) if p.endswith("/shared.dat")}
    assert sorted((m, c["rank"]) for m, c in theirs.items()) == [("MPI-IO", -1), ("POSIX", -1)]
    mpiio, posix = record(job, "MPI-IO", "shared.dat"), record(job, "POSIX", "shared.dat")
    assert mpiio.rank == posix.rank == -1
    assert_all_agree(mpiio, theirs["MPI-IO"], MPIIO_DIFFER)
    assert_all_agree(posix, theirs["POSIX"], SHARED_POSIX_DIFFER)
    assert theirs["POSIX"]["POSIX_STATS"] <= posix.counters["POSIX_STATS"]
    # The program's own numbers, so that agreeing on a wrong log cannot pass.
    assert mpiio.counters["MPIIO_BYTES_WRITTEN"] == 4 * 800 * NP
    assert mpiio.counters["MPIIO_NB_READS"] == mpiio.counters["MPIIO_INDEP_READS"] == NP


def test_stdio_standard_streams_formatted_rename(
    prog: Callable[[str], Path], tmp_path: Path
) -> None:
    """<STDOUT>/<STDERR> (printf, fflush, fprintf to stderr), fprintf/fputs/fscanf/fgets/
    fsetpos/fread on a file, rename(): every STDIO and POSIX counter (with the rename ones)
    equal those of Darshan 3.5's log of the same program (darshan/README.md)."""
    run, job = profile([str(prog("stdio_darshan")), str(tmp_path)], tmp_path / "p")
    assert run.stdout == "answer: 42\n002.5\n" and run.stderr == "to stderr\n"
    theirs = {
        (m, p.rsplit("/", 1)[-1]): c
        for m, _, p, c in darshan_records(HERE_LOGS / "stdio_darshan.darshan")
    }
    ours = {(r.module, r.path.rsplit("/", 1)[-1]): r for r in job.rows()}
    assert (
        set(ours)
        == set(theirs)
        == {
            ("STDIO", "<STDOUT>"),
            ("STDIO", "<STDERR>"),
            ("STDIO", "text.txt"),
            ("POSIX", "old.dat"),
            ("POSIX", "new.dat"),
        }
    )
    # POSIX_RENAMED_FROM holds old.dat's record id, a hash of its path: the log's folder
    # differs, so the id is checked against each side's own old.dat record instead.
    renamed = "the record id of old.dat's path (another folder)"
    for (mod, name), rec in ours.items():
        differ = {"POSIX_MMAPS": POSIX_DIFFER["POSIX_MMAPS"], "POSIX_RENAMED_FROM": renamed}
        assert_all_agree(rec, theirs[(mod, name)], differ)
    u64 = (1 << 64) - 1  # ids in counters are signed, record ids unsigned
    old_id = record(job, "POSIX", "old.dat").record_id
    assert ours[("POSIX", "new.dat")].counters["POSIX_RENAMED_FROM"] & u64 == old_id & u64
    with darshan.DarshanReport(str(HERE_LOGS / "stdio_darshan.darshan"), read_all=True) as rep:
        their_old = next(i for i, n in rep.name_records.items() if n.endswith("/old.dat"))
    assert theirs[("POSIX", "new.dat")]["POSIX_RENAMED_FROM"] & u64 == their_old & u64


H5_LAYER = {"H5F": ["rw.h5"], "H5D": ["rw.h5:/grid"]}
LAYER_PROGRAMS = [
    # (log, program, MPI library, data file, the layer's records: module -> names)
    ("hdf5_rw_openmpi", "mpi_hdf5_rw", "openmpi", "rw.h5", H5_LAYER),
    ("hdf5_rw_mpich", "mpi_hdf5_rw", "mpich", "rw.h5", H5_LAYER),
    ("pnetcdf_rw_openmpi", "mpi_pnetcdf_rw", "openmpi", "rw.nc",
     {"PNETCDF_FILE": ["rw.nc"], "PNETCDF_VAR": ["rw.nc:grid", "rw.nc:series"]}),
    ("hdf5_fortran_openmpi", "mpi_hdf5_fortran", "openmpi", "field.h5",
     {"H5F": ["field.h5"], "H5D": ["field.h5:/field"]}),
    ("hdf5_fortran_mpich", "mpi_hdf5_fortran", "mpich", "field.h5",
     {"H5F": ["field.h5"], "H5D": ["field.h5:/field"]}),
]


def _build_hdf5_fortran(mpi: str, outdir: Path) -> Path:
    """mpi_hdf5_fortran.F90 with h5pfc -shlib: linked to the shared HDF5 (h5pfc's default
    on Debian is the static one, which no preloaded library, Darshan's either, can wrap)."""
    h5pfc = f"h5pfc.{mpi}"
    mod = Path(f"/usr/include/hdf5/{mpi}/hdf5.mod")
    if shutil.which(h5pfc) is None or not mod.is_file():
        pytest.skip(f"{h5pfc} or the Fortran HDF5 for {mpi} is not installed")
    shim_lib = H5[mpi][2]
    if not shim_lib.is_file():
        pytest.skip(f"{shim_lib.name} is not built (./setup)")
    exe = outdir / f"mpi_hdf5_fortran-{mpi}"
    subprocess.run([h5pfc, "-shlib", "-O2", "-o", str(exe), str(PROGS / "mpi_hdf5_fortran.F90")],
                   check=True, cwd=outdir)
    return exe


@pytest.mark.parametrize(
    "log, name, mpi, file, layer", LAYER_PROGRAMS, ids=[p[0] for p in LAYER_PROGRAMS]
)
def test_hdf5_and_pnetcdf_programs_every_layer(
    log: str, name: str, mpi: str, file: str, layer: dict[str, list[str]], tmp_path: Path
) -> None:
    """mpi_hdf5_rw.c (collective and independent hyperslabs, H5S_ALL, points, reopen),
    mpi_pnetcdf_rw.c (blocking and non-blocking, var/var1/vara/vars/varn, a record variable)
    and mpi_hdf5_fortran.F90 (HDF5's Fortran bindings) on 2 ranks: the library layer's
    records (H5F/H5D, PNETCDF_FILE/PNETCDF_VAR) and the MPI-IO and POSIX records of its file
    equal Darshan 3.5's counter for counter."""
    if why := mpi_version_differs(mpi):
        pytest.skip(why)
    if name == "mpi_hdf5_rw":
        exe = build_hdf5(name, mpi, tmp_path)
    elif name == "mpi_hdf5_fortran":
        exe = _build_hdf5_fortran(mpi, tmp_path)
    else:
        exe = build_pnetcdf(name, tmp_path)
    _, job = profile([str(exe), str(tmp_path / file)], tmp_path / "p", np=NP,
                     mpi="mpich" if mpi == "mpich" else None)
    mods = ("POSIX", "MPI-IO", *layer)
    theirs = {
        (m, p[p.index(f"/{file}") + 1:]): c  # rw.h5, rw.h5:/grid: the name past the folder
        for m, rk, p, c in darshan_records(HERE_LOGS / f"{log}.darshan", mods)
        if p.endswith("/" + file) or f"/{file}:" in p
    }
    want = {("POSIX", file), ("MPI-IO", file), *((m, n) for m, ns in layer.items() for n in ns)}
    assert set(theirs) == want
    for mod, fname in sorted(want):
        ours = record(job, mod, fname)
        assert ours.rank == theirs[(mod, fname)]["rank"] == -1
        assert_all_agree(ours, theirs[(mod, fname)], VARIED_DIFFER)
    posix = record(job, "POSIX", file).counters["POSIX_STATS"]
    assert theirs[("POSIX", file)]["POSIX_STATS"] <= posix
    if name == "mpi_hdf5_fortran":  # the program's own numbers: 4 x 64 doubles per rank
        h5d = record(job, "H5D", "field.h5:/field").counters
        assert (h5d["H5D_WRITES"], h5d["H5D_BYTES_WRITTEN"]) == (NP, NP * 2048)
        assert (h5d["H5D_READS"], h5d["H5D_BYTES_READ"]) == (2 * NP, NP * (2048 + NP * 2048))


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_mpiio_every_kind_of_call(mpi: str, tmp_path: Path) -> None:
    """mpi_io_kinds.c: split collectives, ordered and shared-pointer calls, individual-pointer
    blocking and non-blocking (also collective) calls, a view and hints, syncs, on 2 ranks:
    every MPI-IO and POSIX counter of the shared file equal to Darshan 3.5's.
    Expected / was: hints given with MPI_File_set_view were not counted (MPIIO_HINTS lacked
    the 2 views' hints Darshan counts; set_info's 2 made the totals look equal)."""
    cc = _c_compiler_or_skip(mpi)
    exe = tmp_path / "mpi_io_kinds"
    subprocess.run([cc, "-O2", "-o", str(exe), str(PROGS / "mpi_io_kinds.c")], check=True)
    _, job = profile([str(exe), str(tmp_path / "kinds.dat")], tmp_path / "p", np=NP,
                     mpi="mpich" if mpi == "mpich" else None)
    log = HERE_LOGS / f"mpiio_kinds_{mpi}.darshan"
    theirs = {m: c for m, rk, p, c in darshan_records(log) if p.endswith("/kinds.dat")}
    mpiio, posix = record(job, "MPI-IO", "kinds.dat"), record(job, "POSIX", "kinds.dat")
    # iolab counts MPI_File_set_info's hints too (one call per rank); Darshan 3.5 has no
    # wrapper for it.
    set_info = "Darshan 3.5 does not wrap MPI_File_set_info"
    assert_all_agree(mpiio, theirs["MPI-IO"], {**VARIED_DIFFER, "MPIIO_HINTS": set_info})
    assert mpiio.counters["MPIIO_HINTS"] == theirs["MPI-IO"]["MPIIO_HINTS"] + NP
    assert_all_agree(posix, theirs["POSIX"], VARIED_DIFFER)
    c = mpiio.counters  # the program's own numbers
    assert [c[f"MPIIO_{k}"] for k in ("SPLIT_WRITES", "SPLIT_READS", "NB_WRITES", "NB_READS",
                                      "VIEWS", "SYNCS")] == [3 * NP, 3 * NP, 3 * NP, 4 * NP,
                                                             NP, 2 * NP]


def test_fortran_serial_io(tmp_path: Path) -> None:
    """Plain Fortran I/O (fortran_io.f90: an unformatted stream file written, rewound and
    read; a formatted text file written, reopened and read), through gfortran's runtime and
    its buffers: the POSIX records equal Darshan 3.5's (run with DARSHAN_ENABLE_NONMPI=1)."""
    if shutil.which("gfortran") is None:
        pytest.skip("gfortran is not installed")
    exe = tmp_path / "fortran_io"
    subprocess.run(["gfortran", "-O2", "-o", str(exe), str(PROGS / "fortran_io.f90")],
                   check=True, cwd=tmp_path)
    (tmp_path / "d").mkdir()
    # (GFORTRAN_*_BUFFER_SIZE would change what reaches POSIX: the log was made without)
    _, job = profile([str(exe), str(tmp_path / "d")], tmp_path / "p")
    theirs = {
        (m, p.rsplit("/", 1)[-1]): c
        for m, _, p, c in darshan_records(HERE_LOGS / "fortran_io.darshan")
    }
    ours = {(r.module, r.path.rsplit("/", 1)[-1]): r for r in job.rows()}
    assert set(ours) == set(theirs) == {("POSIX", "f_stream.dat"), ("POSIX", "f_text.txt")}
    # The text file is read with a 1000-byte read and a 0-byte read at its end: which of the
    # two was slower is timing (seen under load: iolab 0, Darshan 1000); it must be one of them.
    eof = "timing: the slower of a 1000-byte read and the 0-byte read at the end of the file"
    for key, rec in ours.items():
        differ = {**POSIX_DIFFER, "POSIX_MAX_READ_TIME_SIZE": eof} \
            if key[1] == "f_text.txt" else POSIX_DIFFER
        assert_all_agree(rec, theirs[key], differ)
        assert theirs[key]["POSIX_STATS"] <= rec.counters["POSIX_STATS"]
    assert ours[("POSIX", "f_text.txt")].counters["POSIX_MAX_READ_TIME_SIZE"] in (0, 1000)
    stream = ours[("POSIX", "f_stream.dat")].counters  # the program's own bytes
    assert stream["POSIX_BYTES_WRITTEN"] == stream["POSIX_BYTES_READ"] == 100 * 800


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_mpiio_files_of_some_ranks(mpi: str, tmp_path: Path) -> None:
    """mpi_subsets.c on 3 ranks: a file opened by every rank is reduced to one record
    (rank -1), a file of 2 ranks' sub-communicator and each rank's MPI_COMM_SELF file stay
    per rank, as in Darshan 3.5's log; every MPI-IO and POSIX counter of each equal."""
    cc = _c_compiler_or_skip(mpi)
    exe, data = tmp_path / "mpi_subsets", tmp_path / "d"
    subprocess.run([cc, "-O2", "-o", str(exe), str(PROGS / "mpi_subsets.c")], check=True)
    data.mkdir()
    _, job = profile([str(exe), str(data)], tmp_path / "p", np=3,
                     mpi="mpich" if mpi == "mpich" else None)
    names = {"sub.dat", "all.dat", "self0.dat", "self1.dat", "self2.dat"}
    theirs = {
        (m, p.rsplit("/", 1)[-1], rk): c
        for m, rk, p, c in darshan_records(HERE_LOGS / f"mpiio_subsets_{mpi}.darshan")
        if p.rsplit("/", 1)[-1] in names
    }
    ours = {(r.module, r.path.rsplit("/", 1)[-1], r.rank): r for r in job.rows()
            if r.path.startswith(f"{data}/") and r.path.rsplit("/", 1)[-1] in names}
    assert set(ours) == set(theirs)
    assert {(n, rk) for m, n, rk in theirs if m == "MPI-IO"} == {
        ("all.dat", -1), ("sub.dat", 0), ("sub.dat", 1),
        ("self0.dat", 0), ("self1.dat", 1), ("self2.dat", 2)}
    for key, rec in ours.items():
        assert_all_agree(rec, theirs[key], {**MPIIO_DIFFER, **SHARED_POSIX_DIFFER})
        if key[0] == "POSIX":
            assert theirs[key]["POSIX_STATS"] <= rec.counters["POSIX_STATS"]


def test_cxx_streams(tmp_path: Path) -> None:
    """C++ fstream/ofstream/ifstream (cxx_streams.cpp): libstdc++ opens with fopen and moves
    the bytes with read/write/lseek on fileno(): the STDIO and POSIX records equal Darshan
    3.5's, except where Darshan is wrong.
    Expected / was: an ifstream reading a file an ofstream had written and closed seemed to
    read from the old end of the file on (iolab kept the record's offset across fileno() of a
    new descriptor, as Darshan does): POSIX_MAX_BYTE_READ 131071 on a 65536-byte file."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    exe = tmp_path / "cxx_streams"
    subprocess.run(["g++", "-O2", "-o", str(exe), str(PROGS / "cxx_streams.cpp")], check=True)
    (tmp_path / "d").mkdir()
    _, job = profile([str(exe), str(tmp_path / "d")], tmp_path / "p")
    theirs = {
        (m, p.rsplit("/", 1)[-1]): c
        for m, _, p, c in darshan_records(HERE_LOGS / "cxx_streams.darshan")
        if "/cxx_" in p
    }
    ours = {(r.module, r.path.rsplit("/", 1)[-1]): r for r in job.rows()}
    names = ("cxx_rw.dat", "cxx_text.txt", "cxx_again.dat")
    assert set(ours) == set(theirs) == {(m, n) for m in ("STDIO", "POSIX") for n in names}
    # Darshan keeps the record's offset when fileno() maps the ifstream's new descriptor, so
    # its reads of cxx_again.dat seem to start at 65536 (and the first one to be sequential).
    darshan_offset = {"POSIX_MAX_BYTE_READ": "Darshan 3.5's stale offset",
                      "POSIX_SEQ_READS": "Darshan 3.5's stale offset"}
    for (mod, name), rec in ours.items():
        differ = {**VARIED_DIFFER, **(darshan_offset if name == "cxx_again.dat" else {})}
        assert_all_agree(rec, theirs[(mod, name)], differ)
    again = ours[("POSIX", "cxx_again.dat")].counters
    theirs_again = theirs[("POSIX", "cxx_again.dat")]
    assert again["POSIX_MAX_BYTE_READ"] == 16 * 4096 - 1 != theirs_again["POSIX_MAX_BYTE_READ"]
    assert again["POSIX_SEQ_READS"] == theirs_again["POSIX_SEQ_READS"] - 1


@pytest.mark.parametrize("log", sorted(p.name for p in HERE_LOGS.glob("*.darshan")))
def test_darshan_parser_output_read_as_pydarshan(log: str) -> None:
    """The darshan-parser text reader of darshan_helpers (used on iolab's --darshan logs)
    gives, on Darshan 3.5's own logs, every record and integer counter pydarshan gives."""
    parser = darshan_parser()
    if parser is None:
        pytest.skip(PARSER_MISSING)
    printed = run_darshan_parser(parser, HERE_LOGS / log)
    py = darshan_records(HERE_LOGS / log, tuple(PREFIX))
    assert {(m, rk, n) for m, rk, _, n in printed if m in PREFIX} == {
        (m, rk, n) for m, rk, n, _ in py}
    by_key = {(m, rk, n): c for (m, rk, _, n), c in printed.items()}
    u64 = (1 << 64) - 1  # ids in counters (POSIX_RENAMED_FROM): signed in pydarshan
    for mod, rank, name, counters in py:
        got = by_key[(mod, rank, name)]
        assert {k: v & u64 for k, v in counters.items() if k not in ("id", "rank")} == {
            k: v & u64 for k, v in got.items()
            if isinstance(v, int) and not k.endswith("_FILE_REC_ID")}


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_trace_segments_as_darshan_dxt(mpi: str, tmp_path: Path) -> None:
    """iolab profile --trace of mpi_fortran_io.F90 (mpif.h) gives the segments (rank,
    operation, offset, length) of Darshan 3.5's DXT_POSIX and DXT_MPIIO of the same run
    (DXT_ENABLE_IO_TRACE=1). MPI-IO offsets are file bytes through the view, as Darshan's
    under MPICH; under Open MPI Darshan records -1 (it does not call
    MPI_File_get_byte_offset there): iolab's are then checked against the program's blocks.
    Expected / was: iolab's MPI-IO segments held the explicit offset in etypes of the view,
    and -1 for the individual and shared file pointers."""
    from iolab.sources.darshan import load_darshan_log

    if why := mpi_version_differs(mpi):
        pytest.skip(why)
    exe = _build("fortran-mpif.h", mpi, tmp_path)
    data = tmp_path / "shared.dat"
    _, job = profile([str(exe), str(data)], tmp_path / "p", np=NP, trace=True,
                     mpi="mpich" if mpi == "mpich" else None)
    dxt = load_darshan_log(HERE_LOGS / f"mpiio_fortran_mpifh_{mpi}_dxt.darshan")

    def segments(j: Any, module: str) -> list[tuple[int, str, int, int]]:
        return sorted((s.rank, s.op, s.offset, s.length) for s in j.segments()
                      if s.module == module and s.path.endswith("/shared.dat"))

    assert segments(job, "DXT_POSIX") == segments(dxt, "DXT_POSIX")
    ours = segments(job, "DXT_MPIIO")
    # block b of rank r at (b * NP + r) * 800: 4 written, 3 read back, per rank
    blocks = sorted((r, op, (b * NP + r) * 800, 800) for r in range(NP)
                    for op, n in (("write", 4), ("read", 3)) for b in range(n))
    assert ours == blocks
    if mpi == "openmpi":
        assert segments(dxt, "DXT_MPIIO") == sorted((r, op, -1, n) for r, op, _, n in blocks)
    else:
        assert segments(dxt, "DXT_MPIIO") == ours
