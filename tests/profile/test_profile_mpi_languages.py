"""MPI programs as users write them, traced at the MPI-IO layer: Fortran (``mpif.h``,
``use mpi``, ``use mpi_f08``) and C++, under Open MPI and MPICH, started with ``--np`` and
with the user's own ``mpirun``/``mpiexec`` line.

Expected / was: a Fortran or C++ program got no MPI-IO record at all (the shim was chosen
only when the program's own DT_NEEDED equalled the shim's, and Open MPI's Fortran bindings
call PMPI_File_* directly, past a wrapper of MPI_File_*).

Every program writes 4 blocks of 100 doubles per rank (2 independent, 1 collective,
1 non-blocking) and reads 3 back (1 of each kind), so the counters are known exactly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS, build_once, ints_except_time, profile, record

from iolab.model.raw import RawJob
from iolab.profile import launchline, shim

BLOCK = 100 * 8  # bytes of one block: 100 doubles
NP = 2

# (id, compiler per MPI library, extra flags, source)
PROGRAMS = {
    "fortran-mpif.h": (
        {"openmpi": "mpif90", "mpich": "mpif90.mpich"},
        ["-cpp"],
        "mpi_fortran_io.F90",
    ),
    "fortran-use-mpi": (
        {"openmpi": "mpif90", "mpich": "mpif90.mpich"},
        ["-cpp", "-DUSE_MPI"],
        "mpi_fortran_io.F90",
    ),
    "fortran-mpi_f08": (
        {"openmpi": "mpif90", "mpich": "mpif90.mpich"},
        ["-cpp", "-DUSE_F08"],
        "mpi_fortran_io.F90",
    ),
    "c++": ({"openmpi": "mpicxx", "mpich": "mpicxx.mpich"}, [], "mpi_cxx_io.cpp"),
}
LAUNCHERS = {"openmpi": "mpirun.openmpi", "mpich": "mpiexec.mpich"}
SHIM_MPICH = LIBDIR.parents[2] / "mpich" / "interpose" / "trace" / "libiolab-trace-mpi-mpich.so"


def _build(kind: str, mpi: str, outdir: Path) -> Path:
    compilers, flags, source = PROGRAMS[kind]
    cc = compilers[mpi]
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed (tools/install-deps.sh installs gfortran and MPI)")
    if shutil.which(LAUNCHERS[mpi]) is None:
        pytest.skip(f"{LAUNCHERS[mpi]} is not installed")
    if mpi == "mpich" and not SHIM_MPICH.is_file():
        pytest.skip(f"{SHIM_MPICH.name} is not built (./setup builds it in build/mpich)")
    exe = outdir / f"{kind.replace('+', 'x')}-{mpi}"

    def make() -> Path:
        subprocess.run([cc, "-O2", *flags, "-o", str(exe), str(PROGS / source)], check=True,
                       cwd=outdir)
        return exe

    return build_once(("mpi_languages", kind, mpi), make)


def _expected(ranks: int) -> dict[str, int]:
    """The shared file's MPI-IO counters, reduced over the ranks (as Darshan's)."""
    return {
        "COLL_OPENS": ranks,
        "INDEP_WRITES": 2 * ranks,
        "COLL_WRITES": ranks,
        "NB_WRITES": ranks,
        "INDEP_READS": ranks,
        "COLL_READS": ranks,
        "NB_READS": ranks,
        "BYTES_WRITTEN": 4 * BLOCK * ranks,
        "BYTES_READ": 3 * BLOCK * ranks,
        "SIZE_WRITE_AGG_100_1K": 4 * ranks,
        "SIZE_READ_AGG_100_1K": 3 * ranks,
        "ACCESS1_ACCESS": BLOCK,
        "ACCESS1_COUNT": 7 * ranks,
        "RW_SWITCHES": ranks,
    }


def _check(job: RawJob, data: Path, ranks: int) -> None:
    assert job.nprocs == ranks
    m = record(job, "MPI-IO", data.name)
    got = ints_except_time(m)
    for name, value in _expected(ranks).items():
        assert got[f"MPIIO_{name}"] == value, name
    assert got["MPIIO_INDEP_OPENS"] == 0 and got["MPIIO_SPLIT_WRITES"] == 0
    # what MPI-IO did below, in POSIX, is there too, with every byte (Open MPI's OMPIO writes
    # the non-blocking accesses with aio_write and collects them with aio_return)
    posix = [r for r in job.rows() if r.module == "POSIX" and r.path.endswith("/" + data.name)]
    assert sum(r.counters["POSIX_BYTES_WRITTEN"] for r in posix) >= 4 * BLOCK * ranks
    assert sum(r.counters["POSIX_BYTES_READ"] for r in posix) >= 3 * BLOCK * ranks


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
@pytest.mark.parametrize("kind", list(PROGRAMS))
def test_mpiio_counters_any_language_np(kind: str, mpi: str, tmp_path: Path) -> None:
    exe = _build(kind, mpi, tmp_path)
    data = tmp_path / "shared.dat"
    _, job = profile([str(exe), str(data)], tmp_path / "p", np=NP,
                     mpi="mpich" if mpi == "mpich" else None)
    _check(job, data, NP)


def _user_line(mpi: str, exe: Path, data: Path) -> list[str]:
    if mpi == "openmpi":  # options with values before the program: -np 2, --map-by slot, -x
        return [LAUNCHERS[mpi], "--allow-run-as-root", "--oversubscribe", "-np", str(NP),
                "--map-by", "slot", "-x", "OMP_NUM_THREADS=1", str(exe), str(data)]
    return [LAUNCHERS[mpi], "-n", str(NP), "-genv", "OMP_NUM_THREADS", "1", str(exe), str(data)]


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
@pytest.mark.parametrize("kind", ["fortran-mpi_f08", "c++"])
def test_mpiio_counters_user_launch_line(kind: str, mpi: str, tmp_path: Path) -> None:
    """iolab profile -- mpirun ... ./app: the ranks are traced, the launcher is not."""
    exe = _build(kind, mpi, tmp_path)
    data = tmp_path / "shared.dat"
    _, job = profile(_user_line(mpi, exe, data), tmp_path / "p")
    _check(job, data, NP)
    assert not any("mpirun" in r.path or "orted" in r.path for r in job.rows())


def test_shim_chosen_through_the_dependency_tree(tmp_path: Path) -> None:
    """mpif90's program links libmpi_usempif08 (and, through it, libmpi), not libmpi itself:
    the shim is still the Open MPI one."""
    exe = _build("fortran-mpi_f08", "openmpi", tmp_path)
    needed = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True).stdout
    assert "libmpi_usempif08" in needed
    mpi_lib = shim.mpi_library(str(exe))
    assert mpi_lib is not None and Path(mpi_lib).name.startswith("libmpi.so")
    os.environ.setdefault("IOLAB_LIBDIR", str(LIBDIR))
    chosen = shim.choose(str(exe), mpi_launch=False, flavour="default")
    assert chosen is not None and chosen.name == "libiolab-trace-mpi.so"


def test_pmpi_called_by_a_tool_counts_once(tmp_path: Path) -> None:
    """A wrapper of MPI_x and PMPI_x both: MPI_x -> PMPI_x inside the library must count one
    call. The C++ program reads one block through PMPI_File_read_at directly."""
    exe = _build("c++", "openmpi", tmp_path)
    data = tmp_path / "shared.dat"
    _, job = profile([str(exe), str(data)], tmp_path / "p", np=1)
    m = record(job, "MPI-IO", data.name)
    assert m.counters["MPIIO_INDEP_READS"] == 1 and m.counters["MPIIO_INDEP_OPENS"] == 1


LINES = [
    # (line, launcher kind, program index, np)
    (["mpirun.openmpi", "-np", "4", "--mca", "btl", "self", "./app", "-n", "3"], "openmpi", 6, 4),
    (["mpirun.openmpi", "--np=2", "-x", "A=1", "--bind-to", "none", "app"], "openmpi", 6, 2),
    (["mpiexec.mpich", "-n", "3", "-genv", "A", "1", "-ppn", "1", "./app"], "mpich", 8, 3),
    (["srun", "-n4", "-N", "1", "--mpi=pmix", "-l", "./app", "x"], "slurm", 6, 4),
    (["srun", "--ntasks", "2", "--export", "ALL", "--", "./app"], "slurm", 6, 2),
]


@pytest.mark.parametrize(("line", "kind", "at", "np"), LINES)
def test_launch_line_program_found(line: list[str], kind: str, at: int, np: int) -> None:
    if shutil.which(line[0]) is None:
        pytest.skip(f"{line[0]} is not installed")
    parsed = launchline.parse(line)
    assert parsed is not None and parsed.kind == kind
    assert parsed.program == line[at:] and parsed.np == np
    env = {"LD_PRELOAD": "/x/libiolab-trace.so", "IOLAB_TRACE_DIR": "/d"}
    out = parsed.with_env(env)
    assert out[-len(parsed.program):] == parsed.program  # program and its args untouched
    if kind == "openmpi":
        assert out[1:5] == ["-x", "LD_PRELOAD=/x/libiolab-trace.so", "-x", "IOLAB_TRACE_DIR=/d"]
    elif kind == "mpich":
        assert out[1:4] == ["-genv", "LD_PRELOAD", "/x/libiolab-trace.so"]
    else:
        exports = [a for a in out if "LD_PRELOAD=" in a]
        tail = "LD_PRELOAD=/x/libiolab-trace.so,IOLAB_TRACE_DIR=/d"
        assert len(exports) == 1 and exports[0].endswith(tail)
        assert "ALL" in exports[0]


@pytest.mark.parametrize(
    "line",
    [["mpirun.openmpi", "-np", "2"], ["mpirun.openmpi", "-np", "2", "./no-such-program"],
     ["mpiexec.mpich", "-n", "2", "-genv", "A", "1"]],
)
def test_launch_line_without_program_is_one_line_exit_2(line: list[str], tmp_path: Path) -> None:
    if shutil.which(line[0]) is None:
        pytest.skip(f"{line[0]} is not installed")
    out = tmp_path / "p"
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-o", str(out), "--", *line],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert "program" in run.stderr
    assert not out.exists() or not any(out.iterdir())


def test_np_with_a_launch_line_is_refused(tmp_path: Path) -> None:
    if shutil.which("mpirun.openmpi") is None:
        pytest.skip("Open MPI is not installed")
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-o", str(tmp_path / "p"),
                          "--np", "2", "--", "mpirun.openmpi", "-np", "2", "true"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--np" in run.stderr


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_nested_pmpi_call_counted_once(mpi: str, tmp_path: Path) -> None:
    """A PMPI layer below the tracer whose PMPI_File_write_all calls PMPI_File_write_at_all
    (which binds to the tracer's wrapper again): the depth guard counts the program's one
    call. Without the guard each write_all counts twice."""
    cc = {"openmpi": "mpicc", "mpich": "mpicc.mpich"}[mpi]
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    if mpi == "mpich" and not SHIM_MPICH.is_file():
        pytest.skip(f"{SHIM_MPICH.name} is not built")
    tool, exe = tmp_path / "libtool.so", tmp_path / "write_all"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(tool),
                    str(PROGS / "pmpi_nested_tool.c")], check=True)
    subprocess.run([cc, "-O2", "-o", str(exe), str(PROGS / "mpi_write_all.c")], check=True)
    data = tmp_path / "w.dat"
    _, job = profile([str(exe), str(data)], tmp_path / "p", extra_env={"LD_PRELOAD": str(tool)})
    m = record(job, "MPI-IO", "w.dat")
    c = m.counters
    assert (c["MPIIO_COLL_WRITES"], c["MPIIO_INDEP_WRITES"], c["MPIIO_BYTES_WRITTEN"]) == (
        3, 0, 3 * 4096)
    assert data.stat().st_size == 3 * 4096  # the tool did the writing, at the right places


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_job_script_running_the_launcher(mpi: str, tmp_path: Path) -> None:
    """iolab profile -- ./job.sh, a script that runs mpirun/mpiexec itself (as a batch script
    does): the MPI shim of that launcher's MPI goes to the ranks through the environment. The
    script's own commands (here a `cat` of an input file) are no rank: their files are left
    out of the ranks, not counted on rank 0, and a note says so."""
    exe = _build("fortran-use-mpi", mpi, tmp_path)
    data = tmp_path / "shared.dat"
    script = tmp_path / "job.sh"
    (tmp_path / "input.txt").write_text("x" * 5000)
    script.write_text("#!/bin/sh\n# a job script\nset -e\ncd \"$(dirname \"$0\")\"\n"
                      "cat input.txt > /dev/null\n"
                      + " ".join(_user_line(mpi, exe, data)) + "\n")
    script.chmod(0o755)
    assert launchline.script_launcher(str(script)) == mpi
    _, job = profile([str(script)], tmp_path / "p")
    _check(job, data, NP)
    assert not [r for r in job.rows() if r.path.endswith("/input.txt")]
    assert any("outside the MPI ranks" in n and "cat" in n for n in job.notes), job.notes


def test_script_launcher_ignores_comments_and_words(tmp_path: Path) -> None:
    script = tmp_path / "s.sh"
    script.write_text("#!/bin/bash\n# mpirun -np 4 ./app\necho 'use srun-like tools'\nls\n")
    assert launchline.script_launcher(str(script)) is None
    script.write_text("#!/bin/bash\nmodule load x && srun -n 4 ./app\n")
    assert launchline.script_launcher(str(script)) == "slurm"
