"""MPMD launch lines, ``iolab profile -- mpirun -np 1 ./a : -np 1 ./b`` (Open MPI and MPICH
syntax; srun's heterogeneous ``:`` parsed the same way): every program is found, every one
gets the tracer with what it needs (the union of the layers: an MPI-IO program beside an
HDF5 one), the ranks of all parts are recorded and the job's np is their sum.

Expected / was: only the first program was inspected (np 1 of 2), and Open MPI's ``-x``
before the first program applies to that part alone, so the second part ran untraced,
silently."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS, profile

from iolab.errors import UsageError
from iolab.profile import launchline

MPI = {  # mpi -> (compiler, launcher and its options, HDF5 flavour, MPI-IO shim)
    "openmpi": ("mpicc", ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"],
                "openmpi", LIBDIR / "libiolab-trace-mpi.so"),
    "mpich": ("mpicc.mpich", ["mpiexec.mpich"], "mpich",
              LIBDIR.parents[2] / "mpich" / "interpose" / "trace" / "libiolab-trace-mpi-mpich.so"),
}


def _build(mpi: str, tmp_path: Path) -> tuple[Path, Path]:
    cc, launcher, flavour, shim_lib = MPI[mpi]
    inc = Path(f"/usr/include/hdf5/{flavour}")
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None or not inc.is_dir():
        pytest.skip(f"{cc}, {launcher[0]} or parallel HDF5 for {flavour} is not installed")
    if not shim_lib.is_file():
        pytest.skip(f"{shim_lib.name} is not built (./setup)")
    a, b = tmp_path / f"mpiio-{mpi}", tmp_path / f"hdf5-{mpi}"
    src = str(PROGS / "mpi_mpmd_part.c")
    subprocess.run([cc, "-O2", "-o", str(a), src], check=True)
    subprocess.run([cc, "-O2", "-DUSE_HDF5", f"-I{inc}", "-o", str(b), src,
                    f"-L/usr/lib/x86_64-linux-gnu/hdf5/{flavour}", "-lhdf5"], check=True)
    return a, b


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_mpmd_line_traces_every_program(mpi: str, tmp_path: Path) -> None:
    """Rank 0 runs an MPI-IO program, rank 1 an HDF5 one, in one MPI_COMM_WORLD (each writes
    its own file on MPI_COMM_SELF): both ranks recorded, each with its layers."""
    a, b = _build(mpi, tmp_path)
    n = "-np" if mpi == "openmpi" else "-n"
    launcher = MPI[mpi][1]
    line = [*launcher, n, "1", str(a), str(tmp_path / "a.dat"), ":", n, "1", str(b),
            str(tmp_path / "b.h5")]
    parsed = launchline.parse(line)
    assert parsed is not None and parsed.np == 2
    assert [p[0] for _, p in parsed.contexts()] == [str(a), str(b)]
    run, job = profile(line, tmp_path / "p")
    assert job.nprocs == 2, (job.nprocs, run.stderr)
    mods = {(r.module, r.path.removeprefix(f"{tmp_path}/"), r.rank) for r in job.rows()}
    assert ("MPI-IO", "a.dat", 0) in mods and ("POSIX", "a.dat", 0) in mods, mods  # part 1
    assert ("H5D", "b.h5:/data", 1) in mods and ("H5F", "b.h5", 1) in mods, mods  # part 2
    assert ("MPI-IO", "b.h5", 1) in mods, mods  # below HDF5, in the second part


def test_mpmd_contexts_and_env_every_part() -> None:
    """Parsing: the programs behind each part's options, np summed (None when a part does not
    say), and the tracer's environment given to every part in the launcher's way."""
    if shutil.which("mpirun.openmpi") is None or shutil.which("mpiexec.mpich") is None:
        pytest.skip("Open MPI's and MPICH's launchers are both needed")
    env = {"LD_PRELOAD": "/x/t.so", "IOLAB_TRACE_DIR": "/d"}
    o = launchline.parse(["mpirun.openmpi", "-np", "2", "./a", "1", ":", "--np", "3", "-x",
                          "A=1", "./b", "-n", "2"])
    assert o is not None and o.np == 5
    assert o.contexts() == [(["-np", "2"], ["./a", "1"]),
                            (["--np", "3", "-x", "A=1"], ["./b", "-n", "2"])]
    head, tail = o.split_with_env(env)
    assert head == ["mpirun.openmpi", "-x", "LD_PRELOAD=/x/t.so", "-x", "IOLAB_TRACE_DIR=/d",
                    "-np", "2"]
    assert tail == ["./a", "1", ":", "-x", "LD_PRELOAD=/x/t.so", "-x", "IOLAB_TRACE_DIR=/d",
                    "--np", "3", "-x", "A=1", "./b", "-n", "2"]
    h = launchline.parse(["mpiexec.mpich", "-n", "1", "./a", ":", "-n", "2", "-env", "A", "1",
                          "./b"])
    assert h is not None and h.np == 3
    head, tail = h.split_with_env(env)
    assert head[1:4] == ["-genv", "LD_PRELOAD", "/x/t.so"] and tail == h.program  # global
    u = launchline.parse(["mpirun.openmpi", "-np", "2", "./a", ":", "./b"])
    assert u is not None and u.np is None  # the second part says no count


def test_mpmd_srun_export_every_component() -> None:
    """srun's heterogeneous step: --export in every component (each has its own)."""
    if shutil.which("srun") is None:
        pytest.skip("srun is not installed")
    s = launchline.parse(["srun", "-n", "2", "./a", ":", "-n", "1", "--export=NONE,B=2", "./b"])
    assert s is not None and s.np == 3
    head, tail = s.split_with_env({"LD_PRELOAD": "/x/t.so"})
    assert any(w.endswith("LD_PRELOAD=/x/t.so") and w.startswith("--export=ALL") for w in head)
    second = tail[tail.index(":") + 1:]
    exports = [w for w in second if w.startswith("--export")]
    assert exports == ["--export=NONE,B=2,LD_PRELOAD=/x/t.so"]
    assert second[-1] == "./b"


