"""``iolab profile --darshan`` / ``iolab profile export``: a real Darshan log written with
libdarshan-util's write API, read back by pydarshan with the same counters, names, process
count and command line, and diagnosed by ``iolab diagnose`` like the profile itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS

from iolab.sources.profile import load

darshan = pytest.importorskip("darshan")

MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IOLAB_LIBDIR": str(LIBDIR)}
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def _theirs(log: Path) -> tuple[dict[tuple[str, str, int], dict[str, float]], dict[str, object]]:
    out: dict[tuple[str, str, int], dict[str, float]] = {}
    with darshan.DarshanReport(str(log), read_all=True) as rep:
        for mod in MODULES:
            if mod not in rep.records:
                continue
            coll = rep.records[mod]
            ids = [int(r["id"]) for r in coll]
            df = coll.to_df()
            rows = df["counters"].to_dict("records")
            frows = df["fcounters"].to_dict("records")
            for rid, row, frow in zip(ids, rows, frows, strict=True):
                key = (mod, rep.name_records[rid], int(row["rank"]))
                out[key] = {**{k: v for k, v in row.items() if k not in ("rank", "id")},
                            **{k: v for k, v in frow.items() if k not in ("rank", "id")}}
        meta = {"nprocs": rep.metadata["job"]["nprocs"], "exe": rep.metadata["exe"]}
    return out, meta


def _check_equal(profile: Path, log: Path) -> int:
    job = load(profile)
    theirs, meta = _theirs(log)
    assert meta == {"nprocs": job.nprocs, "exe": job.exe}
    ours = [r for r in job.rows() if r.module in MODULES]
    assert len(ours) == len(theirs)
    for r in ours:
        got = theirs[(r.module, r.path, r.rank)]
        for name, value in got.items():
            if name in r.counters:
                assert value == r.counters[name], (r.module, r.path, name)
            else:
                assert value == pytest.approx(r.fcounters.get(name, 0.0), rel=1e-12, abs=1e-9)
    return len(ours)


def test_profile_darshan_flag_mpiio_and_posix(prog: Callable[[str], Path], tmp_path: Path) -> None:
    exe = prog("mpi_strided")
    run = _run("profile", "-o", str(tmp_path), "--name", "job", "--np", "2", "--darshan", "--",
               str(exe), str(tmp_path / "s.dat"), "64", "4096", "coll")
    assert run.returncode == 0, run.stderr
    assert "Darshan log written to" in run.stderr
    n = _check_equal(tmp_path / "job.iolab", tmp_path / "job.darshan")
    assert n >= 2  # the shared file's MPI-IO and POSIX records at least
    diag = _run("diagnose", str(tmp_path / "job.darshan"))
    assert diag.returncode == 0 and "top layer MPI-IO" in diag.stdout


def test_profile_export_hdf5_layers(tmp_path: Path) -> None:
    inc = Path("/usr/include/hdf5/openmpi")
    if shutil.which("mpicc") is None or not inc.is_dir():
        pytest.skip("mpicc or Open MPI's parallel HDF5 is not installed")
    if not (LIBDIR / "libiolab-trace-hdf5.so").is_file():
        pytest.skip("libiolab-trace-hdf5.so is not built (./setup)")
    exe = tmp_path / "rw"
    subprocess.run(["mpicc", "-O2", f"-I{inc}", "-o", str(exe), str(PROGS / "mpi_hdf5_rw.c"),
                    "-L/usr/lib/x86_64-linux-gnu/hdf5/openmpi", "-lhdf5"], check=True)
    run = _run("profile", "-q", "-o", str(tmp_path), "--name", "job", "--np", "2", "--",
               str(exe), str(tmp_path / "rw.h5"))
    assert run.returncode == 0, run.stderr
    exp = _run("profile", "export", str(tmp_path / "job.iolab"))
    assert exp.returncode == 0, exp.stderr
    _check_equal(tmp_path / "job.iolab", tmp_path / "job.darshan")
    theirs, _ = _theirs(tmp_path / "job.darshan")
    h5d = theirs[("H5D", f"{tmp_path}/rw.h5:/grid", -1)]
    assert h5d["H5D_BYTES_WRITTEN"] == 2 * (4096 + 2048) and h5d["H5D_POINT_SELECTS"] == 2


def test_export_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    for args in (["export"], ["export", str(tmp_path / "missing.iolab")]):
        run = _run("profile", *args)
        assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_profile_export_pnetcdf_layers(tmp_path: Path) -> None:
    if shutil.which("mpicc") is None or not Path("/usr/include/pnetcdf.h").is_file():
        pytest.skip("mpicc or PnetCDF is not installed")
    if not (LIBDIR / "libiolab-trace-pnetcdf.so").is_file():
        pytest.skip("libiolab-trace-pnetcdf.so is not built (./setup)")
    exe = tmp_path / "pnc"
    subprocess.run(["mpicc", "-O2", "-o", str(exe), str(PROGS / "mpi_pnetcdf_rw.c"),
                    "-lpnetcdf"], check=True)
    run = _run("profile", "-q", "-o", str(tmp_path), "--name", "job", "--np", "2", "--darshan",
               "--", str(exe), str(tmp_path / "rw.nc"))
    assert run.returncode == 0, run.stderr
    _check_equal(tmp_path / "job.iolab", tmp_path / "job.darshan")
    theirs, _ = _theirs(tmp_path / "job.darshan")
    assert theirs[("PNETCDF_VAR", f"{tmp_path}/rw.nc:series", -1)]["PNETCDF_VAR_GET_VAR"] == 2
