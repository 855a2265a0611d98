"""``iolab profile``: run any program under libiolab-trace.so; merge its processes' profiles.

    iolab profile [-o DIR] [--np N] [--trace] -- ./app args
    iolab profile show FILE

The program's stdout, stderr and exit status are its own; iolab adds one line on stderr
naming the profile, then ``iolab diagnose FILE`` reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab import cli_common, launch, paths
from iolab.errors import UsageError
from iolab.profile import format as fmt


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
        "--name", default=None, help="profile file name (default: <program>-<time>.iolab)"
    )
    cli_common.add_quiet_verbose(parser, quiet_help="do not print the profile's name",
                                 verbose_help="also print the command line that runs")
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="-- program and arguments; or: show FILE"
    )
    cli_common.one_line_errors(parser, "iolab profile")


_MPI_LIB = re.compile(rb"lib(?:mpi|mpich)[\w.+-]*\.so[\w.]*")


def _elf_needed(program: str) -> list[str]:
    """DT_NEEDED libraries of an ELF program (empty for scripts or on error). Without
    readelf, the MPI library names found in the file's first 64 MiB stand in for them."""
    path = shutil.which(program) or program
    if shutil.which("readelf"):
        try:
            out = subprocess.run(
                ["readelf", "-d", path], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):
            return []
        return [
            ln.split("[", 1)[1].rstrip("]") for ln in out.stdout.splitlines() if "(NEEDED)" in ln
        ]
    try:
        with open(path, "rb") as f:
            head = f.read(64 << 20)
    except OSError:
        return []
    if not head.startswith(b"\x7fELF"):
        return []
    return sorted({m.decode() for m in _MPI_LIB.findall(head)})


# The MPI-IO shims: one per MPI library build (./setup: build/default with mpicc, build/mpich
# with mpicc.mpich when the default is not MPICH). The flavour says which one --mpi picks.
_SHIMS: dict[str, str] = {"default": "trace-mpi", "mpich": "trace-mpi-mpich"}


def _find_shim(name: str) -> Path | None:
    """libiolab-<name>.so from the same build as the tracer that will be preloaded: with
    IOLAB_LIBDIR (<build>/default/interpose/trace), that folder or the MPICH build beside it
    (<build>/mpich/interpose/trace); else the install or the source tree's build/default
    (paths), else the source tree's build/mpich."""
    fname = f"libiolab-{name}.so"
    env = os.environ.get("IOLAB_LIBDIR")
    if env:
        cands = [Path(env) / fname]
        if len(Path(env).parents) >= 3:
            cands.append(Path(env).parents[2] / "mpich" / "interpose" / "trace" / fname)
        for cand in cands:
            if cand.is_file():
                return cand
    try:
        return paths.interposer_library(name)
    except UsageError:
        pass
    cand = Path(__file__).resolve().parents[3] / "build" / "mpich" / "interpose" / "trace" / fname
    return cand if cand.is_file() else None


def _mpi_libs(needed: list[str]) -> set[str]:
    return {n for n in needed if "libmpi" in n}  # libmpi.so.40 (Open MPI), libmpich.so.12


def _mpi_shim(argv: list[str], np: int | None, mpi: str) -> Path | None:
    """The MPI-IO shim built against the MPI library the program links (read from its ELF
    DT_NEEDED, as ldd would show), or, for a program that cannot be inspected (a script
    started with --np), the one --mpi names. None for a non-MPI program."""
    prog_mpi = _mpi_libs(_elf_needed(argv[0]))
    if not prog_mpi and np is None:
        return None
    shims = {k: s for k, s in ((k, _find_shim(n)) for k, n in _SHIMS.items()) if s is not None}
    if prog_mpi:
        for shim in shims.values():
            if _mpi_libs(_elf_needed(str(shim))) == prog_mpi:
                return shim
        print(
            f"iolab: {argv[0]} uses {sorted(prog_mpi)[0]}, and no MPI-IO shim is built for it "
            "(./setup builds one per MPI library): MPI-IO not traced (POSIX and STDIO are)",
            file=sys.stderr,
        )
        return None
    return shims.get("mpich" if mpi == "mpich" else "default") or shims.get("default")


