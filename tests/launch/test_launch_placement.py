"""Placement knobs on the launch line: --cpu-bind, --cpus-per-rank, --ppn, --cpu-freq,
--core-spec, --membind, for srun, sbatch, salloc and both mpiruns; what needs Slurm says so
in one line; and a real mpirun run binds as asked (the engine records each rank's CPU set)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from iolab import launch
from iolab.errors import UsageError
from iolab.launch import LaunchSpec
from iolab.paths import engine_binary

NO_SLURM = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
needs_openmpi = pytest.mark.skipif(shutil.which("mpirun.openmpi") is None,
                                   reason="Open MPI's mpirun.openmpi is not installed")
needs_mpich = pytest.mark.skipif(shutil.which("mpirun.mpich") is None,
                                 reason="MPICH's mpirun.mpich is not installed")
needs_srun = pytest.mark.skipif(shutil.which("srun") is None, reason="srun is not installed")
needs_numactl = pytest.mark.skipif(shutil.which("numactl") is None,
                                   reason="numactl is not installed")


def _slurm_env() -> dict[str, str]:
    """An allocation's environment with one PMI chosen (no srun --mpi=list asked)."""
    return {**NO_SLURM, "SLURM_JOB_ID": "7", "SLURM_NTASKS": "8", "SLURM_MPI_TYPE": "pmix"}


# (spec keywords, Open MPI's placement words, MPICH's)
MPIRUN_CASES = [
    ({"cpu_bind": "cores"}, ["--bind-to", "core"], ["-bind-to", "core"]),
    ({"cpu_bind": "threads"}, ["--bind-to", "hwthread"], ["-bind-to", "hwthread"]),
    ({"cpu_bind": "sockets"}, ["--bind-to", "socket"], ["-bind-to", "socket"]),
    ({"cpu_bind": "numa"}, ["--bind-to", "numa"], ["-bind-to", "numa"]),
    ({"cpu_bind": "none"}, ["--bind-to", "none"], ["-bind-to", "none"]),
    ({"cpus_per_rank": 2}, ["--map-by", "slot:PE=2"], ["-bind-to", "core:2"]),
    ({"cpus_per_rank": 2, "cpu_bind": "cores"}, ["--map-by", "slot:PE=2", "--bind-to", "core"],
     ["-bind-to", "core:2"]),
    ({"ppn": 2, "cpus_per_rank": 3, "cpu_bind": "cores"},
     ["--map-by", "ppr:2:node:PE=3", "--bind-to", "core"], ["-ppn", "2", "-bind-to", "core:3"]),
    ({"ppn": 2}, ["--map-by", "ppr:2:node"], ["-ppn", "2"]),
]


@needs_openmpi
@pytest.mark.parametrize(("kw", "ompi", "_mpich"), MPIRUN_CASES)
def test_open_mpi_binding_flags(kw: dict, ompi: list[str], _mpich: list[str]) -> None:
    spec = LaunchSpec(np=4, mpi="openmpi", **kw)
    prep = launch.prepare(spec, ["iolab-bench"], NO_SLURM)
    assert prep.argv == ["mpirun.openmpi", "-np", "4", "--oversubscribe", *ompi, "iolab-bench"]


@needs_mpich
@pytest.mark.parametrize(("kw", "_ompi", "mpich"), MPIRUN_CASES)
def test_mpich_binding_flags(kw: dict, _ompi: list[str], mpich: list[str]) -> None:
    spec = LaunchSpec(np=4, mpi="mpich", **kw)
    prep = launch.prepare(spec, ["iolab-bench-mpich"], NO_SLURM)
    assert prep.argv == ["mpirun.mpich", "-np", "4", *mpich, "iolab-bench-mpich"]


