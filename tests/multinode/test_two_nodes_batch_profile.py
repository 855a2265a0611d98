"""``iolab profile -- sbatch -N 2 ... job.sh`` on the two emulated hosts
(tests/slurm_twonode.sh): the job script's ``srun`` passes the tracer and the MPI-IO shim to
the ranks of both nodes, the profile merged after the job has the 4 ranks on n1 and n2 with
their MPI-IO counters exact, and a trace folder on a node-local file system type is warned
about before the job is submitted (sinfo lists nodes other than this host).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.profile import batch
from iolab.sources.profile import load

pytestmark = pytest.mark.multinode

ROOT = Path(__file__).resolve().parents[2]
LIBDIR = ROOT / "build" / "default" / "interpose" / "trace"
PROG = ROOT / "tests" / "profile" / "progs" / "mpi_fortran_io.F90"
BLOCK = 800  # 100 doubles


def test_profile_of_a_two_node_batch_job(twonode_env: dict[str, str], tmp_path: Path) -> None:
    if shutil.which("mpif90") is None or not (LIBDIR / "libiolab-trace-mpi.so").is_file():
        pytest.skip("mpif90 or libiolab-trace-mpi.so missing (tools/install-deps.sh, ./setup)")
    exe = tmp_path / "fio"
    subprocess.run(["mpif90", "-cpp", "-O2", "-o", str(exe), str(PROG)], check=True,
                   cwd=tmp_path)  # include 'mpif.h'
    data = tmp_path / "shared.dat"
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node 2\n#SBATCH -t 5\n"
                      f"srun --mpi=pmix {exe} {data}\n")
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-o", str(tmp_path / "p"),
                          "--name", "job", "--", "sbatch", "-J", "iolab-batch-profile", "-o",
                          str(tmp_path / "job.out"), str(script)],
                         env={**twonode_env, "IOLAB_LIBDIR": str(LIBDIR)}, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert run.returncode == 0, run.stderr + out
    local = batch.fs_type(tmp_path) in batch.NODE_LOCAL_TYPES
    assert ("node-local file system" in run.stderr) == local, run.stderr
    job = load(tmp_path / "p" / "job.iolab")
    assert job.nprocs == 4 and job.hosts == ["n1", "n2"]
    (m,) = [r for r in job.rows() if r.module == "MPI-IO" and r.path == str(data)]
    c = m.counters
    assert m.rank == -1
    assert (c["MPIIO_INDEP_WRITES"], c["MPIIO_COLL_WRITES"], c["MPIIO_NB_WRITES"]) == (8, 4, 4)
    assert (c["MPIIO_INDEP_READS"], c["MPIIO_COLL_READS"], c["MPIIO_NB_READS"]) == (4, 4, 4)
    assert c["MPIIO_BYTES_WRITTEN"] == 16 * BLOCK and c["MPIIO_BYTES_READ"] == 12 * BLOCK
