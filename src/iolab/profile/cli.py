"""``iolab profile``: run any program under libiolab-trace.so; merge its processes' profiles.

    iolab profile [-o DIR] [--np N] [--trace] -- ./app args
    iolab profile show FILE
    iolab profile export FILE.iolab        (FILE.darshan, a real Darshan log)

The program's stdout, stderr and exit status are its own; iolab adds one line on stderr
naming the profile, then ``iolab diagnose FILE`` reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab import cli_common, launch, paths
from iolab.errors import UsageError
from iolab.profile import batch, launchline, shim
from iolab.sources import profile_format as fmt

# Reading a profile back (show, export) needs numpy (iolab.model.raw): imported there, not
# here, so that running a program under the tracer, which only merges its parts' text,
# starts without numpy's ~0.2 s of CPU.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    cli_common.add_output(parser, "folder of the profile file (default: current folder; "
                                  "a missing last folder is made)", metavar="DIR", default=".")
    parser.add_argument(
        "--np",
        type=int,
        default=None,
        metavar="N",
        help="start N MPI ranks with mpirun/srun (iolab.launch)",
    )
    parser.add_argument(
        "--launcher",
        default="auto",
        choices=launch.LAUNCHERS,
        help="how to start ranks with --np (default: srun in Slurm, else mpirun)",
    )
    cli_common.add_mpi(parser, "MPI library the program was built with")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="also record every read/write (offset, length, start, end), like DXT",
    )
    parser.add_argument(
        "--darshan",
        action="store_true",
        help="also write the profile as a Darshan log (<name>.darshan, libdarshan-util)",
    )
    parser.add_argument(
        "--name", default=None, help="profile file name (default: <program>-<time>.iolab)"
    )
    cli_common.add_quiet_verbose(parser, quiet_help="do not print the profile's name",
                                 verbose_help="also print the command line that runs")
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="-- program and arguments; or: show FILE"
    )
    cli_common.add_examples(parser, [
        ('iolab profile -- ./app input.dat', 'profile a program: app-<time>.iolab in this folder'),
        ('iolab profile --np 4 -o prof -- ./mpi_app',
         '4 MPI ranks under the tracer; the profile in prof/'),
        ('iolab profile --darshan --name run1 -- ./app',
         'run1.iolab and run1.darshan (for darshan-parser, pydarshan)'),
        ('iolab profile show run1.iolab',
         'every counter of a profile, as darshan-parser lists them'),
    ])
    cli_common.one_line_errors(parser, "iolab profile")


def _trace_env(
    parts_dir: Path, programs: list[str], args: argparse.Namespace,
    line: launchline.LaunchLine | None
) -> dict[str, str]:
    """The tracer's environment for the ranks. Every program of an MPMD line gets the same
    preload: the union of what each needs (a layer is inert in a program without its
    library), with the MPI-IO shim of the first program's MPI library."""
    libs: list[str] = []
    program = programs[0]
    kind = line.kind if line is not None else None
    if kind in (None, "sbatch"):  # a job script: its own launcher's MPI, and its program's
        cwd = launchline.batch_dir(line) if line is not None else None
        kind, ranks_program = launchline.script_target(program, cwd=cwd)
        programs = [ranks_program or program]
    mpi_launch = args.np is not None or kind is not None
    flavour = kind if kind is not None and kind != "slurm" else args.mpi
    for prog in dict.fromkeys(programs):
        if shim.is_static(prog):
            print(f"iolab profile: {prog} is statically linked: the tracer (LD_PRELOAD) "
                  "cannot reach it, so its I/O is not traced (link it dynamically to trace it)",
                  file=sys.stderr)
    layers: list[Path] = []
    for prog in dict.fromkeys(programs):
        layers += [p for p in shim.layer_shims(prog) if p not in layers]
    chosen = shim.choose(programs[0], mpi_launch, flavour)
    for prog in dict.fromkeys(programs[1:]):
        other = shim.mpi_library(prog)
        if chosen is not None and other is not None and other != shim.mpi_library(str(chosen)):
            print(f"iolab profile: {prog} uses {Path(other).name}, not the MPI library of "
                  f"{programs[0]}: its MPI-IO is not traced (POSIX and STDIO are)",
                  file=sys.stderr)
    one = shim.one_library(layers, chosen)
    if one is not None:
        libs.append(str(one))
    else:
        libs.extend(str(p) for p in layers)  # above MPI-IO: first
        if chosen:
            libs.append(str(chosen))
        libs.append(str(paths.interposer_library("trace")))
    env = {**launch.preload_env(libs), "IOLAB_TRACE_DIR": str(parts_dir)}
    if args.trace:
        env["IOLAB_TRACE_DXT"] = "1"
    return env