@pytest.mark.parametrize("second", [[":", "-np", "1"], [":", "-np", "1", "./no-such-b"]])
def test_mpmd_part_without_program_is_one_line_exit_2(second: list[str], tmp_path: Path) -> None:
    if shutil.which("mpirun.openmpi") is None:
        pytest.skip("mpirun.openmpi is not installed")
    line = ["mpirun.openmpi", "-np", "1", sys.executable, "-c", "pass", *second]
    if len(second) == 3:
        with pytest.raises(UsageError, match="part 2"):
            launchline.parse(line)
    out = tmp_path / "p"
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-o", str(out), "--", *line],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert ("no-such-b" in run.stderr) == (len(second) == 4)


def test_mpmd_part_that_cannot_be_traced_is_named(tmp_path: Path) -> None:
    """A statically linked part (the loader, hence LD_PRELOAD, never runs in it): one line
    naming it; the other part is traced as usual."""
    if shutil.which("mpirun.openmpi") is None or shutil.which("cc") is None:
        pytest.skip("mpirun.openmpi or cc is not installed")
    src = tmp_path / "w.c"
    src.write_text('#include <stdio.h>\nint main(int c, char **v) {\n'
                   '    FILE *f = fopen(v[1], "w"); fputs("x", f); return fclose(f); }\n')
    static, dyn = tmp_path / "static_w", tmp_path / "dynamic_w"
    if subprocess.run(["cc", "-static", "-o", str(static), str(src)],
                      capture_output=True).returncode != 0:
        pytest.skip("no static C library to link a static program")
    subprocess.run(["cc", "-o", str(dyn), str(src)], check=True)
    line = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", "1", str(static),
            str(tmp_path / "s.txt"), ":", "-np", "1", str(dyn), str(tmp_path / "d.txt")]
    run, job = profile(line, tmp_path / "p")
    said = [ln for ln in run.stderr.splitlines() if "statically linked" in ln]
    assert len(said) == 1 and str(static) in said[0], run.stderr
    paths = {r.path for r in job.rows() if r.module == "STDIO"}
    assert str(tmp_path / "d.txt") in paths and str(tmp_path / "s.txt") not in paths, paths
    assert (tmp_path / "s.txt").read_text() == "x"  # the untraced part ran as usual
