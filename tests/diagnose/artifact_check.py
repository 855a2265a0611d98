"""An independent check of fix artifacts against the job they are for.

Reads the model's own columns (ranks, nodes, files, mounts, Lustre layouts and OSTs), not
the facts the fix builders computed, and runs the shell files for real: ``bash -n`` on
each, the environment files sourced in an empty environment and every exported value
parsed, the Slurm script executed under a simulated allocation with ``srun`` printing its
arguments. :func:`problems` lists what is wrong (empty: the artifact is valid and harmless).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from iolab.buffer.spec import check as check_buffer_spec
from iolab.diagnose.rules.base import Artifact
from iolab.model.files import APP
from iolab.model.job import Model
from iolab.paths import interposer_library
from iolab.settings import catalogue

SHELL_KINDS = {"env", "mpich-hints", "ompio-mca", "lfs", "slurm", "pbs", "lsf",
               "cobalt"}
# Each non-Slurm scheduler's launcher and the environment its batch job has.
BATCH_LAUNCHERS = {"pbs": ("mpiexec", {"PBS_O_WORKDIR": "/"}), "lsf": ("jsrun", {}),
                   "cobalt": ("aprun", {"COBALT_JOBSIZE": "1"})}
ENV_KINDS = {"env", "mpich-hints", "ompio-mca"}
KiB = 1 << 10
ALLOWED_ENV = {"ROMIO_HINTS", "ROMIO_PRINT_HINTS", "MPICH_MPIIO_HINTS",
               "MPICH_MPIIO_HINTS_DISPLAY", "MPIO_DIRECT_READ", "MPIO_DIRECT_WRITE",
               "OMP_NUM_THREADS", "IOLAB_BUFFER", "IOBUF_PARAMS", "LD_PRELOAD", "OMPI_MCA_io",
               *(catalogue.mca_env(r) for r in catalogue.ompio_parameters())}


class Job:
    """The job's numbers, read straight from the model."""

    def __init__(self, model: Model) -> None:
        f = model.files
        self.model = model
        self.nprocs = max(model.job.nprocs, 1)
        self.app = {p for p, c in zip(f.paths, f.category) if c == APP}
        md = model.mods.get("MPI-IO")
        self.mpi = {f.paths[i] for i in set(md.file_index.tolist())} if md is not None else set()
        self.mounts = [m.rstrip("/") or "/" for m, _ in model.job.mounts]
        self.lustre_mounts = [m for m, t in model.job.mounts if t.lower() == "lustre"]
        pos = {int(i): k for k, i in enumerate(f.ids)}
        self.layout = {f.paths[pos[r]]: sc for r, sc in model.stripes.items() if r in pos}
        osts = {o for v in model.lustre_osts.values() for o in v}
        self.osts = max([max(osts) + 1 if osts else 0]
                        + [c for _, c in self.layout.values()])
        self.cmd = model.job.exe.split()

    def mount_root(self, path: str) -> bool:
        p = path.rstrip("/") or "/"
        return p == "/" or p in self.mounts

    def on_lustre(self, path: str) -> bool:
        return path in self.layout or any(path.startswith(m.rstrip("/") + "/")
                                          for m in self.lustre_mounts)


CLUSTER_PREFIX = "/opt/iolab-on-the-cluster"


def _bash(args: list[str], env: dict[str, str] | None = None, stdin: str = ""
          ) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash") or "/bin/bash"  # found before PATH is narrowed
    return subprocess.run([bash, "--noprofile", "--norc", *args], capture_output=True, text=True,
                          env=env if env is not None else {"PATH": os.environ["PATH"]},
                          input=stdin, timeout=30)


def _size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([KMG]?)", text)
    assert m, text
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def _hint_problems(job: Job, key: str, value: str, where: str) -> list[str]:
    row = catalogue.setting(key)
    kind = row.domain if row is not None and row.is_hint else None
    if kind is None:
        return [f"{where}: {key} is not a ROMIO hint"]
    ok = {"mode": value in ("enable", "disable", "automatic"), "bool": value in ("true", "false"),
          "config": bool(re.fullmatch(r"\*:[1-9]\d*", value))}.get(kind)
    if ok is None:
        ok = value.isdigit() and int(value) >= 1
        n = int(value) if ok else 0
        if kind == "stripe":
            ok = ok and n % (64 * KiB) == 0 and job.osts > 0
        elif kind == "osts":
            # the aggregators wanted (at most the ranks); above the OSTs the log proves, the
            # file says Lustre cuts it to the OSTs it has
            ok = ok and 0 < job.osts and n <= max(job.osts, job.nprocs)
        elif key == "cb_nodes":
            ok = ok and n <= job.nprocs
        elif kind == "bytes":
            ok = ok and n >= 64 * KiB
    return [] if ok else [f"{where}: {key}={value} is not valid for this job"]


