"""Agreement with Darshan 3.5: the programs of ../shared/darshan-generated/README.md, traced by
iolab, give the counts, bytes, size bins, sequential/consecutive counts, common access sizes
and strides of the real Darshan logs (timing counters differ, of course)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import corpus
import pytest
from trace_helpers import profile, record

from iolab.model.raw import RawRecord

LOGS = corpus.GENERATED_DIR
corpus.require(real=False)
HERE_LOGS = Path(__file__).resolve().parent / "darshan"  # logs made for these tests
darshan = pytest.importorskip("darshan")

_BINS = [
    "0_100",
    "100_1K",
    "1K_10K",
    "10K_100K",
    "100K_1M",
    "1M_4M",
    "4M_10M",
    "10M_100M",
    "100M_1G",
    "1G_PLUS",
]
POSIX_COMPARED = (
    [
        "OPENS",
        "READS",
        "WRITES",
        "SEEKS",
        "FSYNCS",
        "FDSYNCS",
        "DUPS",
        "MODE",  # MMAPS: -1 (off) in Darshan
        "BYTES_READ",
        "BYTES_WRITTEN",
        "MAX_BYTE_READ",
        "MAX_BYTE_WRITTEN",
        "CONSEC_READS",
        "CONSEC_WRITES",
        "SEQ_READS",
        "SEQ_WRITES",
        "RW_SWITCHES",
        "MEM_NOT_ALIGNED",
        "FILE_NOT_ALIGNED",
        "FILE_ALIGNMENT",
    ]
    + [f"SIZE_{d}_{b}" for d in ("READ", "WRITE") for b in _BINS]
    + [
        f"{w}{i}_{k}"
        for w in ("ACCESS", "STRIDE")
        for i in range(1, 5)
        for k in (w if w == "ACCESS" else "STRIDE", "COUNT")
    ]
)
STDIO_COMPARED = [
    "OPENS",
    "FDOPENS",
    "READS",
    "WRITES",
    "SEEKS",
    "FLUSHES",
    "BYTES_READ",
    "BYTES_WRITTEN",
    "MAX_BYTE_READ",
    "MAX_BYTE_WRITTEN",
]
MPIIO_COMPARED = (
    [
        "INDEP_OPENS",
        "COLL_OPENS",
        "INDEP_READS",
        "INDEP_WRITES",
        "COLL_READS",
        "COLL_WRITES",
        "SPLIT_READS",
        "SPLIT_WRITES",
        "NB_READS",
        "NB_WRITES",
        "SYNCS",
        "VIEWS",
        "MODE",
        "BYTES_READ",
        "BYTES_WRITTEN",
        "RW_SWITCHES",
    ]
    + [f"SIZE_{d}_AGG_{b}" for d in ("READ", "WRITE") for b in _BINS]
    + [f"ACCESS{i}_{k}" for i in range(1, 5) for k in ("ACCESS", "COUNT")]
)


def darshan_records(log: str | Path) -> list[tuple[str, int, str, dict[str, Any]]]:
    """(module, rank, path, counters) of every POSIX/STDIO/MPI-IO record of a Darshan log
    (a name in ../shared/darshan-generated, or a path)."""
    out = []
    with darshan.DarshanReport(
        str(log if isinstance(log, Path) else LOGS / log), read_all=True
    ) as rep:
        for mod in ("POSIX", "STDIO", "MPI-IO"):
            if mod not in rep.records:
                continue
            coll = rep.records[mod]
            ids = [int(rec["id"]) for rec in coll]  # exact: the data frame holds them as floats
            rows = coll.to_df()["counters"].to_dict("records")
            for rid, row in zip(ids, rows):
                path = rep.name_records.get(rid, "")
                out.append((mod, int(row["rank"]), path, {k: int(v) for k, v in row.items()}))
    return out


def darshan_record(log: str, module: str, name: str) -> dict[str, Any]:
    found = [c for m, _, p, c in darshan_records(log) if m == module and p.endswith("/" + name)]
    assert len(found) == 1, f"{log}: {module} {name}"
    return found[0]


def assert_agree(ours: RawRecord, theirs: dict[str, Any], names: list[str], prefix: str) -> None:
    diff = {
        n: (ours.counters.get(f"{prefix}_{n}", 0), theirs[f"{prefix}_{n}"])
        for n in names
        if ours.counters.get(f"{prefix}_{n}", 0) != theirs[f"{prefix}_{n}"]
    }
    assert diff == {}, f"{ours.path}: counter: (iolab, darshan) {diff}"


def test_posix_write_1M_x_64B(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile(
        [str(prog("posix_write")), str(tmp_path / "p64.dat"), "1000000", "64"], tmp_path / "p"
    )
    assert_agree(
        record(job, "POSIX", "p64.dat"),
        darshan_record("posix_write_1M_x_64B.darshan", "POSIX", "p64.dat"),
        POSIX_COMPARED,
        "POSIX",
    )


def test_stdio_fwrite_2M_x_512B(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile(
        [str(prog("stdio_write")), str(tmp_path / "s512.dat"), "2000000", "512"], tmp_path / "p"
    )
    assert_agree(
        record(job, "STDIO", "s512.dat"),
        darshan_record("stdio_fwrite_2M_x_512B.darshan", "STDIO", "s512.dat"),
        STDIO_COMPARED,
        "STDIO",
    )
    assert not [r for r in job.rows() if r.module == "POSIX"]  # Darshan has none either
    # Darshan names <STDIN>/<STDOUT>/<STDERR> but drops their unused records: so does iolab
    log = "stdio_fwrite_2M_x_512B.darshan"
    theirs = sorted(p.rsplit("/", 1)[-1] for m, _, p, _ in darshan_records(log) if m == "STDIO")
    ours = sorted(r.path.rsplit("/", 1)[-1] for r in job.rows() if r.module == "STDIO")
    assert ours == theirs == ["s512.dat"]
    (tmp_path / "s512.dat").unlink()


def test_posix_mixed_random_reads(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile([str(prog("posix_mixed")), str(tmp_path)], tmp_path / "p")
    log = "posix_mixed_rw_random_reads.darshan"
    main = record(job, "POSIX", "mixed_main.dat")
    assert_agree(main, darshan_record(log, "POSIX", "mixed_main.dat"), POSIX_COMPARED, "POSIX")
    # Darshan 3.5 misses stat() on glibc >= 2.33 (it goes through fstatat/statx); iolab does not.
    assert darshan_record(log, "POSIX", "mixed_main.dat")["POSIX_STATS"] == 0
    assert main.counters["POSIX_STATS"] == 50
    for i in range(16):
        name = f"mixed_side_{i:02d}.txt"
        assert_agree(
            record(job, "POSIX", name), darshan_record(log, "POSIX", name), POSIX_COMPARED, "POSIX"
        )


@pytest.mark.parametrize("mode", ["coll", "indep"])
def test_mpiio_4ranks_strided_4KiB(prog: Callable[[str], Path], tmp_path: Path, mode: str) -> None:
    """4 ranks, 16,384 x 4 KiB each, strided; MPI-IO and the POSIX calls Open MPI makes below."""
    name = f"shared_{mode}.dat"
    _, job = profile(
        [str(prog("mpi_strided")), str(tmp_path / name), "16384", "4096", mode],
        tmp_path / "p",
        np=4,
    )
    log = f"mpiio_4ranks_strided4K_{mode}.darshan"
    theirs = [(m, rk, c) for m, rk, p, c in darshan_records(log) if p.endswith("/" + name)]
    assert sorted((m, rk) for m, rk, _ in theirs) == [("MPI-IO", -1), ("POSIX", -1)]
    assert job.nprocs == 4
    for mod, prefix, names in (
        ("MPI-IO", "MPIIO", MPIIO_COMPARED),
        ("POSIX", "POSIX", POSIX_COMPARED),
    ):
        ours = record(job, mod, name)
        assert ours.rank == -1
        # MODE of a reduced POSIX record depends on which rank created the file: not compared.
        assert_agree(
            ours,
            next(c for m, _, c in theirs if m == mod),
            [n for n in names if n != "MODE" or mod == "MPI-IO"],
            prefix,
        )
    (tmp_path / name).unlink()


HDF5 = ("-I/usr/include/hdf5/openmpi", "-L/usr/lib/x86_64-linux-gnu/hdf5/openmpi", "-lhdf5")


@pytest.mark.parametrize(
    "name, log, file, libs",
    [
        ("mpi_hdf5", "hdf5_4ranks_collective_hyperslab.darshan", "h5_par.h5", HDF5),
        ("mpi_pnetcdf", "pnetcdf_4ranks_coll_and_indep_vara.darshan", "pnc_par.nc", ("-lpnetcdf",)),
    ],
)
def test_mpiio_below_hdf5_and_pnetcdf(
    tmp_path: Path, name: str, log: str, file: str, libs: tuple[str, ...]
) -> None:
    """The MPI-IO and POSIX calls HDF5 and PnetCDF make (views, hints, metadata writes)."""
    import shutil
    import subprocess

    from trace_helpers import PROGS

    exe = tmp_path / name
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc is not installed")
    build = subprocess.run(
        ["mpicc", "-O2", "-o", str(exe), str(PROGS / f"{name}.c"), *libs],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.skip(f"{name}: library not installed ({build.stderr.strip()[:80]})")
    _, job = profile([str(exe), str(tmp_path / file)], tmp_path / "p", np=4)
    theirs = {m: c for m, rk, p, c in darshan_records(log) if p.endswith("/" + file)}
    for mod, prefix, names in (
        ("MPI-IO", "MPIIO", MPIIO_COMPARED),
        ("POSIX", "POSIX", POSIX_COMPARED),
    ):
        ours = record(job, mod, file)
        assert ours.rank == -1
        assert_agree(
            ours, theirs[mod], [n for n in names if n != "MODE" or mod == "MPI-IO"], prefix
        )
    assert record(job, "MPI-IO", file).counters["MPIIO_HINTS"] == theirs["MPI-IO"]["MPIIO_HINTS"]


def test_stdio_standard_streams_formatted_rename(
    prog: Callable[[str], Path], tmp_path: Path
) -> None:
    """<STDOUT>/<STDERR> (printf, fflush, fprintf to stderr), fprintf/fputs/fscanf/fgets/
    fsetpos/fread on a file, rename(): every STDIO counter and the POSIX counters (with the
    rename ones) equal those of Darshan 3.5's log of the same program (darshan/README.md)."""
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
    for (mod, name), rec in ours.items():
        if mod == "STDIO":
            assert_agree(rec, theirs[(mod, name)], STDIO_COMPARED, "STDIO")
        else:
            assert_agree(
                rec,
                theirs[(mod, name)],
                [*POSIX_COMPARED, "RENAME_SOURCES", "RENAME_TARGETS"],
                "POSIX",
            )
