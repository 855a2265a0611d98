"""The 4 most common access sizes of a file shared by every rank, merged exactly: each size's
counts add up over all ranks, and ties go to the larger size, as in Darshan 3.5's reduction
(DARSHAN_UPDATE_COMMON_VAL_COUNTERS: count, then value, both descending).

Expected: 1920 x nprocs first (every rank wrote it once), then the three largest sizes written
twice / was: 1920 lost by both merges (the tracer's at MPI_Finalize and the loader's), which
folded the ranks' top-4 lists pair by pair: it fell out behind larger sizes tied at 2 and
each later rank's count of it started again from 1 (the issue's "1968 x 2 where the truth is
1920 x 4").
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import PROGS, profile, record

NP = 4


def _expected(np: int) -> list[tuple[int, int]]:
    twice = sorted((1920 + 16 * (3 * r + k) for r in range(np) for k in (1, 2, 3)),
                   reverse=True)
    return [(1920, np)] + [(s, 2) for s in twice[:3]]


@pytest.fixture(scope="module")
def exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc is not installed")
    out = tmp_path_factory.mktemp("prog") / "mpi_access_sizes"
    subprocess.run(["mpicc", "-O2", "-o", str(out), str(PROGS / "mpi_access_sizes.c")],
                   check=True)
    return out


@pytest.mark.parametrize("where", ["tracer", "loader"])
def test_shared_file_access_sizes_merge_exactly(tmp_path: Path, exe: Path, where: str) -> None:
    """tracer: the reduction at MPI_Finalize (libiolab-trace-mpi); loader: the same rules in
    Python for a profile made without it (IOLAB_TRACE_NO_REDUCE=1)."""
    env = {"IOLAB_TRACE_NO_REDUCE": "1"} if where == "loader" else {}
    _, job = profile([str(exe), str(tmp_path / "shared.dat")], tmp_path / "p", np=NP,
                     extra_env=env)
    rec = record(job, "POSIX", "shared.dat")
    assert rec.rank == -1
    c = rec.counters
    got = [(c[f"POSIX_ACCESS{i}_ACCESS"], c[f"POSIX_ACCESS{i}_COUNT"]) for i in range(1, 5)]
    assert got == _expected(NP)
    assert c["POSIX_WRITES"] == NP * 7  # the counts the merge shares out are all there
