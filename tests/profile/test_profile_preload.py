"""What `iolab profile` preloads for an HDF5 MPI program, and what that costs a process that
is given it: one library (tracer, MPI-IO shim and HDF5 layer together), with no NEEDED entry
for HDF5; a second copy of the tracer in a process stays passive (one profile a process).

Expected / was: three preloaded libraries (each one more object the loader searches on every
symbol lookup of every rank: ~1 M instructions a rank), and the HDF5 layer linked HDF5, so
mpirun and a job script's shell given the preload loaded HDF5's ~40 libraries (18 M
instructions of a /bin/true instead of 2.2 M, Darshan 3.5: 2.6 M; bench/trace_overhead
--callgrind)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS

from iolab.profile import shim

ONE = LIBDIR / "libiolab-trace-mpi-hdf5.so"
INC = Path("/usr/include/hdf5/openmpi")


def _hdf5_program(tmp_path: Path) -> Path:
    if shutil.which("mpicc") is None or not INC.is_dir():
        pytest.skip("mpicc or Open MPI's parallel HDF5 is not installed")
    if not ONE.is_file():
        pytest.skip(f"{ONE.name} is not built (./setup)")
    exe = tmp_path / "mpi_hdf5"
    subprocess.run(["mpicc", "-O2", f"-I{INC}", "-o", str(exe), str(PROGS / "mpi_hdf5.c"),
                    "-L/usr/lib/x86_64-linux-gnu/hdf5/openmpi", "-lhdf5"], check=True)
    return exe


def _needed(lib: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    return [ln.split("[", 1)[1].rstrip("]") for ln in out.splitlines() if "(NEEDED)" in ln]


def test_hdf5_layers_do_not_link_hdf5() -> None:
    """The HDF5 layer and the one library reach HDF5 through dlsym: no NEEDED libhdf5 (nor
    its dependencies) for a process that is given them, and the HDF5 they are built for is
    written in them for `iolab profile` to match against the program's."""
    if shutil.which("readelf") is None or not ONE.is_file():
        pytest.skip("readelf or the HDF5 layer is missing")
    for lib in (LIBDIR / "libiolab-trace-hdf5.so", ONE):
        assert not [n for n in _needed(lib) if "hdf5" in n], _needed(lib)
        built_for = shim._built_for(lib, shim._HDF5)
        assert built_for is not None and "libhdf5_openmpi.so" in built_for


def test_hdf5_program_gets_one_library(tmp_path: Path) -> None:
    """`iolab profile --np 2` of an Open MPI HDF5 program preloads the one library alone, and
    the profile still has every layer (H5F, H5D, MPI-IO, POSIX) for both ranks."""
    exe = _hdf5_program(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "iolab", "profile", "-v", "-o", str(tmp_path / "p"), "--name",
         "job", "--np", "2", "--", str(exe), str(tmp_path / "x.h5"), "2", "1024"],
        capture_output=True, text=True, env={**os.environ, "IOLAB_LIBDIR": str(LIBDIR)},
        timeout=180, check=False)
    assert run.returncode == 0, run.stderr
    preload = [w for w in run.stderr.split() if w.startswith("LD_PRELOAD=")]
    assert preload == [f"LD_PRELOAD={ONE}"], run.stderr
    text = (tmp_path / "p" / "job.iolab").read_text()
    for module in ("H5F", "H5D", "MPI-IO", "POSIX"):
        assert f'"module":"{module}"' in text.replace(" ", ""), module
    assert '"nprocs":2' in text.replace(" ", "")


@pytest.mark.parametrize("first", ["tracer", "one library"])
def test_second_tracer_copy_is_passive(tmp_path: Path, first: str) -> None:
    """libiolab-trace.so and the one library both preloaded (by hand, in either order): one
    profile for the process, by the copy the loader finds first."""
    exe = _hdf5_program(tmp_path)
    libs = [str(LIBDIR / "libiolab-trace.so"), str(ONE)]
    if first == "one library":
        libs.reverse()
    parts = tmp_path / "parts"
    parts.mkdir()
    env = {**os.environ, "LD_PRELOAD": ":".join(libs), "IOLAB_TRACE_DIR": str(parts)}
    subprocess.run([str(exe), str(tmp_path / "x.h5"), "1", "1024"], env=env, check=True,
                   timeout=120)
    profiles = list(parts.glob("*.iolabp"))
    assert len(profiles) == 1, profiles
    text = profiles[0].read_text()
    assert ('"module":"H5D"' in text.replace(" ", "")) == (first == "one library")


def test_mpi_program_gets_one_library(tmp_path: Path) -> None:
    """An MPI program with no I/O library layer: the tracer and the MPI-IO shim in one
    preloaded library (libiolab-trace-with-mpi.so), MPI-IO and POSIX both recorded."""
    one = LIBDIR / "libiolab-trace-with-mpi.so"
    if shutil.which("mpicc") is None or not one.is_file():
        pytest.skip(f"mpicc or {one.name} missing (./setup)")
    exe = tmp_path / "mpi_strided"
    subprocess.run(["mpicc", "-O2", "-o", str(exe), str(PROGS / "mpi_strided.c")], check=True)
    run = subprocess.run(
        [sys.executable, "-m", "iolab", "profile", "-v", "-o", str(tmp_path / "p"), "--name",
         "job", "--np", "2", "--", str(exe), str(tmp_path / "m.dat"), "16", "4096", "coll"],
        capture_output=True, text=True, env={**os.environ, "IOLAB_LIBDIR": str(LIBDIR)},
        timeout=180, check=False)
    assert run.returncode == 0, run.stderr
    preload = [w for w in run.stderr.split() if w.startswith("LD_PRELOAD=")]
    assert preload == [f"LD_PRELOAD={one}"], run.stderr
    text = (tmp_path / "p" / "job.iolab").read_text().replace(" ", "")
    assert '"module":"MPI-IO"' in text and '"module":"POSIX"' in text
