"""The one place that builds ``mpirun`` / ``srun`` / ``sbatch`` / ``salloc`` command lines.

Every verb that starts parallel processes (bench, profile, later tune and study) describes
what it wants as a :class:`LaunchSpec` and gets back an argv and an environment. MPI is the
distributed engine; Slurm places the ranks on a cluster. Nothing here starts a process
(except ``mpirun --version`` when a site's mpirun cannot be recognised by its name).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from iolab.errors import UsageError

LAUNCHERS = ("auto", "mpirun", "srun", "none")
MPI_FLAVOURS = ("default", "openmpi", "mpich")
DEFAULT_NP = 2  # the default job's ranks; also used when nothing else says how many

# --cpu-bind's own words and what each launcher calls them. Slurm's other forms (map_cpu:,
# mask_cpu:, rank, ldoms...) pass through to srun as written; mpirun has only these.
CPU_BIND = {
    "none": {"srun": "none", "openmpi": "none", "mpich": "none"},
    "cores": {"srun": "cores", "openmpi": "core", "mpich": "core"},
    "threads": {"srun": "threads", "openmpi": "hwthread", "mpich": "hwthread"},
    "sockets": {"srun": "sockets", "openmpi": "socket", "mpich": "socket"},
    "numa": {"srun": "ldoms", "openmpi": "numa", "mpich": "numa"},
}
_MEMBIND = re.compile(r"^(all|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$")


@dataclass(frozen=True)
class LaunchSpec:
    """How many processes, where, and with which launcher and MPI library."""

    np: int = DEFAULT_NP
    nodes: int | None = None
    ppn: int | None = None  # processes per node
    launcher: str = "auto"
    mpi: str = "default"  # which MPI library's mpirun (must match the binary's build)
    extra: tuple[str, ...] = ()  # passed to the launcher verbatim
    env: Mapping[str, str] = field(default_factory=dict)  # set for every rank
    # placement (see placement_problem() for what each launcher can do)
    cpu_bind: str | None = None  # a CPU_BIND word, or Slurm's own --cpu-bind value
    cpus_per_rank: int | None = None
    cpu_freq: str | None = None  # Slurm's --cpu-freq value (one; a sweep is one run each)
    core_spec: int | None = None  # cores per node kept for the system (Slurm -S)
    membind: str | None = None  # NUMA nodes for numactl --membind

    def __post_init__(self) -> None:
        if self.np < 1:
            raise UsageError(f"--np must be at least 1 (got {self.np})")
        if self.nodes is not None and self.nodes < 1:
            raise UsageError(f"--nodes must be at least 1 (got {self.nodes})")
        if self.ppn is not None and self.ppn < 1:
            raise UsageError(f"--ppn must be at least 1 (got {self.ppn})")
        if self.launcher not in LAUNCHERS:
            raise UsageError(
                f"--launcher must be one of {', '.join(LAUNCHERS)} (got {self.launcher!r})")
        if self.mpi not in MPI_FLAVOURS:
            raise UsageError(f"--mpi must be one of {', '.join(MPI_FLAVOURS)} (got {self.mpi!r})")
        if self.cpus_per_rank is not None and self.cpus_per_rank < 1:
            raise UsageError(f"--cpus-per-rank must be at least 1 (got {self.cpus_per_rank})")
        if self.core_spec is not None and self.core_spec < 0:
            raise UsageError(f"--core-spec must be 0 or more (got {self.core_spec})")
        if self.membind is not None and not _MEMBIND.match(self.membind):
            raise UsageError(f"--membind {self.membind!r}: give NUMA node numbers as numactl "
                             "takes them (0, 0-1, 0,2 or all)")
        if self.cpu_freq is not None and (not self.cpu_freq or "," in self.cpu_freq or
                                          " " in self.cpu_freq):
            raise UsageError(f"--cpu-freq {self.cpu_freq!r}: one value per launch (kHz, low, "
                             "medium, high, highm1, or Slurm's MIN-MAX:GOVERNOR)")
        if self.nodes and self.ppn and self.np != self.nodes * self.ppn:
            raise UsageError(f"--np {self.np} is not --nodes {self.nodes} x --ppn {self.ppn}; "
                             "give two of the three")


def parse_launcher_args(text: str | None) -> tuple[str, ...]:
    """``--launcher-args "..."``: split like a shell would; bad quoting is a usage error."""
    if not text:
        return ()
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"--launcher-args {text!r}: {exc}") from None


def in_slurm_allocation(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return bool(env.get("SLURM_JOB_ID")) and shutil.which("srun", path=env.get("PATH")) is not None


def allocation_nodes(environ: Mapping[str, str]) -> int | None:
    """The Slurm allocation's node count, from its environment (None outside one)."""
    nodes = environ.get("SLURM_JOB_NUM_NODES") or environ.get("SLURM_NNODES") or ""
    return int(nodes) if nodes.isdigit() and int(nodes) > 0 else None


