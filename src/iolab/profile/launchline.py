"""A user-written launch line, ``iolab profile -- mpirun -np 4 ./app``: the program behind the
launcher's options, and the same line with the tracer passed to the ranks the launcher's own
way (Open MPI ``-x NAME=VALUE``, MPICH Hydra ``-genv NAME VALUE``, Slurm
``--export=ALL,NAME=VALUE``), so that the launcher itself is not traced. A batch job,
``iolab profile -- sbatch [options] job.sh``, is submitted with the same ``--export`` and
``--wait``: the script's own launcher then passes the tracer on to its ranks.

Each launcher's options that take a value are listed here (a value such as ``-np 4`` or
``--hostfile hosts`` is not the program); ``--opt=value`` forms carry their value anyway.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from iolab import launch
from iolab.errors import UsageError

# Open MPI 4/5 mpirun (orterun, prterun): options with values (one, unless said). Open MPI
# accepts one or two dashes for its long options.
_OPENMPI_VALUES: dict[str, int] = {
    **dict.fromkeys(
        [
            "np", "n", "c", "H", "host", "hostfile", "machinefile", "default-hostfile", "x",
            "am", "tune", "map-by", "rank-by", "bind-to", "npernode", "N", "npersocket", "ppr",
            "wdir", "wd", "path", "prefix", "preload-files", "cpus-per-proc", "cpus-per-rank",
            "cpu-set", "rf", "rankfile", "output-filename", "stdin", "timeout", "app",
            "personality", "report-pid", "report-uri", "launch-agent", "ompi-server",
            "server-wait-time", "max-vm-size", "slot-list", "use-hwthread-cpus-list",
            "report-state-on-timeout", "get-stack-traces", "enable-recovery", "dvm-uri",
            "mca-param-file", "tmpdir", "runtime-options", "pmixmca", "gpmixmca", "prtemca",
            "output", "display", "rankby", "mapby", "bindto",
        ],
        1,
    ),
    "mca": 2, "gmca": 2, "omca": 2, "pmca": 2,
}

# MPICH's Hydra mpiexec (also Intel MPI's): single-dash options.
_HYDRA_VALUES: dict[str, int] = {
    **dict.fromkeys(
        [
            "n", "np", "f", "hostfile", "machinefile", "hosts", "host", "ppn", "genvlist",
            "envlist", "wdir", "dir", "configfile", "launcher", "launcher-exec", "bootstrap",
            "bootstrap-exec", "iface", "rmk", "errfile-pattern", "outfile-pattern", "binding",
            "bind-to", "map-by", "demux", "gpus-per-proc", "ckpointlib", "ckpoint-prefix",
            "ckpoint-num", "ckpoint-interval", "nameserver", "localhost", "membind", "topolib",
            "gdb-exec", "usize", "tmpdir", "rr", "genvnone-except", "pmi-port",
        ],
        1,
    ),
    "genv": 2, "env": 2,
}

# Slurm's srun: short options with a value, and long ones (a long option's value may also
# come after '='; options whose value is optional take it only with '=', so are flags here).
_SRUN_SHORT_VALUES = set("AbcdDeiJLmMnNoprStTwxCGW")
_SRUN_LONG_VALUES = {
    "account", "acctg-freq", "begin", "bb", "bbf", "cluster-constraint", "clusters",
    "comment", "constraint", "container", "core-spec", "cores-per-socket", "cpu-bind",
    "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency",
    "chdir", "error", "exclude", "export", "export-file", "gid", "gpu-bind", "gpu-freq",
    "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres", "gres-flags",
    "hint", "input", "job-name", "jobid", "licenses", "distribution", "mail-type",
    "mail-user", "mcs-label", "mem", "mem-per-cpu", "mem-per-gpu", "mem-bind", "mincpus",
    "mpi", "network", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node",
    "ntasks-per-socket", "nodes", "nodelist", "nodefile", "output", "open-mode",
    "partition", "prolog", "epilog", "qos", "reservation", "signal", "slurmd-debug",
    "sockets-per-node", "task-epilog", "task-prolog", "thread-spec", "threads-per-core",
    "time", "time-min", "tmp", "uid", "wait", "wckey", "switches", "profile", "het-group",
    "tres-per-task", "relative",
}

# Slurm's sbatch (22.05+): its -W is --wait (a flag), unlike srun's -W seconds.
_SBATCH_SHORT_VALUES = set("AabBcCdDeFGiJLMmNnopqStwx")
_SBATCH_LONG_VALUES = {
    "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster-constraint",
    "clusters", "comment", "constraint", "container", "core-spec", "cores-per-socket",
    "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency",
    "distribution", "error", "exclude", "export", "export-file", "extra-node-info", "gid",
    "gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task",
    "gres", "gres-flags", "hint", "input", "job-name", "kill-on-invalid-dep", "licenses",
    "mail-type", "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu",
    "mincpus", "network", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core",
    "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "open-mode", "output",
    "partition", "priority", "profile", "qos", "reservation", "signal", "sockets-per-node",
    "switches", "thread-spec", "threads-per-core", "time", "time-min", "tmp", "tres-per-task",
    "uid", "wait-all-nodes", "wckey", "wrap",
}

_NAMES = {
    "mpirun": None, "mpiexec": None, "orterun": "openmpi", "prterun": "openmpi",
    "mpirun.openmpi": "openmpi", "mpiexec.openmpi": "openmpi", "mpirun.mpich": "mpich",
    "mpiexec.mpich": "mpich", "mpiexec.hydra": "mpich", "srun": "slurm", "sbatch": "sbatch",
}
_LAUNCHERS = {k for k, v in _NAMES.items() if v != "sbatch"}  # what a job script runs


@dataclass(frozen=True)
class LaunchLine:
    """A launch line split at its program: launcher argv (before), program argv (after)."""

    kind: str  # "openmpi", "mpich" (Hydra), "slurm" (srun) or "sbatch" (program: the script)
    launcher: list[str]
    program: list[str]
    np: int | None  # the rank count the line asks for, when it says

    def with_env(self, env: Mapping[str, str]) -> list[str]:
        """The line with env passed to the ranks (not to the launcher)."""
        head, tail = self.split_with_env(env)
        return [*head, *tail]

    def split_with_env(self, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
        """with_env's line as (the launcher and its options, the programs with theirs). In an
        MPMD line (``./a : -np 2 ./b``) every program gets env: Open MPI's ``-x`` and srun's
        ``--export`` before the first program apply to it alone, so they are repeated after
        each ``:``; Hydra's ``-genv`` is global."""
        first, opts = self.launcher[0], self.launcher[1:]
        if self.kind == "openmpi":
            added = [a for k, v in env.items() for a in ("-x", f"{k}={v}")]
            return [first, *added, *opts], self._later_contexts(lambda o: [*added, *o])
        if self.kind == "mpich":
            added = [a for k, v in env.items() for a in ("-genv", k, v)]
            return [first, *added, *opts], list(self.program)
        if self.kind == "sbatch":
            wait = [] if any(o in ("-W", "--wait") for o in opts) else ["--wait"]
            default = script_directive(self.program[0], "export") or "ALL"
            return [first, *wait, *_srun_export(opts, env, default)], list(self.program)
        return [first, *_srun_export(opts, env)], self._later_contexts(
            lambda o: _srun_export(o, env))

    def contexts(self) -> list[tuple[list[str], list[str]]]:
        """(options, program argv) of each program of the line: one, or one per ``:`` part
        of an MPMD line (the first one's options are the launcher's)."""
        if self.kind == "sbatch":
            return [(self.launcher[1:], list(self.program))]
        out, opts, part = [], self.launcher[1:], list(self.program)
        while True:
            end = part.index(":") if ":" in part else len(part)
            out.append((opts, part[:end]))
            if end == len(part):
                return out
            rest = part[end + 1:]
            i = 0
            while i < len(rest) and rest[i].startswith("-") and rest[i] != "-":
                i += 1 + _value_count(self.kind, rest[i])
            opts, part = rest[:i], rest[i:]

    def _later_contexts(self, add: Callable[[list[str]], list[str]]) -> list[str]:
        """The programs, with add(options) in place of each later context's options."""
        ctx = self.contexts()
        out = list(ctx[0][1])
        for opts, prog in ctx[1:]:
            out += [":", *add(opts), *prog]
        return out


