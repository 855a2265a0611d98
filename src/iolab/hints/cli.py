"""``iolab hints DIR``: open a small test file in DIR with the given hints (like
ROMIO_PRINT_HINTS / MPICH_MPIIO_HINTS_DISPLAY) and show every effective hint, flagging the
keys the library does not know and the values it changed. The engine does the opening (one
MPI-IO write of 4 KiB, file removed): the same code path as ``iolab bench --api mpiio``, so
malformed values of known hints are refused before anything runs."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from iolab import cli_common, launch, paths
from iolab.bench.engine import run_engine
from iolab.errors import EXIT_USAGE, UsageError
from iolab.hints import report
from iolab.runs.engine_doc import from_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = ("iolab hints DIR [--hint KEY=VALUE ...] [-U FILE] [--mpi mpich] [--np N] "
                    "[-q | -v] [--json]")
    parser.add_argument("dir", metavar="DIR", help="a directory on the file system to test "
                        "(a 4 KiB file is written there and removed)")
    parser.add_argument("--hint", action="append", default=[], metavar="KEY=VALUE",
                        help="an MPI-IO hint (repeatable)")
    parser.add_argument("-U", "--hints-file", metavar="FILE",
                        help="a file of 'key value' lines (ROMIO_HINTS format)")
    cli_common.add_mpi(parser, "MPI library: the default build, or mpich (ROMIO: hints "
                               "verifiable)")
    parser.add_argument("--np", type=int, default=1, metavar="N",
                        help="ranks opening the file together (default 1; cb_nodes and other "
                             "aggregator hints depend on it)")
    parser.add_argument("--launcher", choices=launch.LAUNCHERS, default="auto",
                        help="auto (default): srun inside a Slurm allocation, else mpirun")
    cli_common.add_format(parser, csv=False, json_help="print JSON instead of a table")
    cli_common.add_quiet_verbose(parser, quiet_help="only the hints asked for (no library "
                                 "values, no Open MPI parameters)",
                                 verbose_help="the command that opens the test file")
    cli_common.add_examples(parser, [
        ('iolab hints .', 'every MPI-IO hint a file in this folder gets'),
        ('iolab hints . --hint cb_nodes=8 --hint cb_buffer_size=16777216 --mpi mpich --np 4',
         'which of these hints ROMIO (MPICH) keeps, changes or drops, with 4 ranks'),
        ('iolab hints . -U my.hints -q',
         'only the hints of a ROMIO_HINTS file and what became of them'),
    ])
    cli_common.one_line_errors(parser, "iolab hints")


def _engine_argv(args: argparse.Namespace, engine: Path, target: Path) -> list[str]:
    argv = [str(engine), "--api", "mpiio", "--layout", "segmented", "--transfer", "4K",
            "--block", "4K", "--write", "--path", str(target), "--quiet"]
    for h in args.hint:
        argv += ["--hint", h]
    if args.hints_file:
        argv += ["--hints-file", str(Path(args.hints_file).resolve())]
    return argv


def run(args: argparse.Namespace) -> int:
    where = Path(args.dir)
    if not where.is_dir():
        raise UsageError(f"{args.dir} is not a directory; give a directory on the file system "
                         "to test")
    if args.hints_file and not Path(args.hints_file).is_file():
        raise UsageError(f"--hints-file {args.hints_file}: no such file")
    engine = paths.engine_for_mpi(args.mpi)
    target = where.resolve() / f".iolab-hints-{os.getpid()}"
    spec = launch.LaunchSpec(np=args.np, launcher=args.launcher, mpi=args.mpi)
    cmd = launch.prepare(spec, _engine_argv(args, engine, target))
    if args.verbose:
        print(f"iolab hints: running {shlex.join(cmd.argv)}", file=sys.stderr)
    outcome = run_engine(cmd, lambda _p: None)
    if outcome.doc is None:
        msg = outcome.engine_message() or f"{cmd.launcher} exited with {outcome.exit_code}"
        if outcome.exit_code == EXIT_USAGE:
            raise UsageError(msg.removeprefix("iolab-bench: "))
        print(f"iolab hints: the test file could not be written: {msg}", file=sys.stderr)
        return 1
    run = from_json(outcome.doc)
    if run.status != "ok":
        message = run.error.message if run.error is not None else None
        print(f"iolab hints: the test file could not be written: {message}", file=sys.stderr)
        return 1
    rows = report.hint_rows(run.hints)
    params = None if run.hints.verifiable else report.ompio_params(cmd.env)
    if args.format == "json":
        print(json.dumps(report.as_json(run, rows, params), indent=2))
    else:
        sys.stdout.write(report.render_text(run, rows, params, quiet=args.quiet))
    return 0
