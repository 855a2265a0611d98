"""The HDF5 layer (libiolab-trace-hdf5*.so): Darshan's H5F and H5D counters, exact on a
program that makes every kind of access, under Open MPI's and MPICH's HDF5; equal to Darshan
3.5's log of the same program; the job model links the layer to the file's MPI-IO and POSIX
records (names against pydarshan's: test_profile_counters.py).

Expected / was: HDF5 calls were invisible (no H5F/H5D records), so the library layer of a job
could not be diagnosed from an iolab profile.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import corpus
import pytest
from trace_helpers import LIBDIR, PROGS, build_once, profile, record

LOGS = corpus.GENERATED_DIR  # the one corpus setting (tests/corpus.py)
H5 = {
    "openmpi": ("mpicc", "openmpi", LIBDIR / "libiolab-trace-hdf5.so"),
    "mpich": (
        "mpicc.mpich",
        "mpich",
        LIBDIR.parents[2] / "mpich" / "interpose" / "trace" / "libiolab-trace-hdf5-mpich.so",
    ),
}
TIMING = ("FASTEST_RANK", "SLOWEST_RANK")


def _build(name: str, mpi: str, outdir: Path) -> Path:
    cc, flavour, shim_lib = H5[mpi]
    inc = Path(f"/usr/include/hdf5/{flavour}")
    lib = Path(f"/usr/lib/x86_64-linux-gnu/hdf5/{flavour}")
    if shutil.which(cc) is None or not inc.is_dir():
        pytest.skip(f"{cc} or parallel HDF5 for {flavour} is not installed")
    if not shim_lib.is_file():
        pytest.skip(f"{shim_lib.name} is not built (./setup)")
    exe = outdir / f"{name}-{mpi}"

    def make() -> Path:
        subprocess.run([cc, "-O2", f"-I{inc}", "-o", str(exe), str(PROGS / f"{name}.c"),
                        f"-L{lib}", "-lhdf5"], check=True)
        return exe

    return build_once(("hdf5", name, mpi), make)


def _expected(
    np: int,
) -> tuple[dict[str, int], dict[str, int], dict[tuple[int, ...], int]]:
    """mpi_hdf5_rw.c on np ranks, reduced (rank -1): H5F and H5D counters, and the other
    common accesses ((size, lengths D5, D4, strides D5, D4) -> count)."""
    b = 4 * 256 * 4  # one rank's rows: 4096 B
    h5f = {"H5F_OPENS": 2 * np, "H5F_FLUSHES": np, "H5F_USE_MPIIO": 1}
    h5d = {
        "H5D_OPENS": 2 * np, "H5D_WRITES": 2 * np, "H5D_READS": 3 * np, "H5D_FLUSHES": 0,
        "H5D_BYTES_WRITTEN": np * (b + b // 2), "H5D_BYTES_READ": np * (np * b + 12 + b),
        "H5D_RW_SWITCHES": np, "H5D_REGULAR_HYPERSLAB_SELECTS": 3 * np,  # H5S_ALL: none
        "H5D_IRREGULAR_HYPERSLAB_SELECTS": 0, "H5D_POINT_SELECTS": np,
        "H5D_SIZE_WRITE_AGG_1K_10K": 2 * np, "H5D_SIZE_READ_AGG_0_100": np,
        "H5D_SIZE_READ_AGG_1K_10K": 2 * np if np * b <= 10240 else np,
        # (size, lengths, strides): the first dimension in D5, the second in D4
        "H5D_ACCESS1_ACCESS": b, "H5D_ACCESS1_LENGTH_D5": 4, "H5D_ACCESS1_LENGTH_D4": 256,
        "H5D_ACCESS1_STRIDE_D5": 1, "H5D_ACCESS1_STRIDE_D4": 1, "H5D_ACCESS1_COUNT": 2 * np,
        "H5D_DATASPACE_NDIMS": 2, "H5D_DATASPACE_NPOINTS": 4 * np * 256, "H5D_DATATYPE_SIZE": 4,
        "H5D_CHUNK_SIZE_D1": 64, "H5D_CHUNK_SIZE_D2": 4, "H5D_CHUNK_SIZE_D3": 0,
        "H5D_USE_MPIIO_COLLECTIVE": 1, "H5D_USE_DEPRECATED": 0,
    }
    others = {(np * b, 0, 0, 0, 0): np, (b // 2, 4, 128, 1, 2): np, (12, 0, 0, 0, 0): np}
    return h5f, h5d, others


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_hdf5_every_kind_of_access(mpi: str, tmp_path: Path) -> None:
    exe = _build("mpi_hdf5_rw", mpi, tmp_path)
    np = 2
    _, job = profile([str(exe), str(tmp_path / "rw.h5")], tmp_path / "p", np=np,
                     mpi="mpich" if mpi == "mpich" else None)
    want_f, want_d, others = _expected(np)
    f = record(job, "H5F", "rw.h5")
    d = record(job, "H5D", "rw.h5:/grid")
    assert f.rank == -1 and d.rank == -1
    assert {k: f.counters[k] for k in want_f} == want_f
    assert {k: d.counters[k] for k in want_d} == want_d
    got = {
        tuple(d.counters[f"H5D_ACCESS{i}_{k}"] for k in
              ("ACCESS", "LENGTH_D5", "LENGTH_D4", "STRIDE_D5", "STRIDE_D4")):
        d.counters[f"H5D_ACCESS{i}_COUNT"] for i in (2, 3, 4)
    }
    assert got == others
    # the layers below: the same file's MPI-IO and POSIX records
    assert record(job, "MPI-IO", "rw.h5").counters["MPIIO_COLL_OPENS"] == 2 * np
    assert record(job, "POSIX", "rw.h5").counters["POSIX_BYTES_WRITTEN"] > 0


def test_model_links_the_hdf5_layer(tmp_path: Path) -> None:
    """The job model puts H5F/H5D, MPI-IO and POSIX of rw.h5 on one file, HDF5 on top."""
    from iolab.model.job import build_model

    exe = _build("mpi_hdf5_rw", "openmpi", tmp_path)
    _, job = profile([str(exe), str(tmp_path / "rw.h5")], tmp_path / "p", np=2)
    model = build_model([job])
    assert model.metrics.top_layer == "HDF5"
    assert "HDF5" in model.metrics.ifaces and model.metrics.app_files == 1


def _darshan_h5(log: Path, mod: str) -> dict[str, Any]:
    import darshan

    with darshan.DarshanReport(str(log), read_all=True) as rep:
        rows = rep.records[mod].to_df()["counters"].to_dict("records")
    assert len(rows) == 1
    return {k: int(v) for k, v in rows[0].items() if k not in ("rank", "id")}


def test_hdf5_agrees_with_darshan_3_5(tmp_path: Path) -> None:
    """mpi_hdf5.c is the program of hdf5_4ranks_collective_hyperslab.darshan: every H5F and
    H5D integer counter equal, except which rank was fastest or slowest (timing)."""
    log = LOGS / "hdf5_4ranks_collective_hyperslab.darshan"
    if not log.is_file():
        pytest.skip(f"{log} is absent (the shared Darshan corpus)")
    exe = _build("mpi_hdf5", "openmpi", tmp_path)
    _, job = profile([str(exe), str(tmp_path / "h5_par.h5")], tmp_path / "p", np=4)
    for mod, name in (("H5F", "h5_par.h5"), ("H5D", "h5_par.h5:/data")):
        theirs = _darshan_h5(log, mod)
        ours = record(job, mod, name).counters
        diff = {k: (ours.get(k), v) for k, v in theirs.items()
                if not any(t in k for t in TIMING) and ours.get(k) != v}
        assert diff == {}, f"{mod}: (iolab, darshan) {diff}"