def _srun_export(opts: list[str], env: Mapping[str, str], default: str = "ALL") -> list[str]:
    """srun's (sbatch's) options with env added to its --export (default when the line has
    none). NONE, which lets only SLURM_* through, becomes the list of env's names alone
    (Slurm exports just the variables named, and SLURM_*)."""
    for k, v in env.items():
        if "," in v:
            raise UsageError(f"{k}={v}: Slurm's --export splits at ',', so this value cannot "
                             "be passed; use paths without ',' (-o DIR, IOLAB_LIBDIR)")
    pairs = ",".join(f"{k}={v}" for k, v in env.items())

    def added(value: str) -> str:
        return pairs if value.upper() == "NONE" else f"{value},{pairs}"

    out = list(opts)
    for i, opt in enumerate(out):
        if opt.startswith("--export="):
            out[i] = "--export=" + added(opt.partition("=")[2])
            return out
        if opt == "--export" and i + 1 < len(out):
            out[i + 1] = added(out[i + 1])
            return out
    return [f"--export={added(default)}", *out]


def script_directive(script: str, name: str, short: str | None = None) -> str | None:
    """The value of a job script's ``#SBATCH --name=value`` (``--name value``, or the short
    form: ``-a 1-4``, ``-a1-4``) directive,
    read as sbatch does: the comment lines at the top, up to the first command."""
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return None
    value = None
    for ln in lines[1:]:
        text = ln.strip()
        if text and not text.startswith("#"):
            break
        words = text.split("#", 2)[1].split() if text.startswith("#SBATCH") else []
        for i, w in enumerate(words[1:], 1):
            if w.startswith(f"--{name}="):
                value = w.partition("=")[2]
            elif w in (f"--{name}", short) and i + 1 < len(words):
                value = words[i + 1]
            elif short and w.startswith(short) and len(w) > len(short):
                value = w[len(short):]  # -a1-4
    return value