def _job_np(parts_dir: Path) -> int | None:
    """A batch job's rank count, from the job itself (its sbatch line need not say, nor its
    script's launch line): the largest MPI_COMM_WORLD size its ranks saw, or the task count
    (SLURM_NTASKS) of a step of non-MPI tasks. None when no process was a rank."""
    sizes = []
    for f in parts_dir.glob("*" + fmt.PART_SUFFIX):
        try:
            with open(f, encoding="utf-8", errors="surrogateescape") as fh:
                head = json.loads(fh.readline())
        except (OSError, ValueError):
            continue
        if isinstance(head, dict) and head.get("type") == "process" and head.get("mpi"):
            sizes.append(int(head.get("nprocs") or 0))
    return max(sizes) if sizes and max(sizes) > 0 else None


def _host_cpus() -> dict[str, object]:
    """This host's name and the CPUs this process may run on (its affinity: the cpuset of
    the job step, or taskset's): what ranks launched from here share on this host."""
    try:
        return {"host": socket.gethostname(), "host_cpus": len(os.sched_getaffinity(0))}
    except (AttributeError, OSError):  # no affinity call on this platform: unknown
        return {}


def _merge(parts_dir: Path, target: Path, job: dict[str, object]) -> int:
    """Write the job line and every part into target; return the number of parts."""
    files = sorted(parts_dir.glob("*" + fmt.PART_SUFFIX))
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write(json.dumps({"type": "job", "v": 1, **job}) + "\n")
        for f in files:
            out.write(f.read_text(encoding="utf-8", errors="surrogateescape"))
    tmp.replace(target)
    return len(files)


def _output_dir(path: str, name: str | None, quiet: bool) -> Path:
    """The checked -o folder (made if only it is missing); a --name never an existing log
    or profile."""
    outdir = cli_common.check_output_dir(path, "-o")
    if name:
        stem = name if name.endswith(fmt.JOB_SUFFIX) else name + fmt.JOB_SUFFIX
        if Path(stem).name != stem:
            raise UsageError(f"--name {name}: a file name, not a path (the folder is -o DIR)")
        cli_common.check_output_file(outdir / stem, "--name")
    return cli_common.make_dir(outdir, quiet, verb="profile")


_MPI_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}


def _program_mpi(program: str, mpi: str, launcher: str) -> str:
    """The --mpi to launch program's ranks with: the MPI library it is linked against. A
    program started by another library's mpirun runs as N one-rank jobs (each rank 0 of 1,
    all writing rank 0's files), so without --mpi the program's own library is used, and a
    --mpi that names the other library is refused."""
    mine = launch.binary_mpi(program)
    if mine is None:  # a script, Python with mpi4py: only --mpi can say
        return mpi
    if mpi in _MPI_NAMES and mpi != mine:
        raise UsageError(f"--mpi {mpi}: {program} is linked against {_MPI_NAMES[mine]}, not "
                         f"{_MPI_NAMES[mpi]}; give --mpi {mine} (or drop --mpi)")
    if mpi == "default" and launcher != "srun" and not launch.in_slurm_allocation():
        default_is = launch.mpi_flavour(launch.mpirun_program("default"))
        if default_is != mine:
            return mine
    return mpi


