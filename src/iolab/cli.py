"""``iolab <verb>``: one module per verb, each owning its options and its work.

A verb module exposes ``add_arguments(parser)`` and ``run(args) -> int``; its one-line help
is in :data:`VERBS`. Only the module of the verb being run is imported, so ``iolab --help``
stays fast and a verb whose optional dependencies are missing does not break the others.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from iolab import __version__
from iolab.errors import EXIT_USAGE, UsageError, verb_line

# verb -> (module, one-line help). The order is the order of ``iolab --help``.
VERBS: dict[str, tuple[str, str]] = {
    "bench": ("iolab.bench.cli",
              "benchmark the file system with the iolab-bench engine (IOR's flags work too); "
              "with no options, the default job"),
    "ior": ("iolab.ior.cli",
            "run an IOR 4 command line (options, -O directives, -f scripts) on iolab's "
            "engine, with IOR's report; stored like every run"),
    "mdtest": ("iolab.mdtest.cli", "run an mdtest command line (IOR 4's mdtest) on iolab's engine, with mdtest's SUMMARY table; stored like every run"),  # noqa: E501
    "io500": ("iolab.io500.cli", "run the IO500 benchmark from its ini file on iolab's engine: its phases, score and result files; every phase stored"),  # noqa: E501
    "results": ("iolab.results.cli",
                "list the runs stored in the results database, show, import or delete them"),
    "profile": ("iolab.profile.cli",
                "run a program under the iolab tracer (Darshan-compatible counters); "
                "'show FILE' dumps one"),
    "diagnose": ("iolab.diagnose.cli",
                 "diagnose a job's I/O from Darshan logs or iolab profiles: evidence and "
                 "ready fixes"),
    "triage": ("iolab.triage.cli", "read every log of a centre (folders, manifests) into a Parquet store once; rank applications, users and jobs by the node-hours their I/O wastes, with fixes"),  # noqa: E501
    "buffer": ("iolab.buffer.cli",
               "run a program with libiolab-buffer (open IOBUF: write-behind, read-ahead); "
               "print stats"),
    "hints": ("iolab.hints.cli",
              "open a test file with MPI-IO hints and show the effective ones (unknown keys, "
              "changed values; OMPIO's parameters under Open MPI)"),
    "tune": ("iolab.tune.cli",
             "find the fastest hints, striping, I/O mode and layout for a workload on this "
             "file system, and prove the winner with statistics"),
    "sweep": ("iolab.sweep.cli",
              "run a benchmark over a grid of one or two parameters with repetitions, each "
              "point stored as it finishes (--resume ID)"),
    "compare": ("iolab.compare.cli",
                "set two stored runs, sweeps, tunes or studies (or two logs) side by side: "
                "B/A ratios with confidence intervals"),
    "study": ("iolab.study.cli",
              "the CUG'17 I/O study of this machine in one command (--quick, --full): "
              "stored, compared with another machine's by 'compare'"),
    "report": ("iolab.report.cli",
               "one self-contained HTML page with plots of a stored run, sweep, tune or "
               "study, or of a Darshan log / iolab profile"),
}


def _verb_module(verb: str) -> ModuleType | None:
    modname = VERBS[verb][0]
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if exc.name is not None and modname.startswith(exc.name):
            return None  # verb not part of this installation
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every verb, or (``only``) of one verb: the others are listed in
    ``iolab --help`` without importing their modules."""
    parser = argparse.ArgumentParser(
        prog="iolab", description="Measure, characterise, diagnose and fix HPC parallel I/O."
    )
    parser.add_argument("--version", action="version", version=f"iolab {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="<verb>")
    for verb, (_, help_line) in VERBS.items():
        p = sub.add_parser(verb, help=help_line, description=help_line)
        if only is not None and verb != only:
            continue
        mod = _verb_module(verb)
        if mod is None:
            continue
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run, _parser=p)
    _one_line_errors(parser)
    return parser


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    def error(message: str) -> NoReturn:
        sys.stderr.write(verb_line(None, f"{message} (see 'iolab --help')") + "\n")
        raise SystemExit(EXIT_USAGE)

    setattr(parser, "error", error)  # noqa: B010  (an instance override)


def _verb_in(argv: Sequence[str]) -> str | None:
    """The verb: the first word that is not a top-level option."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in VERBS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_verb_in(argv) or "")
    try:
        args, rest = parser.parse_known_args(argv)
        tail = getattr(args, "_positionals_anywhere", None)
        if rest and tail and not any(r.startswith("-") and r != "-" for r in rest):
            # argparse fills a '*' positional once: `diagnose A --each B` leaves B over
            getattr(args, tail).extend(rest)
            rest = []
        if rest:  # the verb's own usage line, not the top level's
            getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(rest)}")
    except SystemExit as exc:  # argparse: usage errors exit 2 with one line already
        return int(exc.code or 0)
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return _flushed(int(args._run(args)))
    except UsageError as exc:
        print(verb_line(args.verb, str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(verb_line(args.verb, "interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except SystemExit as exc:
        if isinstance(exc.__context__, BrokenPipeError):  # rich's on_broken_pipe exits 1
            return _quiet_broken_pipe()
        raise


def _flushed(code: int) -> int:
    """Flush stdout here: a reader that stopped early (``| head``) ends us quietly with 0,
    not with the verb's code (e.g. ``--fail-on``) and a message at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _quiet_broken_pipe()
    return code


def _quiet_broken_pipe() -> int:
    devnull = os.open(os.devnull, os.O_WRONLY)  # Python flushes stdout again at exit
    os.dup2(devnull, sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
