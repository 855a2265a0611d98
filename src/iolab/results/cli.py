"""``iolab results``: list stored runs, or show one (text, ``--json``, ``--csv``)."""

from __future__ import annotations

import argparse
import sys

from iolab.errors import UsageError
from iolab.results import db
from iolab.results.render import render, run_report, runs_report

HELP = "list the runs stored in the results database, or show one"


def add_db_argument(parser: argparse._ActionsContainer) -> None:
    """``--db PATH``: shared by every verb that reads or writes the results database."""
    parser.add_argument(
        "--db", metavar="PATH", default=None,
        help="results database (default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, "
             "else ~/.local/share/iolab/results.db)")


def add_format_arguments(parser: argparse._ActionsContainer) -> None:
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", dest="format", action="store_const", const="json",
                     help="print JSON (keys carry units) instead of a table")
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv",
                     help="print CSV (one row per run; with 'show', one per phase)")
    fmt.set_defaults(format="text")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=("list", "show"), default="list",
                        help="'list' (default) or 'show ID'")
    parser.add_argument("run_id", nargs="?", metavar="ID", help="the run to show")
    add_db_argument(parser)
    add_format_arguments(parser)
    flt = parser.add_argument_group("filters (list)")
    flt.add_argument("--status", choices=db.RUN_STATUSES, help="only runs with this status")
    flt.add_argument("--api", help="only runs of this API (posix, mpiio, hdf5, ...)")
    flt.add_argument("--layout", help="only runs of this layout (fpp, segmented, ...)")
    flt.add_argument("--label", help="only runs with this label (e.g. default:fpp)")
    flt.add_argument("--last", type=int, metavar="N", help="only the newest N runs")


def _run_id(text: str | None) -> int:
    if text is None:
        raise UsageError("'iolab results show' needs a run id, e.g. 'iolab results show 3'")
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"run id must be a number, got {text!r}") from None
    if value < 1:
        raise UsageError(f"run id must be positive, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    if args.action == "list" and args.run_id is not None:
        raise UsageError(f"unexpected argument {args.run_id!r}; to show a run: "
                         f"iolab results show {args.run_id}")
    if args.last is not None and args.last < 1:
        raise UsageError(f"--last must be at least 1 (got {args.last})")
    conn = db.connect(args.db)
    try:
        if args.action == "show":
            rid = _run_id(args.run_id)
            row = db.get_run(conn, rid)
            if row is None:
                raise UsageError(f"no run {rid} in {args.db or db.default_db_path()}; "
                                 "'iolab results' lists the stored runs")
            report = run_report(row)
        else:
            flt = db.RunFilter(status=args.status, api=args.api, layout=args.layout,
                               label=args.label, limit=args.last)
            report = runs_report(db.list_runs(conn, flt))
    finally:
        conn.close()
    sys.stdout.write(render(report, args.format))
    return 0
