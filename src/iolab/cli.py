"""``iolab <verb>``: one module per verb, each owning its options and its work.

A verb module exposes ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``.
Modules are imported only when their verb is used, so ``iolab --help`` stays fast and a verb
whose optional dependencies are missing does not break the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from iolab import __version__
from iolab.errors import EXIT_USAGE, UsageError

# verb -> module. The order is the order of ``iolab --help``.
VERBS: dict[str, str] = {
    "bench": "iolab.bench.cli",
    "results": "iolab.results.cli",
    "profile": "iolab.profile.cli",
    "diagnose": "iolab.diagnose.cli",
    "buffer": "iolab.buffer.cli",
    "hints": "iolab.hints.cli",
}


def _available_verbs() -> dict[str, ModuleType]:
    modules: dict[str, ModuleType] = {}
    for verb, modname in VERBS.items():
        try:
            modules[verb] = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name is not None and modname.startswith(exc.name):
                continue  # verb not part of this installation
            raise
    return modules


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iolab", description="Measure, characterise, diagnose and fix HPC parallel I/O."
    )
    parser.add_argument("--version", action="version", version=f"iolab {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="<verb>")
    for verb, mod in _available_verbs().items():
        help_line = getattr(mod, "HELP", "")
        p = sub.add_parser(verb, help=help_line, description=help_line)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser




def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors exit 2 with one line already
        return int(exc.code or 0)
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args._run(args))
    except UsageError as exc:
        print(f"iolab: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("iolab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
