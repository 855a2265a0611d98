"""The effective hints the engine reads back for its report (MPI_File_get_info on the first
phase's open file) are iolab's own work, not the workload's: IOR reads them only for -H.
A PMPI shim makes that call take half a second, for real, in both MPI libraries' ranks; the
phase it happens in must not grow by it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from engine_helpers import Engine, run_engine

SLOW_GET_INFO_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int MPI_File_get_info(MPI_File fh, MPI_Info *info)
{
    const char *mark = getenv("SLOW_GET_INFO_MARK");
    if (mark) { FILE *f = fopen(mark, "a"); if (f) { fputs("called\n", f); fclose(f); } }
    usleep(500000);
    return PMPI_File_get_info(fh, info);
}
"""


def _shim(engine: Engine, tmp_path: Path) -> Path:
    mpicc = "mpicc" if engine.flavour == "default" else "mpicc.mpich"
    src, lib = tmp_path / "slow_get_info.c", tmp_path / "libslowgetinfo.so"
    src.write_text(SLOW_GET_INFO_C.replace("#include <unistd.h>",
                                           "#include <stdlib.h>\n#include <unistd.h>"))
    subprocess.run([mpicc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


@pytest.mark.parametrize("which", ["engine", "mpich_engine"])
def test_reading_the_effective_hints_back_is_not_timed(which: str, request: pytest.FixtureRequest,
                                                      tmp_path: Path) -> None:
    """Expected: a collective MPI-IO write whose MPI_File_get_info takes 0.5 s reports its
    phase (and its close) in well under that, while the call did happen once a rank / was:
    the read-back sat between the transfers' end and the close's clock read, inside the
    first phase's time."""
    engine: Engine = request.getfixturevalue(which)
    if "mpiio" not in engine.apis:
        pytest.skip(f"mpiio is not built into {engine.binary.name}")
    lib = _shim(engine, tmp_path)
    mark = tmp_path / "calls"
    env = {"LD_PRELOAD": str(lib), "SLOW_GET_INFO_MARK": str(mark)}
    r = run_engine(engine, 2, ["--api", "mpiio", "--collective", "--transfer", "16K",
                               "--block", "64K", "--segments", "2", "--path",
                               str(tmp_path / "f"), "--write", "--quiet"], tmp_path, env=env)
    assert r.rc == 0, r.why()
    assert mark.read_text().count("called") == 2  # once a rank: the shim did slow it
    (write,) = r.phases("write")
    assert write["time_s"] < 0.25, write
    assert write["close_s"]["max"] < 0.25, write
    assert all(p["close_s"] < 0.25 for p in write["per_rank"]), write
