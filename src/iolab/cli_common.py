"""What every verb's command line shares: the flags that mean the same thing everywhere,
one-line usage errors, and the rules for the files a verb writes.

The vocabulary (docs/cli.md has the table): ``-o/--output`` is where a verb puts what it
makes, ``--json``/``--csv`` choose a machine-readable format on stdout, ``-q/--quiet`` and
``-v/--verbose`` say less or more, ``--mpi {default,openmpi,mpich}`` names the MPI library,
``--config FILE`` is a settings file, ``--db PATH`` the results database.

Output files (:func:`check_output_file`, :func:`check_output_dir`) are checked before any
work starts: never an input of the command (same resolved path or same inode), never an
existing Darshan log or iolab profile (by their magic bytes), a writable place that is not a
directory. Writing creates at most the missing last folder and says so; reading commands
never create anything.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import struct
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NoReturn

from iolab.errors import EXIT_USAGE, UsageError, verb_line

MPI_CHOICES = ("default", "openmpi", "mpich")  # == iolab.launch.MPI_FLAVOURS (tested)

# --- the shared flags --------------------------------------------------------------------


def add_output(parser: argparse._ActionsContainer, help_text: str, metavar: str = "FILE",
               default: str | None = None) -> None:
    parser.add_argument("-o", "--output", metavar=metavar, default=default, help=help_text)


def add_format(parser: argparse._ActionsContainer, csv: bool = True,
               json_help: str = "print JSON (keys carry units) instead of text") -> None:
    """``--json`` / ``--csv``: switches (stdout), never taking a file name."""
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", dest="format", action="store_const", const="json",
                     help=json_help)
    if csv:
        fmt.add_argument("--csv", dest="format", action="store_const", const="csv",
                         help="print CSV instead of text (one row per run; with 'show', "
                              "one per phase)")
    fmt.set_defaults(format="text")


def add_quiet_verbose(parser: argparse._ActionsContainer, quiet_help: str,
                      verbose_help: str) -> None:
    grp = parser.add_mutually_exclusive_group()
    grp.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    grp.add_argument("-v", "--verbose", action="store_true", help=verbose_help)


def add_mpi(parser: argparse._ActionsContainer, help_text: str) -> None:
    parser.add_argument("--mpi", choices=MPI_CHOICES, default="default",
                        help=help_text + " (choices: %(choices)s; default: %(default)s)")


def add_db(parser: argparse._ActionsContainer) -> None:
    """``--db PATH``: every verb that reads or writes the results database."""
    parser.add_argument(
        "--db", metavar="PATH", default=None,
        help="results database (default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, "
             "else ~/.local/share/iolab/results.db)")


EXAMPLES_HEADING = "examples:"


class _ExamplesFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that the examples keep their lines: the text before
    them (a description, a note) is wrapped as usual."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        head, sep, examples = text.partition(EXAMPLES_HEADING + "\n")
        filled = super()._fill_text(head, width, indent) if head.strip() else ""
        if not sep:
            return filled
        return (filled + "\n\n" if filled else "") + sep + examples


def add_examples(parser: argparse.ArgumentParser,
                 examples: Sequence[tuple[str, str]]) -> None:
    """An EXAMPLES section at the end of ``--help``: each command as it runs, then what it
    does. tests/cli/test_help_examples.py parses every one with the verb's parser."""
    parser.formatter_class = _ExamplesFormatter
    parser.epilog = examples_text(examples)


def examples_text(examples: Sequence[tuple[str, str]]) -> str:
    lines = [EXAMPLES_HEADING]
    for command, what in examples:
        lines += [f"  {command}", f"      {what}"]
    return "\n".join(lines)


def help_examples(help_text: str) -> list[str]:
    """The example commands of a ``--help`` text (the lines under ``examples:`` that start
    with ``iolab``)."""
    _, _, examples = help_text.partition("\n" + EXAMPLES_HEADING + "\n")
    return [ln.strip() for ln in examples.splitlines() if ln.startswith("  iolab ")]


def one_line_errors(parser: argparse.ArgumentParser, prog: str) -> None:
    """A bad option is one line naming this verb's help (argparse prints the usage first,
    and a subparser's error would otherwise show the top-level usage)."""

    def error(message: str) -> NoReturn:
        verb = prog.removeprefix("iolab").strip() or None
        sys.stderr.write(verb_line(verb, f"{message} (see '{prog} --help')") + "\n")
        raise SystemExit(EXIT_USAGE)

    setattr(parser, "error", error)  # noqa: B010  (an instance override)


# --- what a file is ----------------------------------------------------------------------

_DARSHAN_MAGIC = 6567223  # DARSHAN_MAGIC_NR (0x643537), after the 8-byte version string
_DARSHAN_VERSION = re.compile(rb"^[1-9]\.\d{1,3}\x00*$")
_PROFILE_HEAD = re.compile(rb'^\{\s*"type"\s*:\s*"(job|process|names|record|segments)"')