def allocation_tasks_per_node(environ: Mapping[str, str]) -> int | None:
    """The allocation's tasks on each node when every node has as many: Slurm's
    SLURM_TASKS_PER_NODE ("2(x4)", "2", "2,2"; "3(x2),1" is uneven: None), None outside one."""
    text = environ.get("SLURM_TASKS_PER_NODE") or ""
    counts = set()
    for part in text.split(","):
        count, _, repeat = part.partition("(x")
        if not count.isdigit() or (repeat and not repeat.rstrip(")").isdigit()):
            return None
        counts.add(int(count))
    return counts.pop() if len(counts) == 1 and min(counts) > 0 else None


def default_np(launcher: str, environ: Mapping[str, str] | None = None,
               ppn: int | None = None) -> int:
    """Ranks when the user gave no ``--np``: the allocation's tasks under srun (with
    ``--ppn``, that many on each of the allocation's nodes: srun's ``-n`` wins over
    ``--ntasks-per-node``, so 4 tasks on 2 nodes with --ppn 1 would still run 2 a node),
    else 2."""
    env = os.environ if environ is None else environ
    nodes = allocation_nodes(env)
    if launcher == "srun" and ppn and nodes:
        return nodes * ppn
    if launcher == "srun":
        tasks = env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS")
        if tasks and tasks.isdigit() and int(tasks) > 0:
            return int(tasks)
    return DEFAULT_NP


def resolve_launcher(spec: LaunchSpec, environ: Mapping[str, str] | None = None) -> str:
    """``auto`` means srun inside a Slurm allocation, mpirun elsewhere."""
    if spec.launcher != "auto":
        return spec.launcher
    return "srun" if in_slurm_allocation(environ) else "mpirun"


def mpirun_program(mpi: str, environ: Mapping[str, str] | None = None) -> str:
    """The mpirun of the MPI library the program was built with (Debian installs both)."""
    env = os.environ if environ is None else environ
    names = {"default": ["mpirun", "mpiexec"], "openmpi": ["mpirun.openmpi", "mpirun"],
             "mpich": ["mpirun.mpich", "mpiexec.mpich", "mpiexec.hydra"]}[mpi]
    for n in names:
        if shutil.which(n, path=env.get("PATH")):
            return n
    raise UsageError(
        f"no '{names[0]}' found on PATH; install MPI (./setup does it on Debian) "
        "or 'module load' your site's MPI, or use --launcher srun inside a Slurm allocation"
    )


def mpi_flavour(program: str, environ: Mapping[str, str] | None = None) -> str:
    """"openmpi" or "mpich" (Hydra: MPICH, Intel MPI, Cray's mpiexec) for an mpirun program.

    Debian's names resolve to orterun / mpiexec.hydra; a site's module-loaded mpirun is
    asked for its version when its path does not say.
    """
    env = os.environ if environ is None else environ
    path = shutil.which(program, path=env.get("PATH")) or program
    real = os.path.realpath(path).lower()
    if "orterun" in real or "openmpi" in real or "prterun" in real:
        return "openmpi"
    if "mpich" in real or "hydra" in real or "intel" in real:
        return "mpich"
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20,
                             env=dict(env), check=False)
    except (OSError, subprocess.SubprocessError):
        return "openmpi"  # the most common default; its flags fail loudly if wrong
    text = (out.stdout + out.stderr).lower()
    return "mpich" if "hydra" in text or "mpich" in text or "intel" in text else "openmpi"


# The PMI types srun can offer, in our order of preference for each MPI library: MPICH
# (and Intel MPI, Cray MPICH) speak PMI-2 and PMIx; Open MPI 4/5 starts under srun via PMIx.
PMI_PREFERENCE = {"mpich": ("pmi2", "pmix", "cray_shasta"), "openmpi": ("pmix",)}

