"""The command lines iolab.launch builds for mpirun (Open MPI, MPICH), srun, sbatch, salloc;
and that the mpirun ones really start ranks."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from iolab import launch
from iolab.errors import UsageError
from iolab.launch import LaunchSpec

needs_openmpi = pytest.mark.skipif(shutil.which("mpirun.openmpi") is None and
                                   shutil.which("orterun") is None,
                                   reason="Open MPI's mpirun is not installed")
needs_mpich = pytest.mark.skipif(shutil.which("mpirun.mpich") is None,
                                 reason="MPICH's mpirun.mpich is not installed")
needs_srun = pytest.mark.skipif(shutil.which("srun") is None, reason="srun is not installed")

NO_SLURM = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}


@needs_openmpi
def test_open_mpi_command() -> None:
    spec = LaunchSpec(np=4, ppn=2, mpi="openmpi", extra=("--mca", "io", "romio321"),
                      env={"ROMIO_HINTS": "/tmp/h"})
    prep = launch.prepare(spec, ["iolab-bench", "--api", "mpiio"], NO_SLURM)
    assert prep.flavour == "openmpi" and prep.launcher == "mpirun"
    assert prep.argv == ["mpirun.openmpi", "-np", "4", "--oversubscribe", "--map-by",
                         "ppr:2:node", "-x", "ROMIO_HINTS", "--mca", "io", "romio321",
                         "iolab-bench", "--api", "mpiio"]
    assert prep.env["ROMIO_HINTS"] == "/tmp/h"
    if os.geteuid() == 0:
        assert prep.env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    assert prep.step_name is None


@needs_mpich
def test_mpich_command() -> None:
    spec = LaunchSpec(np=3, ppn=3, mpi="mpich", extra=("-genv", "X", "1"))
    prep = launch.prepare(spec, ["iolab-bench-mpich"], NO_SLURM)
    assert prep.flavour == "mpich"
    assert prep.argv == ["mpirun.mpich", "-np", "3", "-ppn", "3", "-genv", "X", "1",
                         "iolab-bench-mpich"]
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in prep.env or "OMPI_ALLOW_RUN_AS_ROOT" in NO_SLURM


@needs_openmpi
@needs_mpich
def test_flavour_detection_from_the_installed_programs() -> None:
    assert launch.mpi_flavour("mpirun.openmpi") == "openmpi"
    assert launch.mpi_flavour("mpirun.mpich") == "mpich"
    assert launch.mpi_flavour("mpiexec.hydra") == "mpich"


@needs_srun
def test_srun_command_and_auto_detection() -> None:
    env = {**NO_SLURM, "SLURM_JOB_ID": "42", "SLURM_NTASKS": "6"}
    spec = LaunchSpec(np=launch.default_np("srun", env), nodes=2, ppn=3,
                      extra=("--mpi=pmix",))
    prep = launch.prepare(spec, ["iolab-bench", "--api", "posix"], env, step_name="st")
    assert prep.launcher == "srun" and prep.step_name == "st"
    assert prep.argv == ["srun", "-n", "6", "-J", "st", "-N", "2", "--ntasks-per-node", "3",
                         "--export=ALL", "--kill-on-bad-exit=1", "--mpi=pmix",
                         "iolab-bench", "--api", "posix"]
    assert launch.prepare(spec, ["x"], env).step_name == f"iolab-{os.getpid()}"
    # outside an allocation, auto means mpirun; default ranks are 2
    assert launch.resolve_launcher(LaunchSpec(), NO_SLURM) == "mpirun"
    assert launch.default_np("srun", NO_SLURM) == 2
    assert launch.default_np("mpirun", env) == 2


def test_ranks_per_node_without_np_fills_the_allocations_nodes() -> None:
    """Was: --ppn 1 in a 2-node allocation of 4 tasks launched srun -n 4 --ntasks-per-node 1,
    and srun ran 2 ranks a node (its -n wins); a tune of ranks per node measured nothing."""
    env = {**NO_SLURM, "SLURM_JOB_ID": "42", "SLURM_NTASKS": "4", "SLURM_JOB_NUM_NODES": "2"}
    assert launch.default_np("srun", env, ppn=1) == 2
    assert launch.default_np("srun", env, ppn=2) == 4
    assert launch.default_np("srun", env) == 4
    assert launch.default_np("mpirun", env, ppn=1) == 2  # outside srun: iolab's default


@needs_srun
def test_srun_starts_mpich_ranks_with_pmi2() -> None:
    """Expected: one 4-rank MPICH job under srun; was: four 1-rank jobs (PMIx, the site's
    MpiDefault, is not MPICH's PMI), stored as an ok run of 1 rank."""
    env = {**NO_SLURM, "SLURM_JOB_ID": "42"}
    argv = launch.prepare(LaunchSpec(np=4, mpi="mpich"), ["x"], env, step_name="s").argv
    assert argv.count("--mpi=pmi2") == 1  # srun cannot list its PMIs here: MPICH's own
    assert argv[-3:] == ["--export=ALL", "--kill-on-bad-exit=1", "x"]
    mine = launch.prepare(LaunchSpec(np=4, mpi="mpich", extra=("--mpi", "pmix")), ["x"], env)
    assert "--mpi=pmi2" not in mine.argv and mine.argv[-3:] == ["--mpi", "pmix", "x"]
    assert "--mpi=pmi2" not in launch.prepare(LaunchSpec(np=4), ["x"], env).argv


def test_sbatch_and_salloc() -> None:
    spec = LaunchSpec(np=2, nodes=1, env={"IOLAB_DB": "/tmp/r db"})
    script = launch.sbatch_script(spec, ["iolab-bench", "--api", "null"], job_name="t",
                                  time_limit="00:05:00")
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert {"#SBATCH -J t", "#SBATCH -n 2", "#SBATCH -N 1", "#SBATCH -t 00:05:00"} <= set(lines)
    assert "export IOLAB_DB='/tmp/r db'" in lines
    assert lines[-1] == ("srun -n 2 -N 1 --export=ALL --kill-on-bad-exit=1 iolab-bench "
                         "--api null")
    assert launch.sbatch_command("job.sh", output="o.txt") == [
        "sbatch", "--parsable", "--wait", "-o", "o.txt", "job.sh"]
    assert launch.sbatch_command("job.sh", wait=False) == ["sbatch", "--parsable", "job.sh"]
    assert launch.salloc_command(spec, ["iolab", "bench"]) == [
        "salloc", "-n", "2", "-N", "1", "iolab", "bench"]


@pytest.mark.parametrize("kwargs,message", [
    ({"np": 0}, "--np must be at least 1"),
    ({"nodes": 0}, "--nodes must be at least 1"),
    ({"ppn": -1}, "--ppn must be at least 1"),
    ({"launcher": "aprun"}, "--launcher must be one of"),
    ({"mpi": "intel"}, "--mpi must be one of"),
    ({"np": 5, "nodes": 2, "ppn": 2}, "is not --nodes 2 x --ppn 2"),
])
def test_bad_specs(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        LaunchSpec(**kwargs)  # type: ignore[arg-type]


def test_no_mpirun_on_path() -> None:
    env = {**NO_SLURM, "PATH": "/nonexistent"}
    with pytest.raises(UsageError, match="no 'mpirun' found on PATH"):
        launch.prepare(LaunchSpec(np=2), ["x"], env)
    with pytest.raises(UsageError, match="'srun' is not on PATH"):
        launch.prepare(LaunchSpec(np=2, launcher="srun"), ["x"], env)


def test_launcher_none_and_args() -> None:
    assert launch.prepare(LaunchSpec(np=1, launcher="none"), ["a", "b"], NO_SLURM).argv == \
        ["a", "b"]
    with pytest.raises(UsageError, match="runs one process"):
        launch.prepare(LaunchSpec(np=2, launcher="none"), ["a"], NO_SLURM)
    assert launch.parse_launcher_args("--mca io 'rom io'") == ("--mca", "io", "rom io")
    with pytest.raises(UsageError, match="--launcher-args"):
        launch.parse_launcher_args("--bad 'quote")


@pytest.mark.parametrize("mpi", [
    pytest.param("openmpi", marks=needs_openmpi), pytest.param("mpich", marks=needs_mpich)])
def test_built_mpirun_command_starts_two_ranks(mpi: str) -> None:
    """The argv is not only well-formed: it really starts ranks (as root too)."""
    prep = launch.prepare(LaunchSpec(np=2, mpi=mpi), ["sh", "-c", "echo rank-up"], NO_SLURM)
    p = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split().count("rank-up") == 2


def test_allocation_bounds_are_checked_before_srun() -> None:
    """Expected: --np beyond the allocation is one line, before anything runs; was: srun
    failed and a run with case "? ?" was stored."""
    env = {"SLURM_JOB_ID": "7", "SLURM_NTASKS": "2", "SLURM_JOB_NUM_NODES": "1"}
    launch._check_allocation(launch.LaunchSpec(np=2), env)
    with pytest.raises(UsageError, match="has 2 tasks"):
        launch._check_allocation(launch.LaunchSpec(np=1000), env)
    with pytest.raises(UsageError, match="1 node"):
        launch._check_allocation(launch.LaunchSpec(np=2, nodes=2), env)
    launch._check_allocation(launch.LaunchSpec(np=1000, extra=("--overcommit",)), env)
    launch._check_allocation(launch.LaunchSpec(np=1000), {})  # not in an allocation


def test_the_users_pmi_choice_wins() -> None:
    spec = launch.LaunchSpec(np=2, mpi="mpich", extra=("--mpi=pmix",))
    assert launch.srun_pmi(spec, ["./app"], {}) is None
    spec = launch.LaunchSpec(np=2, mpi="mpich")
    assert launch.srun_pmi(spec, ["./app"], {"SLURM_MPI_TYPE": "pmi2"}) is None


def test_program_behind_env_is_found() -> None:
    assert launch._program_of(["env", "LD_PRELOAD=/x.so", "A=b", "./app", "-v"]) == "./app"
    assert launch._program_of(["/usr/bin/env", "./app"]) == "./app"
    assert launch._program_of(["./app", "A=b"]) == "./app"


def test_binary_mpi_reads_the_linked_library() -> None:
    from iolab.paths import engine_binary

    for mpi, flavour in (("default", "openmpi"), ("mpich", "mpich")):
        try:
            exe = engine_binary(mpi)
        except UsageError:
            continue
        assert launch.binary_mpi(exe) == flavour
    assert launch.binary_mpi("/bin/sh") is None  # not an MPI program
    assert launch.binary_mpi("/nonexistent") is None


@pytest.mark.parametrize("text,expected", [("2(x4)", 2), ("2", 2), ("3,3", 3), ("1(x2),1", 1),
                                           ("3(x2),1", None), ("2,1", None), ("", None),
                                           ("0", None), ("2(xa)", None), ("x", None)])
def test_tasks_per_node_of_an_allocation(text: str, expected: int | None) -> None:
    """Slurm's SLURM_TASKS_PER_NODE: one count when every node runs as many tasks."""
    assert launch.allocation_tasks_per_node({"SLURM_TASKS_PER_NODE": text}) == expected