def _romio_file(job: Job, art: Artifact) -> list[str]:
    out = []
    for ln in art.content.splitlines():
        if not ln.strip() or ln.startswith("#"):
            continue
        key, _, value = ln.partition(" ")
        out += _hint_problems(job, key, value.strip(), art.name)
    return out


def _env_values(art: Artifact) -> tuple[dict[str, str], list[str]]:
    """Source an environment file in an empty environment, from another directory than the
    file's; its exported variables (``__DIR``: the file's directory)."""
    bad = [f"{art.name}: line is not an export: {ln!r}" for ln in art.content.splitlines()
           if ln.strip() and not ln.startswith("#") and not ln.startswith("export ")]
    with tempfile.NamedTemporaryFile("w", suffix=".env") as fh:
        fh.write(art.content)
        fh.flush()
        # IOLAB_PREFIX: where iolab is installed on the machine that runs the job (the
        # user sets it there; a fix never names a path of the analysing machine)
        r = _bash(["-c", 'cd / && . "$1" && for v in $(compgen -e); do printf "%s=%s\\0" "$v"'
                   ' "${!v}"; done', "_", fh.name],
                  env={"PATH": os.environ["PATH"], "IOLAB_PREFIX": CLUSTER_PREFIX})
    if r.returncode != 0:
        return {}, bad + [f"{art.name}: sourcing failed: {r.stderr.strip()}"]
    vals = dict(kv.split("=", 1) for kv in r.stdout.split("\0") if "=" in kv)
    for k in ("PATH", "PWD", "SHLVL", "OLDPWD", "_", "IOLAB_PREFIX"):
        vals.pop(k, None)
    vals["__DIR"] = os.path.dirname(fh.name)
    return vals, bad


def _cray(job: Job, spec: str, where: str) -> list[str]:
    out = []
    for entry in spec.split(","):
        pattern, *kvs = entry.split(":")
        if not kvs:
            out.append(f"{where}: {entry!r} has no key=value")
        if pattern != "*" and not any(pattern in (os.path.basename(p), p,
                                                  "*/" + os.path.basename(p))
                                      for p in job.mpi & job.app):
            out.append(f"{where}: pattern {pattern!r} names no MPI-IO file of the job")
        for kv in kvs:
            key, _, value = kv.partition("=")
            out += _hint_problems(job, key, value, where)
    return out


def _buffer_spec(job: Job, spec: str, where: str) -> list[str]:
    out = []
    try:  # the library itself judges the value (the grammar lives once, in C)
        check_buffer_spec(spec, interposer_library("buffer"))
    except Exception as exc:  # noqa: BLE001 - any refusal is the problem reported
        return [f"{where}: {spec!r} does not parse: {exc}"]
    for pattern in (entry.split(":", 1)[0] for entry in spec.split(",") if entry):
        if pattern not in job.app:
            out.append(f"{where}: {pattern!r} is not one of the job's files")
        if pattern in job.mpi:
            out.append(f"{where}: {pattern!r} is an MPI-IO file")
    return out


def _ompio(name: str, value: str, where: str) -> list[str]:
    if name == "OMPI_MCA_io":
        ok = value in ("^ompio", "romio321", "romio341")
    elif name == "OMPI_MCA_fcoll":
        ok = value in ("individual", "vulcan", "dynamic", "dynamic_gen2", "two_phase")
    else:
        ok = value.isdigit() and int(value) >= 1
        if name.endswith(("bytes_per_agg", "stripe_size")):
            ok = ok and int(value) % (64 * KiB) == 0
    return [] if ok else [f"{where}: {name}={value} is not valid"]


def _env_file(job: Job, art: Artifact, siblings: list[Artifact]) -> list[str]:
    vals, out = _env_values(art)
    here = vals.pop("__DIR")
    for name, value in vals.items():
        where = f"{art.name}: {name}"
        if name not in ALLOWED_ENV:
            out.append(f"{where} is not a variable any library reads")
        elif name == "ROMIO_HINTS":
            base = os.path.basename(value)
            if not any(a.kind == "romio-hints" and a.name == base for a in siblings):
                out.append(f"{where} names {base}, which the fix does not include")
            if os.path.dirname(value) != here:
                out.append(f"{where}={value}: not beside the sourced file ({here})")
        elif name == "MPICH_MPIIO_HINTS":
            out += _cray(job, value, where)
        elif name in ("IOLAB_BUFFER", "IOBUF_PARAMS"):
            out += _buffer_spec(job, value, where)
        elif name.startswith("OMPI_MCA_"):
            out += _ompio(name, value, where)
        elif name == "LD_PRELOAD" and not value.split(":")[0].endswith("libiolab-buffer.so"):
            out.append(f"{where}={value} preloads something else")
        elif name == "LD_PRELOAD" and not value.startswith(CLUSTER_PREFIX + "/"):
            out.append(f"{where}={value}: a path of the analysing machine, not under the "
                       "IOLAB_PREFIX of the machine that runs the job")
    return out


