"""``iolab buffer``: run a program with libiolab-buffer.so and print the statistics.

    iolab buffer [--spec SPEC | --config FILE] [--stats FILE] [-q] -- ./app args

SPEC is an ``IOLAB_BUFFER`` value (default: the environment's, else ``*`` with 4 buffers of
4 MiB and 2 read ahead per file); ``--config FILE`` reads it from a file. The program's
stdout, stderr and exit status are its own; the statistics (one IOBUF-shaped table per file
and process) go to stderr or FILE, and to stderr when FILE cannot be written. FILE is never a
file of the program's or the user's (:mod:`iolab.buffer.target`).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from iolab import cli_common, launch, paths
from iolab.buffer import spec as bufspec
from iolab.buffer import target as stats_target
from iolab.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--spec",
        default=None,
        metavar="SPEC",
        help="IOLAB_BUFFER value, e.g. '*.dat:size=64M:count=4:prefetch=2,%%stdout:size=1M' "
        "(default: $IOLAB_BUFFER, else '*' with the defaults)",
    )
    which.add_argument("--config", default=None, metavar="FILE",
                       help="a file holding the IOLAB_BUFFER value (lines joined with ',')")
    parser.add_argument(
        "-o", "--output", "--stats", dest="stats", default=None, metavar="FILE",
        help="write the statistics to FILE, not stderr (a new file or the statistics file "
             "of an earlier run; never a file the program names or its stdout/stderr)"
    )
    cli_common.add_quiet_verbose(
        parser, quiet_help="do not print statistics",
        verbose_help="also say which library and spec are used")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- program and arguments")
    cli_common.add_examples(parser, [
        ('iolab buffer -- ./app out.dat',
         'write-behind and read-ahead buffers; statistics on stderr'),
        ("iolab buffer --spec '*.dat:size=64M:count=4' -o stats.txt -- ./app",
         '64 MiB buffers for .dat files only; the statistics in stats.txt'),
    ])
    cli_common.one_line_errors(parser, "iolab buffer")


def _spec(args: argparse.Namespace) -> str:
    if args.spec is not None:
        return str(args.spec)
    if args.config is not None:
        try:
            text = Path(args.config).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--config {args.config}: cannot read ({exc.strerror})") from None
        lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
        return ",".join(ln for ln in lines if ln)
    return os.environ.get("IOLAB_BUFFER", "")


def build_env(config: str, stats_file: str | None) -> dict[str, str]:
    """The environment additions that load the library with config (checked first)."""
    lib = paths.interposer_library("buffer")
    bufspec.check(config, lib)
    value = bufspec.with_verbose(config, stats_file) if stats_file else config
    return {**launch.preload_env([lib]), "IOLAB_BUFFER": value}


def _wait(proc: subprocess.Popen[bytes]) -> int:
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:  # the program got the SIGINT too: let it flush and end
            continue


def run(args: argparse.Namespace) -> int:
    argv = list(args.command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("nothing to run: iolab buffer [--spec SPEC] -- ./app args")
    config = _spec(args)
    if args.stats and not args.quiet:
        inputs = [args.config] if args.config else []
        cli_common.check_output_file(args.stats, "--stats", inputs)
        stats_target.check(args.stats, argv)
    before = stats_target.Seen.of(Path(args.stats)) if args.stats else None
    with tempfile.TemporaryDirectory(prefix="iolab-buffer-") as tmp:
        stats = None if args.quiet else str(Path(tmp) / "stats.txt")
        env = {**os.environ, **build_env(config, stats)}
        if args.verbose:
            print(f"iolab buffer: LD_PRELOAD={env['LD_PRELOAD']} IOLAB_BUFFER={config!r}",
                  file=sys.stderr)
        try:
            proc = subprocess.Popen(argv, env=env)
        except OSError as exc:
            raise UsageError(f"cannot start {argv[0]}: {exc.strerror}") from exc
        rc = _wait(proc)
        if stats and Path(stats).exists():
            text = Path(stats).read_text(encoding="utf-8", errors="replace")
            target = args.stats
            if target and before is not None and before.changed(Path(target)):
                print(f"iolab buffer: -o {target} was written by the program during the run; "
                      "kept it, the statistics follow on stderr", file=sys.stderr)
                target = None
            _report_stats(text, target)
    return 128 + (-rc) if rc < 0 and -rc in signal.valid_signals() else rc


def _report_stats(text: str, target: str | None) -> None:
    """The statistics to target, or to stderr; a target that fails after the run is one
    line, and the statistics still reach stderr (the program's exit status is kept)."""
    if target:
        try:
            cli_common.write_output(Path(target), text, "--stats", verb="buffer")
            return
        except UsageError as exc:
            print(f"iolab buffer: {exc}; the statistics follow on stderr", file=sys.stderr)
    sys.stderr.write(text)
