"""Agreement with Darshan 3.5: the programs of ../shared/darshan-generated/README.md, traced by
iolab, give every integer counter of the real Darshan logs but those darshan_helpers names
with the reason (timing, what Darshan 3.5 misses). The logs kept in the
repository (tests/profile/darshan/) are compared in test_profile_darshan35.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import corpus
import pytest
from darshan_helpers import (
    MPIIO_DIFFER,
    POSIX_DIFFER,
    SHARED_POSIX_DIFFER,
    VARIED_DIFFER,
    assert_all_agree,
    darshan_records,
    timing_differ,
)
from trace_helpers import profile, record

LOGS = corpus.GENERATED_DIR
corpus.require(real=False)
darshan = pytest.importorskip("darshan")


def darshan_record(log: str, module: str, name: str) -> dict[str, Any]:
    found = [
        c for m, _, p, c in darshan_records(LOGS / log) if m == module and p.endswith("/" + name)
    ]
    assert len(found) == 1, f"{log}: {module} {name}"
    return found[0]


def test_posix_write_1M_x_64B(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile(
        [str(prog("posix_write")), str(tmp_path / "p64.dat"), "1000000", "64"], tmp_path / "p"
    )
    assert_all_agree(
        record(job, "POSIX", "p64.dat"),
        darshan_record("posix_write_1M_x_64B.darshan", "POSIX", "p64.dat"),
        POSIX_DIFFER,
    )


def test_stdio_fwrite_2M_x_512B(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile(
        [str(prog("stdio_write")), str(tmp_path / "s512.dat"), "2000000", "512"], tmp_path / "p"
    )
    assert_all_agree(
        record(job, "STDIO", "s512.dat"),
        darshan_record("stdio_fwrite_2M_x_512B.darshan", "STDIO", "s512.dat"),
        POSIX_DIFFER,
    )
    assert not [r for r in job.rows() if r.module == "POSIX"]  # Darshan has none either
    # Darshan names <STDIN>/<STDOUT>/<STDERR> but drops their unused records: so does iolab
    log = "stdio_fwrite_2M_x_512B.darshan"
    theirs = sorted(
        p.rsplit("/", 1)[-1] for m, _, p, _ in darshan_records(LOGS / log) if m == "STDIO"
    )
    ours = sorted(r.path.rsplit("/", 1)[-1] for r in job.rows() if r.module == "STDIO")
    assert ours == theirs == ["s512.dat"]
    (tmp_path / "s512.dat").unlink()


def test_posix_mixed_random_reads(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, job = profile([str(prog("posix_mixed")), str(tmp_path)], tmp_path / "p")
    log = "posix_mixed_rw_random_reads.darshan"
    main = record(job, "POSIX", "mixed_main.dat")
    # its reads are 4096 and 100 bytes: which one was slowest (MAX_READ_TIME_SIZE) is timing
    # (CI once saw 100 in iolab's run where the kept log has 4096)
    assert_all_agree(main, darshan_record(log, "POSIX", "mixed_main.dat"),
                     {**POSIX_DIFFER, **timing_differ(sizes=True)})
    # Darshan 3.5 misses stat() on glibc >= 2.33 (it goes through fstatat/statx); iolab does not.
    assert darshan_record(log, "POSIX", "mixed_main.dat")["POSIX_STATS"] == 0
    assert main.counters["POSIX_STATS"] == 50
    for i in range(16):
        name = f"mixed_side_{i:02d}.txt"
        # 100 writes of 10..109 B: which one was slowest is timing
        assert_all_agree(record(job, "POSIX", name), darshan_record(log, "POSIX", name),
                         VARIED_DIFFER)


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
    theirs = [(m, rk, c) for m, rk, p, c in darshan_records(LOGS / log) if p.endswith("/" + name)]
    assert sorted((m, rk) for m, rk, _ in theirs) == [("MPI-IO", -1), ("POSIX", -1)]
    assert job.nprocs == 4
    for mod, differ in (("MPI-IO", MPIIO_DIFFER), ("POSIX", SHARED_POSIX_DIFFER)):
        ours = record(job, mod, name)
        assert ours.rank == -1
        assert_all_agree(ours, next(c for m, _, c in theirs if m == mod), differ)
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
    theirs = {m: c for m, rk, p, c in darshan_records(LOGS / log) if p.endswith("/" + file)}
    for mod in ("MPI-IO", "POSIX"):
        ours = record(job, mod, file)
        assert ours.rank == -1
        assert_all_agree(ours, theirs[mod], VARIED_DIFFER)  # hints and views too