@pytest.fixture
def binding_slurm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The line only: a Slurm whose task plugin binds (the refusal of task/none is tested on
    the real one-node Slurm, tests/slurm/test_slurm_placement.py)."""
    monkeypatch.setattr(launch, "slurm_task_plugin", lambda env=None: "task/affinity")


@needs_srun
def test_srun_placement_flags(binding_slurm: None) -> None:
    spec = LaunchSpec(np=4, ppn=2, cpu_bind="cores", cpus_per_rank=2, cpu_freq="high",
                      launcher="srun")
    prep = launch.prepare(spec, ["iolab-bench"], _slurm_env())
    assert prep.argv[:prep.argv.index("--export=ALL")] == [
        "srun", "-n", "4", "-J", prep.step_name, "--ntasks-per-node", "2",
        "--cpus-per-task", "2", "--cpu-bind=cores", "--cpu-freq=high"]
    assert prep.argv[-1] == "iolab-bench"
    # Slurm's own forms pass through; numa is Slurm's ldoms
    for word, flag in (("map_cpu:0,1", "--cpu-bind=map_cpu:0,1"), ("numa", "--cpu-bind=ldoms"),
                       ("rank", "--cpu-bind=rank")):
        argv = launch.prepare(LaunchSpec(np=2, cpu_bind=word, launcher="srun"), ["x"],
                              _slurm_env()).argv
        assert flag in argv


@needs_srun
def test_core_spec_is_the_allocations() -> None:
    """Inside an allocation srun cannot set core specialization: one line saying where it
    goes; salloc and sbatch ask for it (-S), srun outside an allocation too."""
    spec = LaunchSpec(np=2, core_spec=1, launcher="srun")
    with pytest.raises(UsageError, match=r"--core-spec 1 must be requested when the "
                                         r"allocation is made \(salloc -S 1"):
        launch.prepare(spec, ["iolab-bench"], _slurm_env())
    outside = {**NO_SLURM, "SLURM_MPI_TYPE": "pmix"}
    assert ["--core-spec", "1"] == [a for a in launch.prepare(spec, ["x"], outside).argv
                                    if a in ("--core-spec", "1")][:2]
    assert launch.salloc_command(spec, ["iolab", "bench"])[:5] == ["salloc", "-n", "2", "-S",
                                                                   "1"]
    script = launch.sbatch_script(spec, ["iolab-bench"])
    assert "#SBATCH -S 1\n" in script
    assert "--core-spec" not in script.splitlines()[-1]  # the step inherits it


@pytest.mark.parametrize("kw", [{"cpu_freq": "high"}, {"core_spec": 2}])
def test_slurm_only_options_refused_under_mpirun(kw: dict) -> None:
    flag = "--" + next(iter(kw)).replace("_", "-")
    with pytest.raises(UsageError, match=f"^{flag} needs Slurm .*--launcher srun$"):
        launch.prepare(LaunchSpec(np=2, launcher="mpirun", **kw), ["x"], NO_SLURM)


@pytest.mark.parametrize(("kw", "msg"), [
    ({"cpu_bind": "map_cpu:0,1", "launcher": "mpirun"}, "mpirun binds to one of none, cores"),
    ({"cpus_per_rank": 0}, "--cpus-per-rank must be at least 1"),
    ({"core_spec": -1}, "--core-spec must be 0 or more"),
    ({"membind": "zero"}, "--membind 'zero': give NUMA node numbers"),
    ({"cpu_freq": "low,high"}, "--cpu-freq 'low,high': one value per launch"),
    ({"cpu_bind": "cores", "launcher": "none", "np": 1}, "need a launcher"),
])
def test_bad_placement_is_one_line(kw: dict, msg: str) -> None:
    with pytest.raises(UsageError, match=msg.replace("(", r"\(")):
        launch.prepare(LaunchSpec(**{"np": 2, **kw}), ["x"], NO_SLURM)


@needs_numactl
def test_membind_wraps_each_rank_in_numactl() -> None:
    spec = LaunchSpec(np=2, mpi="mpich", membind="0")
    argv = launch.prepare(spec, ["iolab-bench", "--api", "null"], NO_SLURM).argv
    assert argv[-5:] == ["numactl", "--membind=0", "iolab-bench", "--api", "null"]
    srun = launch.prepare(LaunchSpec(np=2, membind="0-1", launcher="srun"), ["e"],
                          _slurm_env()).argv
    assert srun[-3:] == ["numactl", "--membind=0-1", "e"]


def _placement(argv: list[str]) -> list[dict]:
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    return sorted(doc["environment"]["placement"], key=lambda r: r["rank"])


def _engine(mpi: str) -> str:
    try:
        return str(engine_binary(mpi))
    except UsageError as exc:
        pytest.skip(str(exc))


needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                                    reason="binding two ranks to their own core needs 2 CPUs")


@needs_two_cpus
@pytest.mark.parametrize("mpi", [pytest.param("openmpi", marks=needs_openmpi),
                                 pytest.param("mpich", marks=needs_mpich)])
def test_cpu_bind_cores_for_real(mpi: str) -> None:
    """--cpu-bind cores through the built launch line: each rank on one CPU of its own, as
    the engine's sched_getaffinity recorded it; without it, both see every CPU."""
    engine = _engine("default" if mpi == "openmpi" else "mpich")
    args = [engine, "--api", "null", "--quiet"]
    bound = launch.prepare(LaunchSpec(np=2, mpi=mpi, cpu_bind="cores"), args, NO_SLURM)
    ranks = _placement(bound.argv)
    assert [r["ncpus"] for r in ranks] == [1, 1]
    assert ranks[0]["cpus"] != ranks[1]["cpus"]
    assert all(r["cpu_start"] == int(r["cpus"]) for r in ranks)  # it ran where it was bound
    free = _placement(launch.prepare(LaunchSpec(np=2, mpi=mpi, cpu_bind="none"), args,
                                     NO_SLURM).argv)
    assert [r["ncpus"] for r in free] == [len(os.sched_getaffinity(0))] * 2


@needs_two_cpus
@pytest.mark.parametrize("ppn", [None, 1])
@pytest.mark.parametrize("mpi", [pytest.param("openmpi", marks=needs_openmpi),
                                 pytest.param("mpich", marks=needs_mpich)])
def test_cpus_per_rank_for_real(mpi: str, ppn: int | None) -> None:
    """Two CPUs for the rank, with and without ranks per node (Open MPI's ppr:1:node:PE=2)."""
    engine = _engine("default" if mpi == "openmpi" else "mpich")
    spec = LaunchSpec(np=1, ppn=ppn, mpi=mpi, cpus_per_rank=2, cpu_bind="cores")
    (rank,) = _placement(launch.prepare(spec, [engine, "--api", "null", "--quiet"],
                                        NO_SLURM).argv)
    assert rank["ncpus"] == 2


@needs_numactl
@needs_mpich
def test_membind_for_real() -> None:
    engine = _engine("mpich")
    spec = LaunchSpec(np=2, mpi="mpich", membind="0")
    ranks = _placement(launch.prepare(spec, [engine, "--api", "null", "--quiet"],
                                      NO_SLURM).argv)
    assert [r["mempolicy"] for r in ranks] == ["bind", "bind"]