def _check_launcher_mpi(line: launchline.LaunchLine) -> None:
    """The user's own mpirun line must be of the library the programs are linked against."""
    for prog in launchline.check_programs(line):
        mine = launch.binary_mpi(prog)
        if mine is not None and mine != line.kind:
            raise UsageError(
                f"{prog} is linked against {_MPI_NAMES[mine]}, and {line.launcher[0]} is "
                f"{_MPI_NAMES[line.kind]}'s launcher: the ranks would start as separate "
                f"one-rank jobs; launch it with {_MPI_NAMES[mine]}'s mpirun "
                f"({'mpirun.mpich' if mine == 'mpich' else 'mpirun.openmpi'}), or use --np N")


def _command(
    args: argparse.Namespace,
    argv: list[str],
    parts_dir: Path,
    spec: launch.LaunchSpec | None,
    line: launchline.LaunchLine | None,
) -> tuple[list[str], dict[str, str], list[str]]:
    """The command to run, its environment, and its launcher part (for the job line)."""
    if line is not None:  # the user's own launcher: the preload goes to the ranks its way
        env_add = _trace_env(parts_dir, launchline.check_programs(line), args, line)
        head, tail = line.split_with_env(env_add)
        return [*head, *tail], dict(os.environ), head
    env_add = _trace_env(parts_dir, [argv[0]], args, None)
    if spec is None:
        return list(argv), {**os.environ, **env_add}, []
    # `env` sets the preload for the ranks only: the launcher itself is not traced.
    cmd, env = launch.build_command(
        spec, ["env", *[f"{k}={v}" for k, v in env_add.items()], *argv])
    return cmd, env, cmd[: len(cmd) - len(argv)]


def _wait(proc: subprocess.Popen[bytes]) -> int:
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:  # the program got the SIGINT too; wait for its profile
            continue


def _run_program(args: argparse.Namespace, argv: list[str]) -> int:
    spec = None  # validated before anything is created
    line = launchline.parse(argv)
    if line is not None and args.np is not None:
        raise UsageError(
            f"--np starts the ranks itself, and the command is a launch line ({argv[0]}): "
            "drop --np, or give the program alone after --"
        )
    if line is not None:
        launchline.check_programs(line)
    if line is not None and line.kind in ("slurm", "sbatch") and "," in os.path.abspath(
            args.output):
        raise UsageError(f"-o {args.output}: Slurm's --export splits at ',', so the trace "
                         "folder cannot be passed to the job; give a folder without ','")
    if line is not None and line.kind == "sbatch" and shutil.which(argv[0]) is None:
        raise UsageError(f"'{argv[0]}' is not on PATH (load Slurm)")
    if line is not None and line.kind in ("openmpi", "mpich"):
        _check_launcher_mpi(line)
    if line is None and shutil.which(argv[0]) is None:  # before -o's folder is made
        where = "no such file" if "/" in argv[0] and not os.path.exists(argv[0]) else \
            "not an executable file" if "/" in argv[0] else "not on PATH"
        raise UsageError(f"cannot start {argv[0]}: {where}")
    if args.np is not None:
        spec = launch.LaunchSpec(np=args.np, launcher=args.launcher,
                                 mpi=_program_mpi(argv[0], args.mpi, args.launcher))
    made_outdir = not Path(args.output).is_dir()
    outdir = _output_dir(args.output, args.name, args.quiet)
    if line is not None and line.kind == "sbatch":
        batch.warn_if_not_shared(outdir, args.quiet)
    parts_dir = Path(tempfile.mkdtemp(prefix=".iolab-parts-", dir=outdir)).resolve()
    try:
        cmd, env, launch_words = _command(args, argv, parts_dir, spec, line)
        start = time.time()
        if args.verbose:
            print(f"iolab profile: running {shlex.join(cmd)}", file=sys.stderr)
        try:
            proc = subprocess.Popen(cmd, env=env)
        except OSError as exc:
            shutil.rmtree(parts_dir, ignore_errors=True)
            if made_outdir:
                _remove_if_empty(outdir)
            raise UsageError(f"cannot start {cmd[0]}: {exc.strerror}") from exc
        rc = _wait(proc)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(start))
        program = line.program if line is not None else argv
        stem = args.name or f"{Path(program[0]).name}-{stamp}-{os.getpid()}"
        target = outdir / (stem if stem.endswith(fmt.JOB_SUFFIX) else stem + fmt.JOB_SUFFIX)
        batch_job = line is not None and line.kind == "sbatch"
        job = {
            "cmdline": program,
            "start_unix": start,
            "end_unix": time.time(),
            "exit_code": rc,
            "np": _job_np(parts_dir) if batch_job
            else (line.np if line is not None else args.np),
            "launch": launch_words,
            "trace": bool(args.trace),
            # the CPUs usable here: ranks started on this host inherit this CPU set (a
            # batch job's ranks run elsewhere: not known there)
            **({} if batch_job else _host_cpus()),
        }
        n = len(list(parts_dir.glob("*" + fmt.PART_SUFFIX)))
        if n == 0 and (rc != 0 or batch_job):
            # Nothing was traced: an empty profile would read as "no problem found".
            _say_nothing_traced(argv[0], rc, batch_job, parts_dir.parent)
            shutil.rmtree(parts_dir, ignore_errors=True)
            if made_outdir:
                _remove_if_empty(outdir)
            return _exit_status(rc) if rc != 0 else 1
        n = _merge(parts_dir, target, job)
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    if not args.quiet:
        s = "es" if n != 1 else ""
        print(f"iolab profile: profile of {n} process{s} written to {target}", file=sys.stderr)
    if args.darshan:
        _export(target, args.quiet)
    return _exit_status(rc)