def file_kind(path: str | os.PathLike[str]) -> str | None:
    """"a Darshan log", "an iolab profile", "a results database" for such a file, else None
    (read from the first bytes: names can lie)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return None
    if len(head) >= 16 and _DARSHAN_VERSION.match(head[:8]):
        le, be = struct.unpack("<q", head[8:16])[0], struct.unpack(">q", head[8:16])[0]
        if _DARSHAN_MAGIC in (le, be):
            return "a Darshan log"
    if head.startswith(b"\x1f\x8b") and str(path).endswith((".darshan.gz", ".darshan")):
        return "a Darshan log"  # Darshan 2 logs are gzip files
    if _PROFILE_HEAD.match(head):
        return "an iolab profile"
    if head.startswith(b"SQLite format 3\x00"):
        return "a results database"
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return os.path.samefile(a, b)
    except OSError:
        return False


# --- output paths ------------------------------------------------------------------------


def _parent_ok(target: Path, opt: str, make_folder: bool = True) -> None:
    """The folder that will hold target exists (or only it is missing, its parent exists
    and ``make_folder``) and accepts new files; probed by making and removing a file."""
    parent = target.parent
    if not parent.exists():
        if not make_folder:
            raise UsageError(f"{opt} {target}: the folder {parent} does not exist; "
                             "create it first")
        if not parent.parent.is_dir():
            raise UsageError(f"{opt} {target}: the folder {parent} does not exist; "
                             "create it first (iolab makes at most the last folder)")
        parent = parent.parent
    elif not parent.is_dir():
        raise UsageError(f"{opt} {target}: {parent} is not a folder")
    if not _can_create_in(parent):
        raise UsageError(f"{opt} {target}: cannot create files in {parent}; choose a "
                         "writable place")


def _not_an_input(target: Path, opt: str, inputs: Iterable[str | os.PathLike[str]]) -> None:
    for inp in inputs:
        if _same_file(target, Path(inp)):
            raise UsageError(f"{opt} {target} is an input of this command ({inp}); it would "
                             "be overwritten: choose another output name")
    kind = file_kind(target)
    if kind is not None:
        raise UsageError(f"{opt} {target} is {kind}; iolab never overwrites one: choose "
                         "another output name")


def check_output_file(path: str | os.PathLike[str], opt: str = "-o",
                      inputs: Iterable[str | os.PathLike[str]] = (),
                      make_folder: bool = True) -> Path:
    """A file this command will write: refused (UsageError, before any work) when it is an
    input, an existing Darshan log, iolab profile or results database, a directory, or in a
    place where files cannot be created. Creates nothing."""
    target = Path(path)
    if str(path) == "":
        raise UsageError(f"{opt}: empty file name")
    if target.is_dir():
        raise UsageError(f"{opt} {target} is a folder; give a file name")
    _not_an_input(target, opt, inputs)
    if target.exists():
        st = target.stat()
        if not stat.S_ISREG(st.st_mode):
            return target  # /dev/null, a FIFO, a terminal: written as they are
        if not os.access(target, os.W_OK):
            raise UsageError(f"{opt} {target}: not writable; choose another name")
    _parent_ok(target, opt, make_folder)
    return target


def check_output_dir(path: str | os.PathLike[str], opt: str = "-o",
                     inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """A folder this command will write files into: exists and accepts new files, or only
    it is missing (made by :func:`make_dir` when the work starts). Creates nothing."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{opt} {target} is a file, not a folder")
    for inp in inputs:
        if _same_file(target, Path(inp)):
            raise UsageError(f"{opt} {target} is an input of this command; choose another "
                             "folder")
    where = target if target.is_dir() else target.parent
    if not where.is_dir():
        raise UsageError(f"{opt} {target}: the output folder's parent {where} does not exist; "
                         "create it first (iolab makes at most the last folder)")
    if not _can_create_in(where):
        what = "files in the output folder" if where == target else \
            f"the output folder in {where}"
        raise UsageError(f"{opt} {target}: cannot create {what}; choose a writable place")
    return target


def _can_create_in(folder: Path) -> bool:
    try:
        fd, probe = tempfile.mkstemp(prefix=".iolab-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


def make_dir(path: Path, quiet: bool = False, verb: str | None = None) -> Path:
    """Make the (checked) output folder if it is missing, and say so (as ``verb``)."""
    if not path.is_dir():
        try:
            path.mkdir()
        except OSError as exc:
            raise UsageError(f"cannot create the folder {path}: {exc.strerror}") from None
        if not quiet:
            print(verb_line(verb, f"created the folder {path}"), file=sys.stderr)
    return path


def write_output(path: Path, text: str, opt: str = "-o", verb: str | None = None) -> None:
    """Write a checked output file (through a temporary file, so a failure leaves the old
    contents); the missing last folder is made and named."""
    make_dir(path.parent, verb=verb)
    if path.exists() and not path.is_file():
        with open(path, "w", encoding="utf-8") as f:  # /dev/stdout, a FIFO
            f.write(text)
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        if "tmp" in locals() and os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"{opt} {path}: cannot write ({exc.strerror}); the work is done, "
                         "choose another place and run again") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