_MPI_SONAME = re.compile(rb"lib(mpich|mpi_cray|mpi)\.so(?:\.(\d+))?")


def binary_mpi(program: str | os.PathLike[str]) -> str | None:
    """"openmpi" or "mpich" for a program linked against that MPI library (its sonames:
    libmpi.so.4x is Open MPI; libmpich, libmpi_cray and libmpi.so.12 are MPICH-derived),
    None for a script, a non-MPI program or an unreadable file."""
    path = shutil.which(str(program)) or str(program)
    try:
        with open(path, "rb") as f:
            head = f.read(64 << 20)
    except OSError:
        return None
    if not head.startswith(b"\x7fELF"):
        return None
    for m in _MPI_SONAME.finditer(head):
        name, major = m.group(1), m.group(2)
        if name in (b"mpich", b"mpi_cray") or major == b"12":
            return "mpich"
        if name == b"mpi" and major is not None and major.startswith(b"4"):
            return "openmpi"
    return None


def srun_mpi_types(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The PMI plugins this Slurm offers (``srun --mpi=list``); empty if it cannot say."""
    env = dict(os.environ if environ is None else environ)
    try:
        out = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True,
                             timeout=30, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    types: list[str] = []
    for line in (out.stdout + out.stderr).splitlines():
        word = line.strip().removeprefix("srun:").strip()
        if word.startswith("specific"):
            break
        if word and " " not in word and word.replace("_", "").replace("-", "").isalnum():
            types.append(word)
    return tuple(types)


def _program_of(argv: Sequence[str]) -> str | None:
    """The program an argv runs, looking through ``env VAR=value ...``."""
    words = list(argv)
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if "=" not in w or w.startswith(("/", "."))]
    return words[0] if words else None


def srun_pmi(spec: LaunchSpec, argv: Sequence[str],
             environ: Mapping[str, str] | None = None) -> str | None:
    """The ``srun --mpi=`` value that starts ``argv``'s MPI library as one job (not N
    singletons): None when the user chose one (--launcher-args, $SLURM_MPI_TYPE) or the
    program's MPI library is unknown. A Slurm that offers none of the library's PMI types
    is a UsageError."""
    env = os.environ if environ is None else environ
    if any(a == "--mpi" or a.startswith("--mpi=") for a in spec.extra) or \
            env.get("SLURM_MPI_TYPE"):
        return None
    flavour = spec.mpi if spec.mpi in PMI_PREFERENCE else None
    prog = _program_of(argv)
    if flavour is None and prog is not None:
        flavour = binary_mpi(prog)
    if flavour is None:
        return None
    offered = srun_mpi_types(env)
    if not offered:  # a Slurm that cannot list them: MPICH's own PMI, else its MpiDefault
        return "pmi2" if flavour == "mpich" else None
    for pmi in PMI_PREFERENCE[flavour]:
        if pmi in offered:
            return pmi
    raise UsageError(
        f"this Slurm's srun offers no PMI for {flavour} (it offers {', '.join(offered)}; "
        f"{flavour} needs {' or '.join(PMI_PREFERENCE[flavour])}); ask the site, or pass "
        "--launcher-args=--mpi=TYPE")


def placement_problem(spec: LaunchSpec, launcher: str,
                      environ: Mapping[str, str] | None = None) -> str | None:
    """Why ``launcher`` cannot place the ranks as ``spec`` asks (one line), or None.

    --cpu-freq and --core-spec are Slurm's; core specialization is a property of the
    allocation, so srun inside one cannot ask for it (salloc/sbatch -S can). mpirun binds
    with its own words only (CPU_BIND's keys)."""
    env = os.environ if environ is None else environ
    if launcher in ("mpirun", "none"):
        for flag, value in (("--cpu-freq", spec.cpu_freq), ("--core-spec", spec.core_spec)):
            if value is not None:
                return (f"{flag} needs Slurm (srun sets it); run inside a Slurm allocation or "
                        "with --launcher srun")
    if launcher == "none" and (spec.cpu_bind or spec.cpus_per_rank):
        return "--cpu-bind/--cpus-per-rank need a launcher (mpirun or srun), not --launcher none"
    if launcher == "mpirun" and spec.cpu_bind and spec.cpu_bind not in CPU_BIND:
        return (f"--cpu-bind {spec.cpu_bind!r}: mpirun binds to one of {', '.join(CPU_BIND)} "
                "(Slurm's other forms need srun)")
    if launcher == "srun" and spec.core_spec is not None and env.get("SLURM_JOB_ID"):
        return (f"--core-spec {spec.core_spec} must be requested when the allocation is made "
                f"(salloc -S {spec.core_spec}, or #SBATCH -S {spec.core_spec}); srun inside "
                f"job {env['SLURM_JOB_ID']} cannot change it")
    if spec.membind is not None and shutil.which("numactl", path=env.get("PATH")) is None:
        return "--membind needs numactl (apt-get install numactl, or module load numactl)"
    return None


def slurm_task_plugin(environ: Mapping[str, str] | None = None) -> str | None:
    """This Slurm's TaskPlugin (``scontrol show config``), None if it cannot say."""
    env = dict(os.environ if environ is None else environ)
    try:
        out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True,
                             timeout=30, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "TaskPlugin":
            return value.strip()
    return None


def _srun_binding(spec: LaunchSpec, env: Mapping[str, str]) -> LaunchSpec:
    """srun binds CPUs through its task plugin; with task/none it refuses every --cpu-bind,
    even none ("cluster configuration lacks support for cpu binding"), after the allocation
    is made. So: say so before anything runs or is stored, except for none, which such a
    Slurm does anyway (the flag is left out)."""
    if not spec.cpu_bind:
        return spec
    plugin = slurm_task_plugin(env)
    if plugin is None or "task/none" not in plugin:
        return spec
    if spec.cpu_bind == "none":
        return replace(spec, cpu_bind=None)
    raise UsageError(f"--cpu-bind {spec.cpu_bind}: this Slurm cannot bind CPUs "
                     "(TaskPlugin=task/none); ask the site for task/affinity or "
                     "task/cgroup, or run without --cpu-bind")


def _with_membind(spec: LaunchSpec, argv: Sequence[str]) -> list[str]:
    """Each rank started under ``numactl --membind`` (its memory from those NUMA nodes)."""
    return ["numactl", f"--membind={spec.membind}", *argv] if spec.membind else list(argv)


def _srun_placement(spec: LaunchSpec) -> list[str]:
    cmd: list[str] = []
    if spec.cpus_per_rank:
        cmd += ["--cpus-per-task", str(spec.cpus_per_rank)]
    if spec.cpu_bind:
        cmd.append(f"--cpu-bind={CPU_BIND.get(spec.cpu_bind, {}).get('srun', spec.cpu_bind)}")
    if spec.cpu_freq:
        cmd.append(f"--cpu-freq={spec.cpu_freq}")
    if spec.core_spec is not None:
        cmd += ["--core-spec", str(spec.core_spec)]
    return cmd


def _mpirun_placement(spec: LaunchSpec, flavour: str) -> list[str]:
    """Open MPI: --map-by ...:PE=N (N cores per rank) and --bind-to; MPICH's Hydra:
    -bind-to UNIT[:N]."""
    bind = CPU_BIND[spec.cpu_bind][flavour] if spec.cpu_bind else None
    if flavour == "openmpi":
        cmd: list[str] = []
        mapping = f"ppr:{spec.ppn}:node" if spec.ppn else ("slot" if spec.cpus_per_rank
                                                           else None)
        if mapping and spec.cpus_per_rank:
            mapping += f":PE={spec.cpus_per_rank}"
        if mapping:
            cmd += ["--map-by", mapping]
        if bind:
            cmd += ["--bind-to", bind]
        return cmd
    cmd = ["-ppn", str(spec.ppn)] if spec.ppn else []
    if bind or spec.cpus_per_rank:
        unit = bind or "core"
        cmd += ["-bind-to", f"{unit}:{spec.cpus_per_rank}"
                if spec.cpus_per_rank and unit != "none" else unit]
    return cmd


def _srun_argv(spec: LaunchSpec, argv: Sequence[str], step_name: str | None = None,
               pmi: str | None = None) -> list[str]:
    cmd = ["srun", "-n", str(spec.np)]
    if pmi:
        cmd.append(f"--mpi={pmi}")
    if step_name:
        cmd += ["-J", step_name]  # lets an interruption find this step (interrupt())
    if spec.nodes:
        cmd += ["-N", str(spec.nodes)]
    if spec.ppn:
        cmd += ["--ntasks-per-node", str(spec.ppn)]
    cmd += _srun_placement(spec)
    # --kill-on-bad-exit: one rank failing ends the step instead of leaving the others
    # waiting in a collective until the time limit.
    return [*cmd, "--export=ALL", "--kill-on-bad-exit=1", *spec.extra,
            *_with_membind(spec, argv)]


def _mpirun_argv(spec: LaunchSpec, prog: str, flavour: str, argv: Sequence[str],
                 env: dict[str, str]) -> list[str]:
    cmd = [prog, "-np", str(spec.np)]
    if flavour == "openmpi":
        # Laptops and CI have fewer cores than ranks; Open MPI refuses that by default.
        cmd.append("--oversubscribe")
        cmd += _mpirun_placement(spec, flavour)
        for name in spec.env:  # forwarded to remote nodes too
            cmd += ["-x", name]
        if os.geteuid() == 0:  # containers and CI run as root; Open MPI refuses without these
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    else:  # MPICH's hydra forwards the whole environment by default
        cmd += _mpirun_placement(spec, flavour)
    return [*cmd, *spec.extra, *_with_membind(spec, argv)]


def _check_allocation(spec: LaunchSpec, env: Mapping[str, str]) -> None:
    """Inside an allocation, srun cannot start more tasks (or nodes) than it holds: say so
    now, before anything runs or is stored."""
    if not env.get("SLURM_JOB_ID") or any(a in ("-O", "--overcommit") for a in spec.extra):
        return
    tasks = env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS") or ""
    if tasks.isdigit() and spec.np > int(tasks):
        raise UsageError(f"--np {spec.np}: this Slurm allocation (job {env['SLURM_JOB_ID']}) "
                         f"has {tasks} tasks; ask salloc/sbatch for more (-n {spec.np}) or use "
                         f"--np {tasks} or less")
    nodes = allocation_nodes(env)
    if spec.nodes and nodes and spec.nodes > nodes:
        raise UsageError(f"--nodes {spec.nodes}: this Slurm allocation has {nodes} node(s); "
                         f"ask salloc/sbatch for -N {spec.nodes} or use --nodes {nodes}")


@dataclass(frozen=True)
class Launch:
    """A command ready to start: argv, environment, and how to interrupt it cleanly."""

    argv: list[str]
    env: dict[str, str]
    launcher: str  # "mpirun" | "srun" | "none"
    flavour: str | None  # "openmpi" | "mpich" for mpirun, else None
    step_name: str | None = None  # srun: the job step's name, to signal its tasks


def interrupt(launch: Launch, pid: int) -> None:
    """Pass an interruption (Ctrl-C) on to every rank of iolab-bench, so each can stop
    cleanly and rank 0 can print the repetitions that finished.

    Open MPI's mpirun gets SIGUSR2, which it forwards to the ranks as it is
    (``ess_base_forward_signals``) and the engine takes as an interruption: the ranks stop,
    print and exit 130, and mpirun forwards all their output before it exits. SIGINT would
    make it SIGTERM the ranks and tear the job down while rank 0's JSON was still on its way
    through mpirun: a cut document in about half of the runs, measured, and the finished
    repetitions lost. MPICH's mpiexec forwards SIGINT and then waits for the ranks' output.
    srun is different: one SIGINT only prints the step's status, and SIGTERM or a second
    SIGINT cancel the step, killing the ranks before they can report. So the step's tasks
    get SIGINT through ``scancel --signal``, found by the step's name.
    """
    if launch.launcher == "srun" and launch.step_name:
        step = _find_step(launch.step_name, launch.env)
        if step is not None:
            done = subprocess.run(["scancel", "--signal=INT", step], env=launch.env,
                                  capture_output=True, timeout=30, check=False)
            if done.returncode == 0:
                return
    try:
        os.kill(pid, signal.SIGTERM if launch.launcher == "srun"
                else signal.SIGUSR2 if launch.flavour == "openmpi" else signal.SIGINT)
    except ProcessLookupError:
        pass


def _find_step(name: str, env: Mapping[str, str]) -> str | None:
    try:
        out = subprocess.run(["squeue", "-h", "-s", "-u", str(os.getuid()), "-o", "%i|%j"],
                             env=dict(env), capture_output=True, text=True, timeout=30,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.stdout.splitlines():
        step, _, step_name = line.strip().partition("|")
        if step_name == name:
            return step
    return None


def prepare(spec: LaunchSpec, argv: Sequence[str], environ: Mapping[str, str] | None = None,
            flavour: str | None = None, step_name: str | None = None) -> Launch:
    """The launch of ``argv`` as ``spec`` says (``flavour`` overrides mpirun detection;
    ``step_name`` names an srun job step, by default ``iolab-<pid>``)."""
    base_env = dict(os.environ if environ is None else environ)
    env = {**base_env, **spec.env}
    launcher = resolve_launcher(spec, base_env)
    problem = placement_problem(spec, launcher, env)
    if problem:
        raise UsageError(problem)
    if launcher == "none":
        if spec.np != 1:
            raise UsageError("--launcher none runs one process; use --np 1 or another launcher")
        return Launch(_with_membind(spec, argv), env, launcher, None)
    if launcher == "srun":
        if shutil.which("srun", path=env.get("PATH")) is None:
            raise UsageError("'srun' is not on PATH; use --launcher mpirun or load Slurm")
        _check_allocation(spec, env)
        spec = _srun_binding(spec, env)
        name = step_name or f"iolab-{os.getpid()}"
        pmi = srun_pmi(spec, argv, env)
        return Launch(_srun_argv(spec, argv, name, pmi), env, launcher, None, name)
    prog = mpirun_program(spec.mpi, env)
    flavour = flavour or mpi_flavour(prog, env)
    cmd = _mpirun_argv(spec, prog, flavour, argv, env)
    return Launch(cmd, env, launcher, flavour)


def build_command(
    spec: LaunchSpec, argv: Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """Return (argv, environment) that start ``argv`` as ``spec`` says."""
    launch = prepare(spec, argv, environ)
    return launch.argv, launch.env


def sbatch_script(spec: LaunchSpec, argv: Sequence[str], job_name: str = "iolab",
                  time_limit: str = "00:30:00") -> str:
    """A batch script that runs ``argv`` with srun under ``spec`` (for ``sbatch``)."""
    lines = ["#!/bin/bash", f"#SBATCH -J {job_name}", f"#SBATCH -n {spec.np}",
             f"#SBATCH -t {time_limit}"]
    if spec.nodes:
        lines.append(f"#SBATCH -N {spec.nodes}")
    if spec.ppn:
        lines.append(f"#SBATCH --ntasks-per-node={spec.ppn}")
    if spec.core_spec is not None:  # the allocation's, not the step's
        lines.append(f"#SBATCH -S {spec.core_spec}")
    for k, v in spec.env.items():
        lines.append(f"export {k}={shlex.quote(v)}")
    step = replace(spec, core_spec=None)
    lines.append(shlex.join(_srun_argv(step, argv, pmi=srun_pmi(step, argv))))
    return "\n".join(lines) + "\n"


def sbatch_command(script: str, wait: bool = True, output: str | None = None,
                   extra: Sequence[str] = ()) -> list[str]:
    """``sbatch`` for a script file; ``wait`` blocks until the job ends (exit code = job's)."""
    cmd = ["sbatch", "--parsable"]
    if wait:
        cmd.append("--wait")
    if output:
        cmd += ["-o", output]
    return [*cmd, *extra, script]


def salloc_command(spec: LaunchSpec, argv: Sequence[str],
                   extra: Sequence[str] = ()) -> list[str]:
    """``salloc`` that runs ``argv`` (e.g. ``iolab bench ...``) inside a new allocation."""
    cmd = ["salloc", "-n", str(spec.np)]
    if spec.nodes:
        cmd += ["-N", str(spec.nodes)]
    if spec.ppn:
        cmd += ["--ntasks-per-node", str(spec.ppn)]
    if spec.core_spec is not None:
        cmd += ["-S", str(spec.core_spec)]
    return [*cmd, *extra, *argv]


def preload_env(libraries: Sequence[str | os.PathLike[str]],
                environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``LD_PRELOAD`` that puts ``libraries`` first, in order, before whatever the user
    already preloads (iolab's interposers chain with ``dlsym(RTLD_NEXT)``)."""
    env = os.environ if environ is None else environ
    old = env.get("LD_PRELOAD", "")
    return {"LD_PRELOAD": ":".join([*(str(lib) for lib in libraries), *([old] if old else [])])}
