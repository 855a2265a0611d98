"""H5D record names of datasets in subgroups: iolab names a dataset by its full HDF5 path
(``file:/grp/b``), one record per dataset however the program reaches it; Darshan 3.5 names
it by the location's path (``H5Iget_name`` of the group or file id) with the name given
appended, no separator (``file:/grpb`` through a group id, ``file://grp/c`` for a full path
given from the file id), so one dataset opened two ways is two Darshan records.

The log ``darshan/hdf5_groups.darshan`` is Darshan 3.5's of ``progs/hdf5_groups.c``
(darshan/README.md). The test asserts both: Darshan's names follow that rule (read from the
log), and iolab's counts per dataset equal the sum of the Darshan records naming it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS, profile

darshan = pytest.importorskip("darshan")
LOG = Path(__file__).resolve().parent / "darshan" / "hdf5_groups.darshan"
INC = Path("/usr/include/hdf5/openmpi")
LIB = Path("/usr/lib/x86_64-linux-gnu/hdf5/openmpi")

# Darshan's name (dataset part) -> the dataset, for each call of hdf5_groups.c
DARSHAN_NAMES = {
    "/a": "/a",                  # H5Dcreate2(file, "a")
    "/grpb": "/grp/b",           # H5Dcreate2(grp, "b"): "/grp" + "b"
    "//grp/c": "/grp/c",         # H5Dcreate2(file, "/grp/c"): "/" + "/grp/c"
    "/grp/sub/d": "/grp/sub/d",  # H5Dcreate2(file, "grp/sub/d")
    "/grp/sube": "/grp/sub/e",   # H5Dcreate2(sub, "e"): "/grp/sub" + "e"
    "//grp/b": "/grp/b",         # H5Dopen2(file, "/grp/b"): a second record for /grp/b
}
# the counts that depend on which record a call lands in (every call here is a whole-dataset
# H5S_ALL access: how selections are counted is the agreement tests' business)
SUMMED = ("H5D_OPENS", "H5D_READS", "H5D_WRITES", "H5D_BYTES_READ", "H5D_BYTES_WRITTEN",
          "H5D_POINT_SELECTS", "H5D_USE_DEPRECATED")
SAME = ("H5D_DATASPACE_NDIMS", "H5D_DATASPACE_NPOINTS", "H5D_DATATYPE_SIZE")


def _build(name: str, tmp_path: Path) -> Path:
    """progs/NAME.c built against Open MPI's parallel HDF5 (skips without it or the layer)."""
    shim = LIBDIR / "libiolab-trace-hdf5.so"
    if shutil.which("mpicc") is None or not INC.is_dir() or not shim.is_file():
        pytest.skip("mpicc, Open MPI's parallel HDF5 or libiolab-trace-hdf5.so missing")
    exe = tmp_path / name
    subprocess.run(["mpicc", "-O2", f"-I{INC}", "-o", str(exe), str(PROGS / f"{name}.c"),
                    f"-L{LIB}", "-lhdf5"], check=True)
    return exe


def _darshan_h5d() -> dict[str, dict[str, int]]:
    """Dataset part of each H5D record's name -> its counters."""
    out = {}
    with darshan.DarshanReport(str(LOG), read_all=True) as rep:
        coll = rep.records["H5D"]
        ids = [int(rec["id"]) for rec in coll]
        rows = coll.to_df()["counters"].to_dict("records")
        for rid, row in zip(ids, rows):
            name = rep.name_records[rid].split(".h5:", 1)[1]
            out[name] = {k: int(v) for k, v in row.items()}
    return out


def test_darshan_names_datasets_by_location_and_given_name() -> None:
    assert set(_darshan_h5d()) == set(DARSHAN_NAMES)


def test_iolab_names_each_dataset_once_by_full_path_counts_as_darshan(tmp_path: Path) -> None:
    exe = _build("hdf5_groups", tmp_path)
    h5 = tmp_path / "groups.h5"
    _, job = profile([str(exe), str(h5)], tmp_path / "p", np=1)
    ours = {r.path.split(".h5:", 1)[1]: r.counters for r in job.rows() if r.module == "H5D"}
    assert all(r.path.startswith(f"{h5}:") for r in job.rows() if r.module == "H5D")
    assert set(ours) == set(DARSHAN_NAMES.values())  # one record per dataset
    theirs = _darshan_h5d()
    for dataset, c in ours.items():
        names = [n for n, d in DARSHAN_NAMES.items() if d == dataset]
        summed = {k: sum(theirs[n][k] for n in names) for k in SUMMED}
        same = {k: theirs[names[0]][k] for k in SAME}
        assert {k: c[k] for k in (*SUMMED, *SAME)} == {**summed, **same}, dataset
    assert ours["/grp/b"]["H5D_OPENS"] == 2 and ours["/grp/b"]["H5D_READS"] == 1


OOPEN_LOG = Path(__file__).resolve().parent / "darshan" / "hdf5_oopen.darshan"


def test_datasets_opened_as_objects_count_like_darshan(tmp_path: Path) -> None:
    """progs/hdf5_oopen.c opens one dataset through H5Oopen, H5Oopen_by_idx and
    H5Oopen_by_addr (as h5py does) and reads it each time, and a group through H5Oopen:
    Darshan 3.5 counts those dataset opens and reads (under its location-and-name records,
    darshan/hdf5_oopen.darshan); iolab counts the same on the one record of /d, and none for
    the group."""
    exe = _build("hdf5_oopen", tmp_path)
    h5 = tmp_path / "oopen.h5"
    _, job = profile([str(exe), str(h5)], tmp_path / "p", np=1)
    ours = {r.path.split(".h5:", 1)[1]: r.counters for r in job.rows() if r.module == "H5D"}
    assert set(ours) == {"/d"}  # the group opened through H5Oopen is no dataset
    with darshan.DarshanReport(str(OOPEN_LOG), read_all=True) as rep:
        theirs = rep.records["H5D"].to_df()["counters"]
        summed = {k: int(theirs[k].sum()) for k in SUMMED}
    assert {k: ours["/d"][k] for k in SUMMED} == summed
    # create + the three object opens; the write, then one whole read after each open
    assert (ours["/d"]["H5D_OPENS"], ours["/d"]["H5D_READS"]) == (4, 3)
    assert ours["/d"]["H5D_BYTES_READ"] == 3 * 16 * 4
