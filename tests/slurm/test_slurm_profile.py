"""``iolab profile -- srun ...`` on the one-node Slurm: the program behind srun's options is
found, the tracer reaches the ranks through srun's ``--export``, and the MPI-IO counters of a
Fortran (``use mpi_f08``) program are exact.

Expected / was: under srun the program inspected was ``srun`` itself, so no MPI-IO shim was
preloaded and the ranks' MPI-IO went unseen.

``iolab profile -- sbatch ... job.sh``: the job is submitted with the tracer in its
``--export`` and waited for; the script's own ``srun`` or ``mpirun`` passes the tracer and
the MPI-IO shim on to the ranks, and the profile merged after the job has them exact.
Expected / was: sbatch itself was profiled; it returns at submission, so the profile was
empty and the job's ranks wrote into a folder already removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.sources.profile import load

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parents[2]
LIBDIR = ROOT / "build" / "default" / "interpose" / "trace"
PROG = ROOT / "tests" / "profile" / "progs" / "mpi_fortran_io.F90"
BLOCK = 800  # 100 doubles


@pytest.mark.parametrize("export", [None, "--export=ALL,OMP_NUM_THREADS=1"])
def test_profile_srun_line_fortran_mpiio(
    slurm_env: dict[str, str], tmp_path: Path, export: str | None
) -> None:
    if shutil.which("mpif90") is None or not (LIBDIR / "libiolab-trace-mpi.so").is_file():
        pytest.skip("mpif90 or libiolab-trace-mpi.so missing (tools/install-deps.sh, ./setup)")
    exe = tmp_path / "fio"
    subprocess.run(["mpif90", "-cpp", "-DUSE_F08", "-O2", "-o", str(exe), str(PROG)],
                   check=True, cwd=tmp_path)
    data = tmp_path / "shared.dat"
    line = ["srun", "-n", "2", "-t", "5", "--mpi=pmix", *([export] if export else []),
            "-J", "iolab-profile-test", str(exe), str(data)]
    env = {**slurm_env, "IOLAB_LIBDIR": str(LIBDIR)}
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-q", "-o",
                          str(tmp_path / "p"), "--name", "job", "--", *line],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    job = load(tmp_path / "p" / "job.iolab")
    assert job.nprocs == 2
    m = [r for r in job.rows() if r.module == "MPI-IO" and r.path == str(data)]
    assert len(m) == 1 and m[0].rank == -1
    c = m[0].counters
    assert (c["MPIIO_INDEP_WRITES"], c["MPIIO_COLL_WRITES"], c["MPIIO_NB_WRITES"]) == (4, 2, 2)
    assert (c["MPIIO_INDEP_READS"], c["MPIIO_COLL_READS"], c["MPIIO_NB_READS"]) == (2, 2, 2)
    assert c["MPIIO_BYTES_WRITTEN"] == 8 * BLOCK and c["MPIIO_BYTES_READ"] == 6 * BLOCK
    # srun itself was not traced: every process of the profile is a rank of the program
    assert job.metadata.get("np") == "2"


# (launch line inside the script, extra #SBATCH directive, the script's exit status)
JOB_LINES = {
    "srun": ("srun --mpi=pmix {exe} {data}", "", 0),
    "mpirun": ("mpirun --oversubscribe -np 2 {exe} {data}", "", 0),
    "srun-export-none-exit-3": ("srun --mpi=pmix {exe} {data}\nexit 3",
                                "#SBATCH --export=NONE", 3),
}


@pytest.mark.parametrize("kind", list(JOB_LINES))
def test_profile_sbatch_job_script_fortran_mpiio(
    slurm_env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    if shutil.which("mpif90") is None or not (LIBDIR / "libiolab-trace-mpi.so").is_file():
        pytest.skip("mpif90 or libiolab-trace-mpi.so missing (tools/install-deps.sh, ./setup)")
    exe = tmp_path / "fio"
    subprocess.run(["mpif90", "-cpp", "-DUSE_MPI", "-O2", "-o", str(exe), str(PROG)],
                   check=True, cwd=tmp_path)
    data = tmp_path / "shared.dat"
    run_line, directive, status = JOB_LINES[kind]
    root = "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n" \
        if os.geteuid() == 0 else ""
    script = tmp_path / "job.sh"
    (tmp_path / "input.txt").write_text("x" * 5000)  # read by the batch shell's own cat
    script.write_text(f"#!/bin/bash\n#SBATCH -n 2\n#SBATCH -t 5\n{directive}\n"
                      f"cd {tmp_path}\n{root}cat input.txt > /dev/null\n"
                      + run_line.format(exe=exe, data=data) + "\n")
    env = {**slurm_env, "IOLAB_LIBDIR": str(LIBDIR)}
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-q", "-o",
                          str(tmp_path / "p"), "--name", "job", "--", "sbatch", "-J",
                          "iolab-profile-batch", "-o", str(tmp_path / "job.out"), str(script)],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert run.returncode == status, run.stderr + out  # the job's status (sbatch --wait)
    job = load(tmp_path / "p" / "job.iolab")
    assert job.nprocs == 2
    m = [r for r in job.rows() if r.module == "MPI-IO" and r.path == str(data)]
    assert len(m) == 1 and m[0].rank == -1, out
    c = m[0].counters
    assert (c["MPIIO_INDEP_WRITES"], c["MPIIO_COLL_WRITES"], c["MPIIO_NB_WRITES"]) == (4, 2, 2)
    assert (c["MPIIO_INDEP_READS"], c["MPIIO_COLL_READS"], c["MPIIO_NB_READS"]) == (2, 2, 2)
    assert c["MPIIO_BYTES_WRITTEN"] == 8 * BLOCK and c["MPIIO_BYTES_READ"] == 6 * BLOCK
    assert job.metadata.get("np") == "2"  # from the job's ranks: the sbatch line says none
    assert not list((tmp_path / "p").glob(".iolab-parts-*"))  # merged, then removed
    # the batch shell (SLURM_PROCID=0 but no step) and its cat are no rank: not on rank 0
    assert not [r for r in job.rows() if r.path.endswith("/input.txt")]
    assert any("outside the MPI ranks" in n for n in job.notes), job.notes


def test_profile_sbatch_job_script_hdf5_program(slurm_env: dict[str, str],
                                                tmp_path: Path) -> None:
    """The HDF5 layer is chosen from the program the script's srun runs (the script loads no
    HDF5): its datasets have H5D records."""
    inc, lib = Path("/usr/include/hdf5/openmpi"), Path("/usr/lib/x86_64-linux-gnu/hdf5/openmpi")
    if shutil.which("mpicc") is None or not inc.is_dir() \
            or not (LIBDIR / "libiolab-trace-hdf5.so").is_file():
        pytest.skip("mpicc, Open MPI's parallel HDF5 or libiolab-trace-hdf5.so missing")
    exe = tmp_path / "hdf5_groups"
    subprocess.run(["mpicc", "-O2", f"-I{inc}", "-o", str(exe),
                    str(PROG.parent / "hdf5_groups.c"), f"-L{lib}", "-lhdf5"], check=True)
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH -n 1\n#SBATCH -t 5\n"
                      f"srun --mpi=pmix {exe} {tmp_path}/g.h5\n")
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-q", "-o",
                          str(tmp_path / "p"), "--name", "job", "--", "sbatch", "-o",
                          str(tmp_path / "job.out"), str(script)],
                         env={**slurm_env, "IOLAB_LIBDIR": str(LIBDIR)}, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    job = load(tmp_path / "p" / "job.iolab")
    h5d = {r.path.split(".h5:", 1)[1] for r in job.rows() if r.module == "H5D"}
    assert h5d == {"/a", "/grp/b", "/grp/c", "/grp/sub/d", "/grp/sub/e"}