def _trace_env(parts_dir: Path, argv: list[str], args: argparse.Namespace) -> dict[str, str]:
    libs = []
    shim = _mpi_shim(argv, args.np, args.mpi)
    if shim:
        libs.append(str(shim))
    libs.append(str(paths.interposer_library("trace")))
    env = {**launch.preload_env(libs), "IOLAB_TRACE_DIR": str(parts_dir)}
    if args.trace:
        env["IOLAB_TRACE_DXT"] = "1"
    return env


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
    return cli_common.make_dir(outdir, quiet)


def _command(
    args: argparse.Namespace, argv: list[str], parts_dir: Path, spec: launch.LaunchSpec | None
) -> tuple[list[str], dict[str, str]]:
    env_add = _trace_env(parts_dir, argv, args)
    if spec is None:
        return list(argv), {**os.environ, **env_add}
    # `env` sets the preload for the ranks only: the launcher itself is not traced.
    return launch.build_command(spec, ["env", *[f"{k}={v}" for k, v in env_add.items()], *argv])


def _wait(proc: subprocess.Popen[bytes]) -> int:
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:  # the program got the SIGINT too; wait for its profile
            continue


def _run_program(args: argparse.Namespace, argv: list[str]) -> int:
    spec = None  # validated before anything is created
    if args.np is not None:
        spec = launch.LaunchSpec(np=args.np, launcher=args.launcher, mpi=args.mpi)
    outdir = _output_dir(args.output, args.name, args.quiet)
    parts_dir = Path(tempfile.mkdtemp(prefix=".iolab-parts-", dir=outdir)).resolve()
    try:
        cmd, env = _command(args, argv, parts_dir, spec)
        start = time.time()
        if args.verbose:
            print(f"iolab: running {shlex.join(cmd)}", file=sys.stderr)
        try:
            proc = subprocess.Popen(cmd, env=env)
        except OSError as exc:
            raise UsageError(f"cannot start {cmd[0]}: {exc.strerror}") from exc
        rc = _wait(proc)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(start))
        stem = args.name or f"{Path(argv[0]).name}-{stamp}-{os.getpid()}"
        target = outdir / (stem if stem.endswith(fmt.JOB_SUFFIX) else stem + fmt.JOB_SUFFIX)
        job = {
            "cmdline": argv,
            "start_unix": start,
            "end_unix": time.time(),
            "exit_code": rc,
            "np": args.np,
            "launch": cmd[: len(cmd) - len(argv)] if spec else [],
            "trace": bool(args.trace),
        }
        n = _merge(parts_dir, target, job)
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    if not args.quiet:
        s = "es" if n != 1 else ""
        print(f"iolab: profile of {n} process{s} written to {target}", file=sys.stderr)
    return 128 + (-rc) if rc < 0 and -rc in signal.valid_signals() else rc


def _show(rest: list[str]) -> int:
    from iolab.profile.load import load
    from iolab.profile.show import dump

    parser = argparse.ArgumentParser(
        prog="iolab profile show",
        description="print every record of an iolab profile (job file, part, or folder of "
                    "parts) as text")
    parser.add_argument("file", metavar="FILE", help="the profile to show")
    cli_common.one_line_errors(parser, "iolab profile show")
    if not rest:
        raise UsageError("usage: iolab profile show FILE (see 'iolab profile show --help')")
    args = parser.parse_args(rest)
    dump(load(args.file), sys.stdout)
    return 0


def run(args: argparse.Namespace) -> int:
    rest = list(args.command)
    if rest and rest[0] == "--":
        rest = rest[1:]
    elif rest and rest[0] == "show":
        return _show(rest[1:])
    if not rest:
        raise UsageError("nothing to run: iolab profile [-o DIR] [--np N] -- ./app args")
    return _run_program(args, rest)