def _lfs_target(job: Job, path: str, where: str) -> list[str]:
    if path.endswith(".iolab-restripe"):
        own = path[: -len(".iolab-restripe")]
        ok = own in job.app and os.path.isabs(own) and job.on_lustre(own)
    else:
        d = os.path.dirname(path)
        ok = (os.path.basename(path).startswith("iolab-") and not job.mount_root(d)
              and any(os.path.dirname(p) == d and job.on_lustre(p) for p in job.app))
    return [] if ok else [f"{where}: {path} is not the job's own file or new directory"]


# `lfs` and the file commands replaced by recorders; `lfs df` lists the simulated OSTs.
_LFS_SHIM = r"""
lfs() {
    if [ "$1" = df ]; then
        local i
        for ((i = 0; i < SIM_OSTS; i++)); do
            printf 'fs-OST%04x_UUID 1000 1 999 1%% /lus[OST:%d]\n' "$i" "$i"
        done
        printf 'fs-MDT0000_UUID 1000 1 999 1%% /lus[MDT:0]\n'
        return 0
    fi
    printf '%s\037' lfs "$@"; printf '\n'
}
cp() { printf '%s\037' cp "$@"; printf '\n'; }
mv() { printf '%s\037' mv "$@"; printf '\n'; }
mkdir() { printf '%s\037' mkdir "$@"; printf '\n'; }
"""


def lfs_run(art: Artifact, osts: int) -> tuple[list[list[str]], str, int]:
    """Run an ``lfs`` script on a simulated file system of ``osts`` OSTs: the commands it
    ran (``lfs``, ``cp``, ``mv``, ``mkdir`` recorded, nothing else on PATH but ``grep``),
    its stderr and exit status."""
    with tempfile.TemporaryDirectory() as d:
        os.symlink(shutil.which("grep") or "/bin/grep", os.path.join(d, "grep"))
        script = os.path.join(d, "fix.sh")
        with open(script, "w") as fh:
            fh.write(art.content)
        r = _bash(["-c", _LFS_SHIM + '. "$1"', "_", script],
                  env={"PATH": d, "SIM_OSTS": str(osts)})
    calls = [ln.split("\037")[:-1] for ln in r.stdout.splitlines() if "\037" in ln]
    return calls, r.stderr, r.returncode


def _lfs_call(job: Job, art: Artifact, cmd: list[str], osts: int) -> list[str]:
    where = f"{art.name} ({osts} OSTs): {' '.join(cmd)}"
    if cmd[:2] == ["lfs", "setstripe"]:
        opts = dict(zip(cmd[2:-1:2], cmd[3:-1:2]))
        c, s, target = opts.get("-c", "0"), _size(opts.get("-S", "0")), cmd[-1]
        out = []
        # never more stripes than the file system has: the OSTs the log proves, or the ones
        # `lfs df` lists when the script runs
        if not c.isdigit() or not 1 <= int(c) <= max(job.osts, osts):
            out.append(f"{where}: stripe count {c} outside 1..{max(job.osts, osts)}")
        if s < 64 * KiB or s % (64 * KiB):
            out.append(f"{where}: stripe size {s} is not a multiple of 64 KiB")
        if job.mount_root(target):
            out.append(f"{where}: a mount root")
        out += _lfs_target(job, target, where)
        cur = job.layout.get(target[: -len(".iolab-restripe")])
        n = int(c) if c.isdigit() else 0
        if cur and art.name.startswith("stripe_count") and n > 1 and cur[1] >= n:
            out.append(f"{where}: the file already has {cur[1]} stripes")
        if cur and art.name != "stripe_count_1.lfs.sh" and n < cur[1]:
            out.append(f"{where}: fewer stripes than the file's {cur[1]}")
        return out
    if cmd[0] == "mkdir" and len(cmd) == 2:
        return _lfs_target(job, cmd[1], where)
    if cmd[0] in ("cp", "mv"):
        out = []
        for p in (a for a in cmd[1:] if not a.startswith("-")):
            base = p[: -len(".iolab-restripe")] if p.endswith(".iolab-restripe") else p
            if base not in job.app:
                out.append(f"{where}: {p} is not the job's file")
        return out
    return [f"{where}: unexpected command"]


