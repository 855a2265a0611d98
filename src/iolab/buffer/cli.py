"""``iolab buffer``: run a program with libiolab-buffer.so and print the statistics.

    iolab buffer [-c SPEC] [--stats FILE] [-q] -- ./app args

SPEC is an ``IOLAB_BUFFER`` value (default: the environment's, else ``*`` with 4 buffers of
4 MiB and 2 read ahead per file). The program's stdout, stderr and exit status are its own;
the statistics (one IOBUF-shaped table per file and process) go to stderr or FILE.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from iolab import launch, paths
from iolab.buffer import spec as bufspec
from iolab.errors import UsageError

HELP = "run a program with libiolab-buffer (open IOBUF: write-behind, read-ahead); print stats"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c",
        "--config",
        default=None,
        metavar="SPEC",
        help="IOLAB_BUFFER value, e.g. '*.dat:size=64M:count=4:prefetch=2,%%stdout:size=1M' "
        "(default: $IOLAB_BUFFER, else '*' with the defaults)",
    )
    parser.add_argument(
        "--stats", default=None, metavar="FILE", help="write the statistics to FILE, not stderr"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="do not print statistics")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- program and arguments")


def build_env(config: str, stats_file: str | None) -> dict[str, str]:
    """The environment additions that load the library with config (checked first)."""
    bufspec.parse(config)
    lib = paths.interposer_library("buffer")
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
        raise UsageError("nothing to run: iolab buffer [-c SPEC] -- ./app args")
    config = args.config if args.config is not None else os.environ.get("IOLAB_BUFFER", "")
    with tempfile.TemporaryDirectory(prefix="iolab-buffer-") as tmp:
        stats = None if args.quiet else str(Path(tmp) / "stats.txt")
        env = {**os.environ, **build_env(config, stats)}
        try:
            proc = subprocess.Popen(argv, env=env)
        except OSError as exc:
            raise UsageError(f"cannot start {argv[0]}: {exc.strerror}") from exc
        rc = _wait(proc)
        if stats and Path(stats).exists():
            text = Path(stats).read_text(encoding="utf-8", errors="replace")
            if args.stats:
                Path(args.stats).write_text(text, encoding="utf-8")
            else:
                sys.stderr.write(text)
    return 128 + (-rc) if rc < 0 and -rc in signal.valid_signals() else rc
