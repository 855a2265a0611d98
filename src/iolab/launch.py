"""The one place that builds ``mpirun`` / ``srun`` / ``sbatch`` command lines.

Every verb that starts parallel processes (bench, profile, later tune and study) describes
what it wants as a :class:`LaunchSpec` and gets back an argv and an environment. MPI is the
distributed engine; Slurm places the ranks on a cluster. Nothing here starts a process.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from iolab.errors import UsageError

LAUNCHERS = ("auto", "mpirun", "srun", "none")
MPI_FLAVOURS = ("default", "openmpi", "mpich")


@dataclass(frozen=True)
class LaunchSpec:
    """How many processes, where, and with which launcher and MPI library."""

    np: int = 1
    nodes: int | None = None
    ppn: int | None = None  # processes per node
    launcher: str = "auto"
    mpi: str = "default"  # which MPI library's mpirun (must match the binary's build)
    extra: tuple[str, ...] = ()  # passed to the launcher verbatim
    env: Mapping[str, str] = field(default_factory=dict)  # set for every rank

    def __post_init__(self) -> None:
        if self.np < 1:
            raise UsageError(f"--np must be at least 1 (got {self.np})")
        if self.nodes is not None and self.nodes < 1:
            raise UsageError(f"--nodes must be at least 1 (got {self.nodes})")
        if self.ppn is not None and self.ppn < 1:
            raise UsageError(f"--ppn must be at least 1 (got {self.ppn})")
        if self.launcher not in LAUNCHERS:
            raise UsageError(f"--launcher must be one of {', '.join(LAUNCHERS)} (got {self.launcher!r})")
        if self.mpi not in MPI_FLAVOURS:
            raise UsageError(f"--mpi must be one of {', '.join(MPI_FLAVOURS)} (got {self.mpi!r})")


def in_slurm_allocation(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return bool(env.get("SLURM_JOB_ID")) and shutil.which("srun") is not None


def resolve_launcher(spec: LaunchSpec, environ: Mapping[str, str] | None = None) -> str:
    """``auto`` means srun inside a Slurm allocation, mpirun elsewhere."""
    if spec.launcher != "auto":
        return spec.launcher
    return "srun" if in_slurm_allocation(environ) else "mpirun"


def mpirun_program(mpi: str) -> str:
    """The mpirun of the MPI library the program was built with (Debian installs both)."""
    names = {"default": ["mpirun", "mpiexec"], "openmpi": ["mpirun.openmpi", "mpirun"],
             "mpich": ["mpirun.mpich", "mpiexec.mpich", "mpiexec.hydra"]}[mpi]
    for n in names:
        if shutil.which(n):
            return n
    raise UsageError(
        f"no '{names[0]}' found on PATH; install MPI (./setup does it on Debian) "
        "or 'module load' your site's MPI, or use --launcher srun inside a Slurm allocation"
    )


def _is_open_mpi(program: str) -> bool:
    path = shutil.which(program) or program
    real = os.path.realpath(path)
    return "openmpi" in real or "orterun" in real or "mpich" not in real and "hydra" not in real


def _srun_argv(spec: LaunchSpec, argv: Sequence[str]) -> list[str]:
    cmd = ["srun", "-n", str(spec.np)]
    if spec.nodes:
        cmd += ["-N", str(spec.nodes)]
    if spec.ppn:
        cmd += ["--ntasks-per-node", str(spec.ppn)]
    return [*cmd, "--export=ALL", *spec.extra, *argv]


def build_command(
    spec: LaunchSpec, argv: Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """Return (argv, environment) that start ``argv`` as ``spec`` says."""
    base_env = dict(os.environ if environ is None else environ)
    env = {**base_env, **spec.env}
    launcher = resolve_launcher(spec, base_env)
    if launcher == "none":
        if spec.np != 1:
            raise UsageError("--launcher none runs one process; use --np 1 or another launcher")
        return list(argv), env
    if launcher == "srun":
        if shutil.which("srun") is None:
            raise UsageError("'srun' is not on PATH; use --launcher mpirun or load Slurm")
        return _srun_argv(spec, argv), env
    prog = mpirun_program(spec.mpi)
    cmd = [prog, "-np", str(spec.np)]
    if _is_open_mpi(prog):
        # Laptops and CI have fewer cores than ranks; Open MPI refuses that by default.
        cmd.append("--oversubscribe")
        if spec.ppn:
            cmd += ["--map-by", f"ppr:{spec.ppn}:node"]
        for name in spec.env:  # forwarded to remote nodes too
            cmd += ["-x", name]
        if os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    else:  # MPICH's hydra forwards the whole environment by default
        if spec.ppn:
            cmd += ["-ppn", str(spec.ppn)]
    cmd += [*spec.extra, *argv]
    return cmd, env


def sbatch_script(spec: LaunchSpec, argv: Sequence[str], job_name: str = "iolab",
                  time_limit: str = "00:30:00") -> str:
    """A batch script that runs ``argv`` with srun under ``spec`` (for ``sbatch``)."""
    lines = ["#!/bin/bash", f"#SBATCH -J {job_name}", f"#SBATCH -n {spec.np}",
             f"#SBATCH -t {time_limit}"]
    if spec.nodes:
        lines.append(f"#SBATCH -N {spec.nodes}")
    if spec.ppn:
        lines.append(f"#SBATCH --ntasks-per-node={spec.ppn}")
    for k, v in spec.env.items():
        lines.append(f"export {k}={shlex.quote(v)}")
    lines.append(shlex.join(_srun_argv(spec, argv)))
    return "\n".join(lines) + "\n"
