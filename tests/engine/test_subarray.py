"""--layout subarray and --workload btio with real ranks: N-D arrays over uneven process
grids, written and read back with --verify through MPI-IO views (independent, collective),
HDF5 hyperslabs and PnetCDF vara (blocking and non-blocking, independent and collective data
mode), under Open MPI and MPICH; every file is checked byte by byte against what
array_model.py computes independently (owner of each element, pattern bytes); HDF5 files
are opened with h5py, PnetCDF files are CDF-5 with the array at their end; the bad inputs are
one line and exit 2.

Expected and was, for the record: before this layout existed an N-D decomposition could not
be measured at all (IOR's contiguous and strided patterns only)."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
from array_model import big_endian, block_owner, btio_owner, pattern_bytes
from engine_helpers import Engine, doc, run_engine, run_refused

# ranks, --grid, --pgrid (None: MPI_Dims_create): 1-4 dimensions, uneven pieces
CASES = [
    (1, "13", None),
    (2, "7x5", None),           # pgrid 2x1: rows 4 + 3
    (3, "5x4x3", None),         # pgrid 3x1x1: 2 + 2 + 1
    (4, "3x5x2x3", "1x2x2x1"),  # 5 -> 3 + 2
    (4, "6x5x4x3", None),       # pgrid 2x2x1x1: 6 -> 3 + 3, 5 -> 3 + 2
]

MODES = {
    "posix": ["--api", "posix"],
    "mpiio": ["--api", "mpiio"],
    "mpiio-coll": ["--api", "mpiio", "--collective"],
    "hdf5": ["--api", "hdf5"],
    "hdf5-coll": ["--api", "hdf5", "--collective"],
    "pnetcdf": ["--api", "pnetcdf"],
    "pnetcdf-coll": ["--api", "pnetcdf", "--collective"],
    "pnetcdf-nb": ["--api", "pnetcdf", "--pnetcdf.nonblocking"],
    "pnetcdf-nb-coll": ["--api", "pnetcdf", "--collective", "--pnetcdf.nonblocking"],
}


def needs(engine: Engine, mode: list[str]) -> None:
    api = mode[1]
    if api not in engine.apis:
        pytest.skip(f"api {api} is not built into {engine.binary.name}")


def run_array(engine: Engine, scratch: Path, np_: int, *extra: str) -> dict:
    r = run_engine(engine, np_, ["--path", str(scratch / "f"), "--verify", "--keep",
                                 "--quiet", *extra], scratch.parent)
    assert r.rc == 0, r.why()
    d = doc(r)
    assert d["status"] == "ok" and d["verify"]["errors"] == 0
    return d


def check_file(path: Path, api: str, owner: np.ndarray, elem: int) -> None:
    """The file holds the array: every element written by its owner, nothing else."""
    want = pattern_bytes(owner, elem)
    if api in ("posix", "mpiio"):
        assert path.read_bytes() == want
    elif api == "hdf5":
        with h5py.File(path, "r") as f:
            ds = f["data"]
            assert ds.shape == owner.shape and ds.dtype.itemsize == elem
            assert ds[()].tobytes() == want
    else:  # pnetcdf: CDF-5 header, then the one record variable's records to the end
        raw = path.read_bytes()
        assert raw[:4] == b"CDF\x05"
        assert 0 < len(raw) - len(want) < 65536
        assert raw[-len(want):] == big_endian(want, elem)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("np_,grid,pgrid", CASES)
def test_round_trip_and_file(engine: Engine, scratch: Path, np_: int, grid: str,
                             pgrid: str | None, mode: str):
    """--verify round trip with 1-4 ranks and 2 steps; bytes, calls and the file checked."""
    needs(engine, MODES[mode])
    extra = ["--pgrid", pgrid] if pgrid else []
    d = run_array(engine, scratch, np_, "--layout", "subarray", "--grid", grid, "--steps", "2",
                  *MODES[mode], *extra)
    dims = [int(x) for x in grid.split("x")]
    arr = d["config"]["array"]
    assert arr["dims"] == [2, *dims] and arr["decomposition"] == "block"
    assert np.prod(arr["pgrid"]) == np_ and arr["boxes_per_rank"] == 1
    if pgrid:
        assert arr["pgrid"] == [int(x) for x in pgrid.split("x")]
    total = 2 * int(np.prod(dims)) * 8
    assert d["config"]["total_bytes"] == total
    for op in ("write", "read"):
        (ph,) = [p for rep in d["repetitions"] for p in rep["phases"] if p["op"] == op]
        assert ph["bytes"] == total
        if mode != "posix":  # one call per rank and step; posix: one per contiguous run
            assert ph["ops"] == 2 * np_
    owner = block_owner(dims, arr["pgrid"], 2)
    check_file(scratch / "f", MODES[mode][1], owner, 8)


@pytest.mark.parametrize("mode,elem", [("mpiio-coll", 3), ("hdf5-coll", 4), ("hdf5", 2),
                                       ("pnetcdf-coll", 4), ("pnetcdf-nb", 1)])
def test_element_sizes(engine: Engine, scratch: Path, mode: str, elem: int):
    """Other element sizes: any for MPI-IO, the integer types for HDF5 and PnetCDF."""
    needs(engine, MODES[mode])
    d = run_array(engine, scratch, 3, "--layout", "subarray", "--grid", "4x7", "--elem",
                  str(elem), *MODES[mode])
    assert d["config"]["array"]["elem_bytes"] == elem
    check_file(scratch / "f", MODES[mode][1], block_owner([4, 7], d["config"]["array"]["pgrid"],
                                                          1), elem)


@pytest.mark.parametrize("mode", ["mpiio", "mpiio-coll", "hdf5-coll"])
def test_mpich(mpich_engine: Engine, scratch: Path, mode: str):
    """The same under MPICH (ROMIO's subarray views and two-phase collective I/O)."""
    needs(mpich_engine, MODES[mode])
    d = run_array(mpich_engine, scratch, 3, "--layout", "subarray", "--grid", "5x4x3",
                  "--steps", "2", *MODES[mode])
    check_file(scratch / "f", MODES[mode][1],
               block_owner([5, 4, 3], d["config"]["array"]["pgrid"], 2), 8)


def test_read_only_run_of_another_rank_count(engine: Engine, scratch: Path):
    """A file written by 4 ranks is read back and verified by 4 ranks with --reorder (each
    reads its neighbour's boxes)."""
    needs(engine, MODES["pnetcdf"])
    common = ["--layout", "subarray", "--grid", "6x5", "--api", "pnetcdf", "--steps", "3"]
    run_array(engine, scratch, 4, *common, "--write")
    d = run_array(engine, scratch, 4, *common, "--read", "--reorder", "--collective")
    (ph,) = d["repetitions"][0]["phases"]
    assert ph["op"] == "read" and ph["reorder_shift"] == 1 and ph["bytes"] == 3 * 30 * 8


BTIO = {
    "mpi-collective": ["--api", "mpiio", "--collective"],
    "mpi-independent": ["--api", "mpiio"],
    "pnetcdf-blocking": ["--api", "pnetcdf", "--collective"],
    "pnetcdf-nonblocking": ["--api", "pnetcdf", "--collective", "--pnetcdf.nonblocking"],
}


@pytest.mark.parametrize("method", list(BTIO))
@pytest.mark.parametrize("np_", [1, 4])
def test_btio_methods(engine: Engine, scratch: Path, np_: int, method: str):
    """BTIO's four methods with 1 and 4 ranks: q cells per rank per step, one call (MPI: a
    struct of subarray views; PnetCDF: a vara or iput per cell, then wait_all) per step;
    the file holds (time, z, y, x, 5) with each cell written by its owner."""
    needs(engine, BTIO[method])
    grid = [6, 5, 7]  # uneven over q = 2: 3+3, 3+2, 4+3
    d = run_array(engine, scratch, np_, "--workload", "btio", "--grid", "6x5x7", "--steps",
                  "2", *BTIO[method])
    arr = d["config"]["array"]
    q = int(np_ ** 0.5)
    assert arr["decomposition"] == "btio" and arr["dims"] == [2, 6, 5, 7, 5]
    assert arr["boxes_per_rank"] == q
    (w,) = [p for p in d["repetitions"][0]["phases"] if p["op"] == "write"]
    assert w["bytes"] == 2 * 6 * 5 * 7 * 5 * 8 and w["ops"] == 2 * np_
    check_file(scratch / "f", BTIO[method][1], btio_owner(grid, np_, 2), 8)


def test_btio_default_size(engine: Engine, scratch: Path):
    """The documented laptop default: NPB class A's 64^3 grid, 5 records (52 MB)."""
    r = run_engine(engine, 1, ["--workload", "btio", "--api", "null", "--quiet"],
                   scratch.parent)
    assert r.rc == 0, r.why()
    arr = doc(r)["config"]["array"]
    assert arr["dims"] == [5, 64, 64, 64, 5] and arr["steps"] == 5
    assert doc(r)["config"]["total_bytes"] == 5 * 64 ** 3 * 5 * 8


BAD = [
    (2, ["--layout", "subarray"], "needs --grid"),
    (2, ["--layout", "subarray", "--grid", "4x0"], "--grid 4x0"),
    (2, ["--layout", "subarray", "--grid", "4x4", "--pgrid", "3x1"], "--pgrid has 3 ranks"),
    (2, ["--layout", "subarray", "--grid", "4x4", "--pgrid", "2"], "give 2 whole numbers"),
    (4, ["--layout", "subarray", "--grid", "2x9", "--pgrid", "4x1"], "at least as many"),
    (3, ["--workload", "btio", "--grid", "6x6x6"], "square number of ranks"),
    (2, ["--layout", "fpp", "--grid", "4x4"], "add --layout subarray"),
    (2, ["--layout", "subarray", "--grid", "4x4", "--file-view"], "do not apply"),
    (2, ["--layout", "subarray", "--grid", "4x4", "--api", "hdf5", "--elem", "3"],
     "--elem must be 1, 2, 4 or 8"),
    (2, ["--layout", "subarray", "--grid", "4x4", "--api", "posix", "--posix.mode", "direct"],
     "does not apply"),
]


@pytest.mark.parametrize("np_,extra,message", BAD)
def test_bad_input(engine: Engine, scratch: Path, np_: int, extra: list[str], message: str):
    if "--api" in extra and extra[extra.index("--api") + 1] not in engine.apis:
        pytest.skip("api not built")
    r = run_refused(engine, np_, ["--path", str(scratch / "f"), "--quiet", *extra],
                    scratch.parent)
    assert r.rc == 2 and r.doc is None
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("iolab-bench:")]
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert list(scratch.iterdir()) == []