# A launcher run as a command of a script: at a line's start or after ; & | ( ` exec time,
# by name or path.
_SCRIPT_LAUNCH = re.compile(
    r"(?:^|[;&|(`]|\bexec|\btime)\s*(?:\S*/)?("
    + "|".join(re.escape(n) for n in sorted(_LAUNCHERS))
    + r")(?=\s|$)",
    re.MULTILINE,
)


def script_launcher(program: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The kind of the first MPI or Slurm launcher a shell script runs ("openmpi", "mpich",
    "slurm"), None for anything else: a job script's ranks then get the MPI-IO shim of that
    launcher's MPI (the script passes the preload on in its environment)."""
    return script_target(program, environ)[0]


def script_target(program: str, environ: Mapping[str, str] | None = None,
                  cwd: str | None = None) -> tuple[str | None, str | None]:
    """(kind, program) of the first MPI or Slurm launch line a shell script runs: the kind as
    script_launcher says, and the program behind the launcher's options when it is a file
    found as written (absolute, relative to cwd — the job's folder, default the current
    one —, or on PATH; a name made of shell variables is not), so that its MPI and I/O
    libraries choose the shims; None else."""
    path = shutil.which(program, path=(environ or os.environ).get("PATH")) or program
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError:
        return None, None
    if not head.startswith(b"#!"):
        return None, None
    lines = head.decode("utf-8", "replace").splitlines()[1:]
    text = "\n".join(ln.split("#", 1)[0] for ln in lines)
    for m in _SCRIPT_LAUNCH.finditer(text):
        kind = launcher_kind(m.group(1), environ)
        if kind is not None:
            rest = text[m.start(1):].split("\n", 1)[0]
            return kind, _line_program(m.group(1), rest, environ, cwd)
    return None, None


def _line_program(launcher: str, rest: str, environ: Mapping[str, str] | None,
                  cwd: str | None) -> str | None:
    """The program of one launch line of a script (rest: from the launcher to the line's end),
    when it can be found without running the shell."""
    try:
        words = shlex.split(rest, comments=True)
    except ValueError:
        return None
    for i, w in enumerate(words):  # the command ends at the first shell operator
        if w in (";", "&", "&&", "|", "||", ")") or w.startswith((">", "<", "2>")):
            words = words[:i]
            break
    if not words or any("$" in w or "`" in w for w in words):
        return None
    words[0] = launcher
    try:
        line = parse(words, environ)
        prog = line.program[0] if line is not None else ""
        if cwd and "/" in prog and not os.path.isabs(prog):
            found = os.path.join(cwd, prog)
            return found if os.path.isfile(found) else None
        return check_program(line, environ) if line is not None else None
    except UsageError:
        return None


def launcher_kind(argv0: str, environ: Mapping[str, str] | None = None) -> str | None:
    """"openmpi", "mpich" or "slurm" when argv0 is an MPI or Slurm launcher, else None."""
    name = Path(argv0).name
    if name not in _NAMES:
        return None
    kind = _NAMES[name]
    if kind is None:
        if shutil.which(argv0, path=(environ or os.environ).get("PATH")) is None:
            return None  # not installed: the program is what it says (and fails as such)
        kind = launch.mpi_flavour(argv0, environ)
    return kind


def _value_count(kind: str, opt: str) -> int:
    """How many of the following arguments opt consumes (0 for a flag, or an --opt=value)."""
    if kind in ("slurm", "sbatch"):
        longs, shorts = ((_SRUN_LONG_VALUES, _SRUN_SHORT_VALUES) if kind == "slurm"
                         else (_SBATCH_LONG_VALUES, _SBATCH_SHORT_VALUES))
        if opt.startswith("--"):
            return 0 if "=" in opt else int(opt[2:] in longs)
        # -n4, -n 4; grouped flags such as -lk end in a flag
        return int(len(opt) == 2 and opt[1] in shorts)
    if "=" in opt:
        return 0
    table = _OPENMPI_VALUES if kind == "openmpi" else _HYDRA_VALUES
    return table.get(opt.lstrip("-"), 0)


def _np(kind: str, launcher: list[str]) -> int | None:
    names = {"slurm": ("-n", "--ntasks")}.get(kind, ("-n", "-np", "--np", "--n", "-c"))
    for i, opt in enumerate(launcher):
        key, _, val = opt.partition("=")
        if key in names and not val and i + 1 < len(launcher):
            val = launcher[i + 1]
        elif kind == "slurm" and opt.startswith("-n") and len(opt) > 2 and opt[2] != "=":
            key, val = "-n", opt[2:]
        if key in names and val.isdigit():
            return int(val)
    return None


def parse(argv: list[str], environ: Mapping[str, str] | None = None) -> LaunchLine | None:
    """The launch line argv, split at its program; None when argv[0] is no launcher. A line
    whose program cannot be found is refused (UsageError: one line, exit 2)."""
    kind = launcher_kind(argv[0], environ)
    if kind is None:
        return None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--" and kind == "slurm":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        i += 1 + _value_count(kind, arg)
    launcher, program = argv[:i], argv[i:]
    if kind == "sbatch":
        _check_batch(launcher, program)
        return LaunchLine(kind, launcher, program, None)  # ranks: the script's own steps'
    line = LaunchLine(kind, launcher, program, None)
    ctx = line.contexts()
    for n, (_, prog) in enumerate(ctx):
        if not prog:
            where = "" if n == 0 else f" (part {n + 1} of the MPMD line, after ':')"
            raise UsageError(
                f"no program found behind {Path(argv[0]).name}'s options{where} in "
                f"'{' '.join(argv)}': put the program after them "
                f"(iolab profile -- {Path(argv[0]).name} -np 4 ./app)"
            )
    nps = [_np(kind, [argv[0], *opts]) for opts, _ in ctx]
    total = None if any(n is None for n in nps) else sum(n for n in nps if n is not None)
    return LaunchLine(kind, launcher, program, total)


def batch_dir(line: LaunchLine) -> str | None:
    """The folder an sbatch job starts in when the line or the script says (-D, --chdir)."""
    opts = line.launcher
    for i, opt in enumerate(opts):
        key, _, val = opt.partition("=")
        if key in ("-D", "--chdir"):
            return val or (opts[i + 1] if i + 1 < len(opts) else None)
        if opt.startswith("-D") and len(opt) > 2:
            return opt[2:]
    return script_directive(line.program[0], "chdir", "-D")


def _check_batch(launcher: list[str], program: list[str]) -> None:
    """sbatch lines iolab can trace: a job script file, which sbatch copies at submission."""
    if any(o == "--wrap" or o.startswith("--wrap=") for o in launcher):
        raise UsageError("sbatch --wrap: put the command in a job script and give its path "
                         "(iolab reads the script to choose the MPI-IO shim of its launcher)")
    if not program or program[0] == ":":
        raise UsageError(
            f"no job script found behind sbatch's options in '{' '.join(launcher)}': give "
            "the script's path after them (iolab profile -- sbatch -n 4 job.sh); a script "
            "on standard input is not read"
        )
    if not os.path.isfile(program[0]):
        raise UsageError(f"the job script '{program[0]}' is not a file: give the path of "
                         "the script sbatch should submit")
    array = any(o in ("-a", "--array") or o.startswith(("--array=", "-a")) for o in launcher)
    if array or script_directive(program[0], "array", "-a") is not None:
        raise UsageError("sbatch --array: the array's tasks are separate jobs whose ranks "
                         "would mix in one profile; profile one task (sbatch without --array)")


def check_program(line: LaunchLine, environ: Mapping[str, str] | None = None) -> str:
    """The (first) program's path (for the shim choice); UsageError when it cannot be
    found."""
    return check_programs(line, environ)[0]


def check_programs(line: LaunchLine, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every program's path, one per part of an MPMD line; UsageError naming the first that
    cannot be found."""
    if line.kind == "sbatch":
        return [line.program[0]]  # checked by parse: a file, as sbatch wants (not on PATH)
    return [_check_one(line, prog[0], environ) for _, prog in line.contexts()]


def _check_one(line: LaunchLine, prog: str, environ: Mapping[str, str] | None) -> str:
    env = os.environ if environ is None else environ
    found = shutil.which(prog, path=env.get("PATH")) if "/" not in prog else None
    if found:
        return found
    if "/" in prog and (os.path.isfile(prog) or _in_wdir(line, prog)):
        return prog
    raise UsageError(
        f"cannot find the program '{prog}' that {Path(line.launcher[0]).name} would start "
        "(not a file, nor on PATH): check the launch line, or give the program's path"
    )


def _in_wdir(line: LaunchLine, prog: str) -> bool:
    """A relative program found in the launcher's working-folder option (-wdir, --chdir)."""
    opts = line.launcher
    for i, opt in enumerate(opts):
        key, _, val = opt.partition("=")
        if key.lstrip("-") in ("wdir", "wd", "dir", "chdir", "D"):
            val = val or (opts[i + 1] if i + 1 < len(opts) else "")
            if val and os.path.isfile(os.path.join(val, prog)):
                return True
    return False
