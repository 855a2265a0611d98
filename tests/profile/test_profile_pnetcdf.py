"""The PnetCDF layer (libiolab-trace-pnetcdf.so): Darshan's PNETCDF_FILE and PNETCDF_VAR
counters, exact on a program that makes every kind of access (blocking collective and
independent, non-blocking, var/var1/vara/vars/varn, a record variable, waits, redef, sync,
open + inq_varid), equal to Darshan 3.5's log of the same program, linked by the model to the
file's MPI-IO and POSIX records, and carried into ``--darshan`` logs.

Expected / was: PnetCDF calls were invisible (no PNETCDF records).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import corpus
import pytest
from trace_helpers import LIBDIR, PROGS, build_once, profile, record

LOGS = corpus.GENERATED_DIR  # the one corpus setting (tests/corpus.py)
TIMING = ("FASTEST_RANK", "SLOWEST_RANK")


def _build(name: str, outdir: Path) -> Path:
    if shutil.which("mpicc") is None or not Path("/usr/include/pnetcdf.h").is_file():
        pytest.skip("mpicc or PnetCDF (libpnetcdf-dev) is not installed")
    if not (LIBDIR / "libiolab-trace-pnetcdf.so").is_file():
        pytest.skip("libiolab-trace-pnetcdf.so is not built (PnetCDF for this MPI, ./setup)")
    exe = outdir / name

    def make() -> Path:
        subprocess.run(["mpicc", "-O2", "-o", str(exe), str(PROGS / f"{name}.c"), "-lpnetcdf"],
                       check=True)
        return exe

    return build_once(("pnetcdf", name), make)


def _per_rank_grid() -> dict[str, int]:
    return {
        "OPENS": 2, "COLL_WRITES": 2, "INDEP_WRITES": 2, "NB_READS": 1, "COLL_READS": 1,
        "NB_WRITES": 0, "INDEP_READS": 0, "BYTES_WRITTEN": 256 + 128 + 4 + 32,
        "BYTES_READ": 256 + 256, "PUT_VARA": 1, "PUT_VARS": 1, "PUT_VAR1": 1, "PUT_VARN": 1,
        "IGET_VARA": 1, "GET_VARA": 1, "RW_SWITCHES": 3, "SIZE_WRITE_AGG_0_100": 2,
        "SIZE_WRITE_AGG_100_1K": 2, "SIZE_READ_AGG_100_1K": 2, "ACCESS1_COUNT": 3,
    }


def test_pnetcdf_every_kind_of_access(tmp_path: Path) -> None:
    exe = _build("mpi_pnetcdf_rw", tmp_path)
    np = 2
    _, job = profile([str(exe), str(tmp_path / "rw.nc")], tmp_path / "p", np=np)
    f = record(job, "PNETCDF_FILE", "rw.nc").counters
    assert {k: f[f"PNETCDF_FILE_{k}"] for k in
            ("CREATES", "OPENS", "REDEFS", "SYNCS", "INDEP_WAITS", "COLL_WAITS",
             "WAIT_FAILURES")} == {"CREATES": np, "OPENS": np, "REDEFS": np, "SYNCS": np,
                                   "INDEP_WAITS": np, "COLL_WAITS": np, "WAIT_FAILURES": 0}
    # what PnetCDF itself says it moved: the data and the header
    assert f["PNETCDF_FILE_BYTES_WRITTEN"] >= np * (420 + 128)
    assert f["PNETCDF_FILE_BYTES_READ"] >= np * (512 + np * 128)

    g = record(job, "PNETCDF_VAR", "rw.nc:grid")
    assert g.rank == -1
    assert {k: g.counters[f"PNETCDF_VAR_{k}"] for k in _per_rank_grid()} == {
        k: v * np for k, v in _per_rank_grid().items()}
    gc = g.counters
    assert [gc[f"PNETCDF_VAR_{k}"] for k in ("NDIMS", "NPOINTS", "DATATYPE_SIZE",
                                              "IS_RECORD_VAR")] == [2, 4 * np * 16, 4, 0]
    # the common accesses: (size, count D1, D2, stride D1, D2)
    common = {
        tuple(gc[f"PNETCDF_VAR_ACCESS{i}_{k}"] for k in
              ("ACCESS", "LENGTH_D1", "LENGTH_D2", "STRIDE_D1", "STRIDE_D2")):
        gc[f"PNETCDF_VAR_ACCESS{i}_COUNT"] for i in range(1, 5)
    }
    assert common == {(256, 4, 16, 0, 0): 3 * np, (128, 4, 8, 1, 2): np, (32, 0, 0, 0, 0): np,
                      (4, 0, 0, 0, 0): np}

    s = record(job, "PNETCDF_VAR", "rw.nc:series").counters
    assert [s[f"PNETCDF_VAR_{k}"] for k in
            ("OPENS", "NB_WRITES", "IPUT_VARA", "COLL_READS", "GET_VAR", "BYTES_WRITTEN",
             "BYTES_READ", "NPOINTS", "DATATYPE_SIZE", "IS_RECORD_VAR")] == [
        np, np, np, np, np, np * 128, np * np * 128, 16, 8, 1]
    # below: the same file's MPI-IO and POSIX records; the model puts PnetCDF on top
    assert record(job, "MPI-IO", "rw.nc").counters["MPIIO_COLL_OPENS"] == 2 * np
    from iolab.model.job import build_model

    model = build_model([job])
    assert model.metrics.top_layer == "PnetCDF" and model.metrics.app_files == 1


def test_pnetcdf_agrees_with_darshan_3_5(tmp_path: Path) -> None:
    """mpi_pnetcdf.c is the program of pnetcdf_4ranks_coll_and_indep_vara.darshan: every
    PNETCDF_FILE and PNETCDF_VAR integer counter equal, except the fastest/slowest rank."""
    import darshan

    log = LOGS / "pnetcdf_4ranks_coll_and_indep_vara.darshan"
    if not log.is_file():
        pytest.skip(f"{log} is absent (the shared Darshan corpus)")
    exe = _build("mpi_pnetcdf", tmp_path)
    _, job = profile([str(exe), str(tmp_path / "pnc_par.nc")], tmp_path / "p", np=4)
    with darshan.DarshanReport(str(log), read_all=True) as rep:
        for mod in ("PNETCDF_FILE", "PNETCDF_VAR"):
            coll = rep.records[mod]
            rows = coll.to_df()["counters"].to_dict("records")
            for rec, row in zip(coll, rows, strict=True):
                name = rep.name_records[int(rec["id"])].rsplit("/", 1)[1]
                ours = record(job, mod, name).counters
                diff = {k: (ours.get(k), int(v)) for k, v in row.items()
                        if k not in ("rank", "id") and not any(t in k for t in TIMING)
                        and ours.get(k) != int(v)}
                assert diff == {}, f"{mod} {name}: (iolab, darshan) {diff}"


def test_pnetcdf_wait_time_counts_at_the_library_layer(tmp_path: Path) -> None:
    """Expected: a program writing through ncmpi_iput + ncmpi_wait(_all) shows its wait time
    as PnetCDF data time (the interface's time and the file's library-layer time) / was:
    PNETCDF_FILE_F_WAIT_TIME was read nowhere, so the layer showed only the microseconds the
    iput calls took to post their requests (half the time of the issue's checkpoint code)."""
    from iolab.model.job import build_model

    exe = _build("mpi_pnetcdf_nb", tmp_path)
    np = 2
    _, job = profile([str(exe), str(tmp_path / "nb.nc")], tmp_path / "p", np=np)
    f = record(job, "PNETCDF_FILE", "nb.nc")
    assert (f.counters["PNETCDF_FILE_COLL_WAITS"], f.counters["PNETCDF_FILE_INDEP_WAITS"]) == (
        np, np)
    wait = f.fcounters["PNETCDF_FILE_F_WAIT_TIME"]
    v = record(job, "PNETCDF_VAR", "nb.nc:field").fcounters
    posted = v["PNETCDF_VAR_F_WRITE_TIME"] + v["PNETCDF_VAR_F_READ_TIME"]
    assert wait > 0 and posted < wait  # by construction: the data moves in the waits
    model = build_model([job])
    pnc = model.metrics.ifaces["PnetCDF"]
    # all of the wait is data time (writes, unless PnetCDF also read a header)
    assert pnc.time_s["write"] + pnc.time_s["read"] == pytest.approx(posted + wait, rel=1e-6)
    assert pnc.time_s["write"] > wait / 2
    i = next(k for k, p in enumerate(model.files.paths) if p.endswith("/nb.nc"))
    # the reduced record's mean rank at least: every rank waited for its own slice
    assert model.layers.library_slowest_rank_time_s[i] >= (wait + posted) / np - 1e-9