def _exit_status(rc: int) -> int:
    """The program's own exit status, as a shell gives it (128 + N for signal N)."""
    return 128 + (-rc) if rc < 0 and -rc in signal.valid_signals() else rc


def _say_nothing_traced(command: str, rc: int, batch_job: bool, outdir: Path) -> None:
    if rc != 0:
        print(f"iolab profile: {command} exited with status {_exit_status(rc)} before any "
              "process was traced (its own message is above): no profile written",
              file=sys.stderr)
    else:
        print(f"iolab profile: no process of the batch job wrote a profile into {outdir}: "
              "is -o DIR on a file system the compute nodes share? No profile written",
              file=sys.stderr)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _show(rest: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="iolab profile show",
        description="print every record of an iolab profile (job file, part, or folder of "
                    "parts) as text")
    parser.add_argument("file", metavar="FILE", help="the profile to show")
    cli_common.one_line_errors(parser, "iolab profile show")
    if not rest:
        raise UsageError("usage: iolab profile show FILE (see 'iolab profile show --help')")
    args = parser.parse_args(rest)
    # deferred: the profile reader (numpy) only for show, not for every traced run
    from iolab.profile.show import dump
    from iolab.sources.profile import load

    dump(load(args.file), sys.stdout)
    return 0


def _export(profile: Path, quiet: bool = False) -> None:
    """profile.iolab -> profile.darshan beside it (never over the input)."""
    out = profile.with_suffix(".darshan")
    if out.resolve() == profile.resolve():
        raise UsageError(f"{profile} already ends in .darshan: give the .iolab profile")
    cli_common.check_output_file(out, "export", inputs=[profile])  # never over a log
    # deferred: the profile reader and writer (numpy) only for export
    from iolab.profile.darshan_out import write_darshan
    from iolab.sources.profile import load

    write_darshan(load(profile), out)
    if not quiet:
        print(f"iolab profile: Darshan log written to {out}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    rest = list(args.command)
    if rest and rest[0] == "--":
        rest = rest[1:]
    elif rest and rest[0] == "show":
        return _show(rest[1:])
    elif rest and rest[0] == "export":
        if len(rest) != 2:
            raise UsageError("usage: iolab profile export FILE.iolab  (writes FILE.darshan)")
        _export(Path(rest[1]))
        return 0
    if not rest:
        raise UsageError("nothing to run: iolab profile [-o DIR] [--np N] -- ./app args")
    return _run_program(args, rest)
