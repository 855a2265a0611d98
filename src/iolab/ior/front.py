"""What ``iolab ior`` and ``iolab mdtest`` share: a verb whose own options (ranks, launcher,
database) come first and whose every other word is a foreign tool's command line, passed
on unparsed to that tool's reader (IOR 4 and mdtest share IOR's option parser, option.c)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from iolab import cli_common, launch

# iolab's options: the ones taking a value, then the switches. None is an IOR 4 or mdtest
# spelling; -h is the tool's (its options and what iolab does with each).
VALUED = ("--np", "--nodes", "--ppn", "--launcher", "--mpi", "--launcher-args", "--db",
          "--label")
SWITCHES = ("--dry-run", "--help")


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """(iolab's leading options, the tool's words): the tool's start at the first word that
    is not one of iolab's, or after ``--``."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return argv[:i], argv[i + 1:]
        if word.split("=", 1)[0] in VALUED:
            i += 1 if "=" in word else 2
        elif word in SWITCHES:
            i += 1
        else:
            break
    return argv[:i], argv[i:]


def add_front_arguments(parser: argparse.ArgumentParser, *, verb: str, dest: str,
                        words_help: str, label_help: str, dry_run_help: str,
                        examples: Sequence[tuple[str, str]]) -> None:
    """The verb's own options, and a parser that hands every word after them to ``dest``
    (argparse would read the tool's ``-n`` or ``-t`` as its own)."""
    parser.add_argument(dest, nargs=argparse.REMAINDER, help=words_help)
    original = parser.parse_known_args

    def parse_known_args(args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        ns = namespace or argparse.Namespace()
        ours, theirs = split_argv(list(args or []))
        ns, rest = original(ours, ns)
        setattr(ns, dest, theirs)
        return ns, rest

    setattr(parser, "parse_known_args", parse_known_args)  # noqa: B010
    parser.add_argument("--np", type=int, metavar="N", help="ranks (default as iolab bench)")
    parser.add_argument("--nodes", type=int, metavar="N", help="nodes (srun -N)")
    parser.add_argument("--ppn", type=int, metavar="N", help="ranks per node")
    parser.add_argument("--launcher", choices=launch.LAUNCHERS, default="auto")
    parser.add_argument("--launcher-args", metavar="ARGS")
    cli_common.add_mpi(parser, "MPI library, as iolab bench --mpi")
    cli_common.add_db(parser)
    parser.add_argument("--label", help=label_help)
    parser.add_argument("--dry-run", action="store_true", help=dry_run_help)
    cli_common.add_examples(parser, examples)
    cli_common.one_line_errors(parser, f"iolab {verb}")


def nodes(args: argparse.Namespace) -> int | None:
    """The nodes the ranks run on: --nodes, else the Slurm allocation's, else unknown."""
    if args.nodes:
        return int(args.nodes)
    env_nodes = launch.allocation_nodes(os.environ)
    return env_nodes if launch.in_slurm_allocation() else None


def ranks(args: argparse.Namespace) -> int:
    """--np, else --nodes x --ppn, else the launcher's default (as iolab bench)."""
    if args.np is not None:
        return int(args.np)
    if args.nodes and args.ppn:
        return int(args.nodes * args.ppn)
    launcher = launch.resolve_launcher(launch.LaunchSpec(np=1, launcher=args.launcher))
    return launch.default_np(launcher, ppn=args.ppn)


def launch_args(args: argparse.Namespace, nranks: int) -> list[str]:
    """The ``iolab bench`` options that launch the runs as the verb was told to."""
    out = ["--np", str(nranks), "--launcher", args.launcher, "--mpi", args.mpi]
    for name in ("nodes", "ppn", "db"):
        if getattr(args, name):
            out += [f"--{name}", str(getattr(args, name))]
    if args.launcher_args:
        out.append(f"--launcher-args={args.launcher_args}")
    return out