def _lfs(job: Job, art: Artifact) -> list[str]:
    out = []
    for osts in (1, 4, 2000):  # smaller and larger file systems than the log shows
        calls, err, rc = lfs_run(art, osts)
        if rc != 0:
            out.append(f"{art.name} ({osts} OSTs): exit {rc}: {err.strip()}")
        if not any(c[:2] == ["lfs", "setstripe"] for c in calls):
            out.append(f"{art.name} ({osts} OSTs): no lfs setstripe ran")
        for cmd in calls:
            out += _lfs_call(job, art, cmd, osts)
    return out


def slurm_run(art: Artifact, ntasks: int, nodes: int, cpus: int) -> tuple[list[str], str]:
    """Run a Slurm script under a simulated allocation; srun's arguments and stderr."""
    with tempfile.NamedTemporaryFile("w", suffix=".sbatch") as fh:
        fh.write(art.content)
        fh.flush()
        env = {"PATH": os.environ["PATH"], "SLURM_NTASKS": str(ntasks),
               "SLURM_JOB_NUM_NODES": str(nodes), "SLURM_CPUS_ON_NODE": str(cpus)}
        r = _bash(["-c", 'srun() { printf "%s\\n" "$@"; }; PROGRAM=(prog); . "$1"', "_",
                   fh.name], env=env)
    return r.stdout.splitlines(), r.stderr


def _slurm(job: Job, art: Artifact) -> list[str]:
    out = []
    if f"#SBATCH --ntasks={job.nprocs}" not in art.content:
        out.append(f"{art.name}: no #SBATCH --ntasks={job.nprocs}")
    nodes = job.model.job.nodes or 1
    for cpus in (1, 4, 64):  # nodes with fewer CPUs than ranks must still give -c >= 1
        args, err = slurm_run(art, job.nprocs, nodes, cpus)
        if "-c" not in args:
            out.append(f"{art.name}: srun did not run ({err.strip()})")
            continue
        c = args[args.index("-c") + 1]
        if not c.isdigit() or int(c) < 1:
            out.append(f"{art.name}: srun -c {c} with {cpus} CPUs per node")
        if args[args.index("-n") + 1] != str(job.nprocs):
            out.append(f"{art.name}: srun -n {args[args.index('-n') + 1]} != {job.nprocs}")
        prog = args[args.index("--cpu-bind=cores") + 1:]
        want = job.cmd or ["prog"]
        if prog != want:
            out.append(f"{art.name}: runs {prog}, the log's command is {want}")
    return out


def _batch(job: Job, art: Artifact) -> list[str]:
    """A PBS, LSF or Cobalt script run with its launcher replaced by a recorder: -n is the
    job's rank count, every rank gets at least one core, the program is the log's."""
    launcher, extra = BATCH_LAUNCHERS[art.kind]
    out = []
    with tempfile.NamedTemporaryFile("w", suffix=".sh") as fh:
        fh.write(art.content)
        fh.flush()
        env = {"PATH": os.environ["PATH"], "CPUS_PER_NODE": "4", **extra}
        r = _bash(["-c", f'{launcher}() {{ printf "%s\\n" "$@"; }}; PROGRAM=(prog); . "$1"',
                   "_", fh.name], env=env)
    args = r.stdout.splitlines()
    if "-n" not in args:
        return [f"{art.name}: {launcher} did not run ({r.stderr.strip()})"]
    if args[args.index("-n") + 1] != str(job.nprocs):
        out.append(f"{art.name}: {launcher} -n {args[args.index('-n') + 1]} != {job.nprocs}")
    want = job.cmd or ["prog"]
    if args[-len(want):] != want:
        out.append(f"{art.name}: runs {args[-len(want):]}, the log's command is {want}")
    return out


def problems(model: Model, art: Artifact, siblings: list[Artifact]) -> list[str]:
    """What is wrong with ``art`` (a fix artifact of ``model``); empty when valid."""
    job = Job(model)
    out: list[str] = []
    shell = art.kind in SHELL_KINDS or art.name.endswith((".env", ".sh", ".sbatch"))
    if shell:
        r = _bash(["-n"], stdin=art.content)
        if r.returncode != 0:
            out.append(f"{art.name}: bash -n: {r.stderr.strip()}")
    if art.kind == "romio-hints":
        out += _romio_file(job, art)
    elif art.kind in ENV_KINDS or art.name.endswith(".env"):
        out += _env_file(job, art, siblings)
    elif art.kind == "lfs":
        out += _lfs(job, art)
    elif art.kind == "slurm":
        out += _slurm(job, art)
    elif art.kind in BATCH_LAUNCHERS:
        out += _batch(job, art)
    if "./app" in art.content and "./app" not in model.job.exe:
        out.append(f"{art.name}: runs ./app, not the log's program")
    return out


def all_problems(model: Model, findings: list) -> list[str]:
    out = []
    for f in findings:
        for a in f.fix.artifacts:
            out += [f"{f.rule.id}: {p}" for p in problems(model, a, f.fix.artifacts)]
    return out

