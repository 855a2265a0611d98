"""An HDF5 program with libhdf5 linked in statically (Debian's ``h5pcc`` default: it links
libhdf5.a) cannot be traced at the HDF5 layer: ``iolab profile`` says so in one line.

Expected: "iolab: PROG has HDF5 linked in statically (...): H5F/H5D not traced (MPI-IO, POSIX
and STDIO are); ..." on stderr, the MPI-IO records still there, and no such line for the
same program linked with the shared libhdf5 (whose H5F records are there) / was: nothing
said, and a profile without an HDF5 layer that diagnose read as an MPI-IO program.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS, profile

SAYS = "has HDF5 linked in statically"


def _h5pcc(outdir: Path, how: str) -> Path:
    if shutil.which("h5pcc") is None:
        pytest.skip("h5pcc (parallel HDF5, libhdf5-openmpi-dev) is not installed")
    if not (LIBDIR / "libiolab-trace-hdf5.so").is_file():
        pytest.skip("libiolab-trace-hdf5.so is not built (./setup)")
    exe = outdir / f"mpi_hdf5-{how}"
    # in outdir: h5pcc leaves its object file in the folder it runs in
    subprocess.run(["h5pcc", f"-{how}", "-O2", "-o", str(exe), str(PROGS / "mpi_hdf5.c")],
                   check=True, cwd=outdir)
    return exe


def test_statically_linked_hdf5_is_said(tmp_path: Path) -> None:
    exe = _h5pcc(tmp_path, "noshlib")
    libs = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    assert "libhdf5" not in libs and "libmpi" in libs  # static HDF5, shared MPI: by build
    run, job = profile([str(exe), str(tmp_path / "s.h5"), "1"], tmp_path / "p", np=2)
    said = [line for line in run.stderr.splitlines() if SAYS in line]
    assert len(said) == 1, run.stderr
    assert said[0].startswith(f"iolab: {exe} has HDF5") and "H5F/H5D not traced" in said[0]
    mods = {r.module for r in job.rows()}
    assert "MPI-IO" in mods and not mods & {"H5F", "H5D"}  # the line says what is missing


def test_shared_hdf5_is_not_called_static(tmp_path: Path) -> None:
    exe = _h5pcc(tmp_path, "shlib")
    run, job = profile([str(exe), str(tmp_path / "d.h5"), "1"], tmp_path / "p", np=2)
    assert SAYS not in run.stderr
    assert {"H5F", "H5D"} <= {r.module for r in job.rows()}
