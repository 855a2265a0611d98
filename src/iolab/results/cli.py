"""``iolab results``: list stored runs, show one (text, ``--json``, ``--csv``), import an
engine JSON document made elsewhere, delete runs.

Listing and showing only read: a missing database is an error, never created.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from iolab import cli_common
from iolab.errors import UsageError
from iolab.results import db
from iolab.results.render import ids_report, render, run_report, runs_report

ACTIONS = ("list", "show", "import", "delete", "tunes")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = ("iolab results [list] [filters] | show ID | import FILE.json [--label L] "
                    "| delete ID|sweep:ID|tune:ID|study:ID... [--yes] | tunes")
    parser.add_argument("action", nargs="?", choices=ACTIONS, default="list",
                        help="list (default), show ID, import FILE.json (a document "
                             "'iolab-bench --json' wrote), delete ID... (or sweep:ID, tune:ID, "
                             "study:ID: the whole of it with its runs), tunes (the stored "
                             "tunes: iolab tune) (choices: %(choices)s)")
    parser.add_argument("items", nargs="*", metavar="ID|FILE",
                        help="the run to show or delete, or the file to import")
    cli_common.add_db(parser)
    cli_common.add_format(parser)
    cli_common.add_output(parser, "write the list or the run (text, --json, --csv) to FILE, "
                                  "not stdout (never the database, a log or a profile)")
    cli_common.add_quiet_verbose(parser, quiet_help="list: print only the run ids",
                                 verbose_help="list: add the command line of each run")
    parser.add_argument("--yes", action="store_true", help="delete without asking")
    flt = parser.add_argument_group("filters (list; case-insensitive)")
    flt.add_argument("--status", type=str.lower, choices=db.RUN_STATUSES,
                     help="only runs with this status (choices: %(choices)s)")
    flt.add_argument("--api", help="only runs of this API (posix, mpiio, hdf5, pnetcdf, null)")
    flt.add_argument("--layout", help="only runs of this layout (fpp, segmented, strided, ...)")
    flt.add_argument("--label", help="only runs with this label (e.g. default:fpp)")
    flt.add_argument("--last", type=int, metavar="N", help="only the newest N runs")
    cli_common.one_line_errors(parser, "iolab results")


def _run_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"run id must be a number, got {text!r}") from None
    if value < 1:
        raise UsageError(f"run id must be positive, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    if args.last is not None and args.last < 1:
        raise UsageError(f"--last must be at least 1 (got {args.last})")
    if args.action == "import":
        return _import(args)
    if args.action == "list" and args.items:
        raise UsageError(f"unexpected argument {args.items[0]!r}; to show a run: "
                         f"iolab results show {args.items[0]}")
    if args.action == "show" and len(args.items) != 1:
        raise UsageError("'iolab results show' needs a run id, e.g. 'iolab results show 3'")
    if args.action == "delete" and not args.items:
        raise UsageError("'iolab results delete' needs run ids, e.g. 'iolab results delete 3 4'")
    if args.output:
        cli_common.check_output_file(args.output, "-o", [args.db or db.default_db_path()])
    if args.action == "list" and args.db is None and not db.default_db_path().exists():
        print(f"no runs stored yet ({db.default_db_path()} does not exist; 'iolab bench' "
              "makes it)", file=sys.stderr)
        return 0
    conn = db.connect(args.db, must_exist=True, read_only=args.action != "delete")
    try:
        if args.action == "tunes":
            return _tunes(args, conn)
        if args.action == "delete":
            return _delete(args, conn)
        if args.action == "show":
            rid = _run_id(args.items[0])
            row = db.get_run(conn, rid)
            if row is None:
                raise UsageError(f"no run {rid} in {args.db or db.default_db_path()}; "
                                 "'iolab results' lists the stored runs")
            report = run_report(row)
        else:
            _check_filters(args, conn)
            flt = db.RunFilter(status=args.status, api=args.api, layout=args.layout,
                               label=args.label, limit=args.last)
            rows = db.list_runs(conn, flt)
            report = runs_report(rows, with_command=args.verbose)
            if args.quiet:
                report = ids_report(rows)
    finally:
        conn.close()
    if args.quiet and args.action == "list" and args.format == "text":
        text = "".join(f"{row['id']}\n" for row in report.nodes[0].rows)  # type: ignore[union-attr]
    else:
        text = render(report, args.format)
    if args.output:
        cli_common.write_output(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return 0


def _tunes(args: argparse.Namespace, conn: Any) -> int:
    from iolab.tune.render import tunes_table
    from iolab.tune.store import list_tunes

    rows = list_tunes(conn)
    text = (json.dumps({"schema_version": 1, "kind": "tunes", "tunes": rows}, indent=2) + "\n"
            if args.format == "json" else tunes_table(rows))
    if args.output:
        cli_common.write_output(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return 0


def _check_filters(args: argparse.Namespace, conn: Any) -> None:
    """A filter value no stored run has is most likely a typo: say which values exist."""
    for col in ("api", "layout"):
        val = getattr(args, col)
        if val is None:
            continue
        known = db.stored_values(conn, col)
        if known and val.lower() not in {k.lower() for k in known}:
            raise UsageError(f"--{col} {val}: no stored run has it (stored: "
                             f"{', '.join(known)})")


def _target(text: str) -> tuple[str, int]:
    """A run id, or sweep:ID / tune:ID / study:ID (the whole of it, with its runs)."""
    kind, sep, ident = text.partition(":")
    if not sep:
        return "run", _run_id(text)
    if kind not in ("run", *db.GROUP_KINDS):
        raise UsageError(f"{text}: delete takes run ids or KIND:ID with KIND one of run, "
                         f"{', '.join(db.GROUP_KINDS)}")
    return kind, _run_id(ident)


def _delete(args: argparse.Namespace, conn: Any) -> int:
    where = args.db or db.default_db_path()
    targets = list(dict.fromkeys(_target(t) for t in args.items))
    ids = [i for k, i in targets if k == "run"]
    groups = [(k, i) for k, i in targets if k != "run"]
    missing = [str(i) for i in ids if db.get_run(conn, i) is None]
    missing += [f"{k}:{i}" for k, i in groups if not db.group_exists(conn, k, i)]
    if missing:
        raise UsageError(f"no {'run ' if ids else ''}{', '.join(missing)} in {where}; "
                         "nothing deleted")
    _check_whole(conn, ids, groups)
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError("'iolab results delete' asks before deleting; add --yes to "
                             "delete without a terminal")
        what = ", ".join(str(i) for i in ids)
        what = (f"run{'s' if len(ids) > 1 else ''} {what}" if ids else "")
        what = ", ".join(x for x in [what, *(f"{k} {i} and its runs" for k, i in groups)] if x)
        answer = input(f"delete {what}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted", file=sys.stderr)
            return 0
    n = db.delete_runs(conn, ids) if ids else 0
    for kind, ident in groups:
        n += db.delete_group(conn, kind, ident)
        print(f"deleted {kind} {ident}", file=sys.stderr)
    print(f"deleted {n} run{'s' if n != 1 else ''}", file=sys.stderr)
    return 0


def _check_whole(conn: Any, ids: list[int], groups: list[tuple[str, int]]) -> None:
    """A run of a sweep, tune or study, or a sweep of a study, goes only with the whole:
    deleting it alone would leave a point or a trial pointing at nothing."""
    for rid, (kind, ident) in db.run_owners(conn, ids).items():
        if (kind, ident) not in groups:
            raise UsageError(f"run {rid} belongs to {kind} {ident}; a {kind}'s runs go only "
                             f"with it: 'iolab results delete {kind}:{ident}' deletes the "
                             f"{kind} and all its runs; nothing deleted")
    for kind, ident in groups:
        study = db.sweep_study(conn, ident) if kind == "sweep" else None
        if study is not None and ("study", study) not in groups:
            raise UsageError(f"sweep {ident} is an experiment of study {study}; 'iolab "
                             f"results delete study:{study}' deletes the study, its sweeps "
                             "and their runs; nothing deleted")


def _import(args: argparse.Namespace) -> int:
    """Store an engine JSON document (``iolab-bench --json FILE``, here or elsewhere)."""
    if len(args.items) != 1:
        raise UsageError("'iolab results import' needs one file: iolab results import "
                         "RUN.json")
    path = Path(args.items[0])
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc}); give the document 'iolab-bench --json' "
                         "wrote") from None
    problem = _engine_doc_problem(doc)
    if problem:
        raise UsageError(f"{path}: not an iolab-bench document ({problem})")
    conn = db.connect(args.db)
    try:
        rid = db.store_run(conn, db.NewRun(
            command=["iolab", "results", "import", str(path)], status=str(doc["status"]),
            engine_doc=doc, label=args.label,
            error=None if doc["status"] == "ok" else f"imported from {path}"))
    finally:
        conn.close()
    print(f"iolab: {path} stored as run {rid} in {args.db or db.default_db_path()}",
          file=sys.stderr)
    return 0


def _engine_doc_problem(doc: Any) -> str | None:
    if not isinstance(doc, dict):
        return "the top level is not an object"
    if not isinstance(doc.get("schema_version"), int):
        return "no schema_version"
    if doc.get("status") not in db.RUN_STATUSES:
        return f"status must be one of {', '.join(db.RUN_STATUSES)}"
    for key in ("config", "environment"):
        if not isinstance(doc.get(key), dict):
            return f"no '{key}' object"
    if not isinstance(doc.get("repetitions"), list):
        return "no 'repetitions' list"
    return None
