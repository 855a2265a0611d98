"""ROMIO's file-system prefixes in MPI_File_open names ("ufs:/path", "nfs:rel"): the MPI-IO
record is the file ROMIO opens, so one file has one name and one record id in the MPI-IO and
POSIX layers, as in Darshan 3.5 (which drops whatever precedes a name's first ':' after its
second character: checked here with the scratch Darshan, MPI-IO "/dir/a.dat" for
"ufs:/dir/a.dat" and "/cwd/rel.dat" for "ufs:rel.dat", with the POSIX record's id).

Regression, expected / was: "ufs:rel.dat" recorded as MPI-IO "<cwd>/ufs:rel.dat" beside
POSIX "<cwd>/rel.dat" (the prefix was dropped only before a '/')."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS, profile

SHIM_MPICH = LIBDIR.parents[2] / "mpich" / "interpose" / "trace" / "libiolab-trace-mpi-mpich.so"


def test_romio_prefixes_one_record_per_file(tmp_path: Path) -> None:
    """Under MPICH (ROMIO reads the prefixes; Open MPI's OMPIO takes them as part of the
    name): "ufs:/abs", "nfs:/abs" and a relative "ufs:rel" each give one MPI-IO and one POSIX
    record with the same path and id, the bytes of both ranks in each."""
    if shutil.which("mpicc.mpich") is None or shutil.which("mpirun.mpich") is None:
        pytest.skip("MPICH is not installed")
    if not SHIM_MPICH.is_file():
        pytest.skip(f"{SHIM_MPICH.name} is not built (./setup builds it in build/mpich)")
    exe = tmp_path / "mpi_fs_prefix"
    subprocess.run(["mpicc.mpich", "-O2", "-o", str(exe), str(PROGS / "mpi_fs_prefix.c")],
                   check=True)
    work = tmp_path / "work"
    work.mkdir()
    names = {"a.dat": f"ufs:{work}/a.dat", "b.dat": f"nfs:{work}/b.dat",
             "rel.dat": "ufs:rel.dat"}
    _, job = profile([str(exe), *names.values()], tmp_path / "p", np=2, mpi="mpich", cwd=work)
    assert sorted(p.name for p in work.iterdir()) == sorted(names)  # what ROMIO created
    rows = [r for r in job.rows() if r.module in ("MPI-IO", "POSIX") and r.path.startswith(
        str(work))]
    for name in names:
        mine = [r for r in rows if r.path == f"{work}/{name}"]
        assert sorted(r.module for r in mine) == ["MPI-IO", "POSIX"], (name, rows)
        assert len({r.record_id for r in mine}) == 1, mine
        by = {r.module: r for r in mine}
        assert by["MPI-IO"].counters["MPIIO_BYTES_WRITTEN"] == 2 * 4096
        assert by["MPI-IO"].counters["MPIIO_COLL_OPENS"] == 2
        assert by["POSIX"].counters["POSIX_BYTES_WRITTEN"] == 2 * 4096
    assert not [r for r in rows if ":" in r.path], rows
