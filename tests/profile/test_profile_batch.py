"""``iolab profile -- sbatch [options] job.sh``: the job script found behind sbatch's options,
the tracer exported the way sbatch does (``--export``, the line's or the script's own
``#SBATCH --export`` kept), ``--wait`` added, and the lines that cannot work refused with one
line and exit 2 before anything is made. The jobs themselves run in
``tests/slurm/test_slurm_profile.py``.

Expected / was: sbatch was run as a plain program: iolab profiled sbatch itself, which
returns at submission, and merged an empty profile while the job had not started.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from iolab.profile import batch, launchline

ENV = {"LD_PRELOAD": "/x/libiolab-trace.so", "IOLAB_TRACE_DIR": "/d"}
PAIRS = "LD_PRELOAD=/x/libiolab-trace.so,IOLAB_TRACE_DIR=/d"


def _script(tmp_path: Path, directives: str = "") -> Path:
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH -n 2\n{directives}\nsrun ./app\n"
                      "#SBATCH --export=NONE is no directive after a command\n")
    return script


@pytest.mark.parametrize(
    ("opts", "args"),
    [([], []), (["-n", "4", "-t", "5", "-J", "x"], ["a", "-n", "1"]),
     (["--ntasks=2", "-W", "--partition", "debug", "-o", "out"], []),
     (["--wait", "--export", "ALL,A=1", "-N1"], ["x"])],
)
def test_sbatch_script_found_and_exported(opts: list[str], args: list[str],
                                          tmp_path: Path) -> None:
    script = str(_script(tmp_path))
    line = launchline.parse(["sbatch", *opts, script, *args])
    assert line is not None and line.kind == "sbatch"
    assert line.program == [script, *args] and line.np is None
    out = line.with_env(ENV)
    assert out[-len(line.program):] == line.program  # script and its arguments untouched
    assert out.count("--wait") + out.count("-W") == 1  # added once when missing
    exports = [a for a in out if "LD_PRELOAD=" in a]
    assert len(exports) == 1 and exports[0].endswith(PAIRS)
    assert ("A=1," in exports[0]) == ("ALL,A=1" in opts)  # the line's own list kept
    assert "ALL," in exports[0]


@pytest.mark.parametrize(("directive", "expected"),
                         [("#SBATCH --export=NONE", f"--export={PAIRS}"),
                          ("#SBATCH -J x --export HOME,PATH", f"--export=HOME,PATH,{PAIRS}"),
                          ("", f"--export=ALL,{PAIRS}")])
def test_sbatch_export_directive_of_the_script_kept(directive: str, expected: str,
                                                    tmp_path: Path) -> None:
    """A command-line --export overrides the script's #SBATCH one: iolab's must carry it."""
    script = _script(tmp_path, directive)
    line = launchline.parse(["sbatch", str(script)])
    assert line is not None and expected in line.with_env(ENV)


def test_sbatch_value_with_a_comma_refused(tmp_path: Path) -> None:
    line = launchline.parse(["sbatch", str(_script(tmp_path))])
    assert line is not None
    with pytest.raises(launchline.UsageError, match="','"):
        line.with_env({"IOLAB_TRACE_DIR": "/a,b"})


@pytest.mark.parametrize(
    ("argv", "words"),
    [(["sbatch", "-n", "2"], "no job script"),
     (["sbatch", "-n", "2", "--wrap", "srun ./app"], "--wrap"),
     (["sbatch", "--wrap=srun ./app"], "--wrap"),
     (["sbatch", "-J", "x", "no-such-job.sh"], "not a file"),
     (["--np", "2", "--", "sbatch", "JOB"], "--np"),
     (["sbatch", "--array=1-4", "JOB"], "--array"), (["sbatch", "-a", "1-4", "JOB"], "--array"),
     (["sbatch", "ARRAY"], "--array"), (["-o", "a,b", "--", "sbatch", "JOB"], "','")],
)
def test_sbatch_lines_that_cannot_work_are_one_line_exit_2(argv: list[str], words: str,
                                                           tmp_path: Path) -> None:
    script = _script(tmp_path)
    array = tmp_path / "array.sh"
    array.write_text("#!/bin/bash\n#SBATCH -n 1 -a1-4\nsrun ./app\n")
    argv = [str(script) if a == "JOB" else str(array) if a == "ARRAY" else a for a in argv]
    if "--" not in argv:
        argv = ["--", *argv]
    out = tmp_path / ("a,b" if "a,b" in argv else "p")
    if "-o" not in argv:
        argv = ["-o", str(out), *argv]
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", *argv],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert words in run.stderr
    assert not out.exists()


def test_file_system_type_of_a_folder(tmp_path: Path) -> None:
    assert batch.fs_type(Path("/proc/self")) == "proc"
    assert batch.fs_type(tmp_path) not in (None, "proc")


@pytest.mark.parametrize(
    ("line", "kind", "found"),
    [("srun -n 2 --mpi=pmix ./app in.dat > log 2>&1", "slurm", True),
     ("module load x && time srun -n2 ./app", "slurm", True),
     ("srun -n 2 $EXE", "slurm", False), ("srun -n 2 ./missing", "slurm", False),
     ("echo no launcher", None, False)],
)
def test_job_script_program_found_for_the_shims(line: str, kind: str | None, found: bool,
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The program a job script's launch line runs, when it is a file as written: its MPI and
    I/O libraries (HDF5, PnetCDF) choose the shims, not the script's (which loads none)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").write_text("")
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH -n 2\n# srun ./commented\n{line}\n")
    assert launchline.script_target(str(script)) == (kind, "./app" if found else None)


def test_job_script_hdf5_program_gets_the_hdf5_layer(tmp_path: Path) -> None:
    """iolab profile -- ./job.sh whose mpirun line runs an HDF5 program: H5F/H5D recorded
    (before, the layer shims were chosen from the script, which loads no HDF5)."""
    import shutil

    from trace_helpers import LIBDIR, PROGS, profile

    inc, lib = Path("/usr/include/hdf5/openmpi"), Path("/usr/lib/x86_64-linux-gnu/hdf5/openmpi")
    if shutil.which("mpicc") is None or shutil.which("mpirun.openmpi") is None \
            or not inc.is_dir() or not (LIBDIR / "libiolab-trace-hdf5.so").is_file():
        pytest.skip("Open MPI, its parallel HDF5 or libiolab-trace-hdf5.so missing")
    exe = tmp_path / "hdf5_groups"
    subprocess.run(["mpicc", "-O2", f"-I{inc}", "-o", str(exe), str(PROGS / "hdf5_groups.c"),
                    f"-L{lib}", "-lhdf5"], check=True)
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\nexport OMPI_ALLOW_RUN_AS_ROOT=1 "
                      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                      f"mpirun.openmpi -np 1 {exe} {tmp_path}/g.h5\n")
    script.chmod(0o755)
    _, job = profile([str(script)], tmp_path / "p")
    h5d = {r.path.split(".h5:", 1)[1] for r in job.rows() if r.module == "H5D"}
    assert h5d == {"/a", "/grp/b", "/grp/c", "/grp/sub/d", "/grp/sub/e"}
    assert any(r.module == "H5F" for r in job.rows())


@pytest.mark.parametrize(("opts", "directive"), [(["-D", "sub"], ""), (["--chdir=sub"], ""),
                                                 ([], "#SBATCH --chdir=sub")])
def test_job_script_program_found_in_the_jobs_folder(opts: list[str], directive: str,
                                                     tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """sbatch -D DIR (or #SBATCH --chdir): the job starts in DIR, so ./app is DIR/app."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "app").write_text("")
    script = _script(tmp_path, directive)
    line = launchline.parse(["sbatch", *opts, str(script)])
    assert line is not None and launchline.batch_dir(line) == "sub"
    assert launchline.script_target(str(script), cwd="sub") == ("slurm", "sub/./app")
    assert launchline.script_target(str(script)) == ("slurm", None)  # no ./app here
