"""``iolab results``: list stored runs, show one (text, ``--json``, ``--csv``), import an
engine JSON document made elsewhere, delete runs.

Listing and showing only read: a missing database is an error, never created.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab import cli_common
from iolab.errors import UsageError
from iolab.results import db, tunes
from iolab.results.render import ids_report, render, run_report, runs_report

ACTIONS = ("list", "show", "import", "delete", "tunes")


@dataclass(frozen=True)
class ActionHelp:
    usage: str
    description: str
    options: tuple[str, ...]  # the dests of the verb's options that apply to this action


ACTION_HELP = {
    "list": ActionHelp(
        "iolab results [list] [--status S] [--api A] [--layout L] [--label L] [--last N] "
        "[-q] [-v] [--json|--csv] [-o FILE] [--db PATH]",
        "List the stored runs, newest last: one row per run (bandwidth medians for data runs, "
        "operations per second per phase for metadata runs).",
        ("status", "api", "layout", "label", "last", "quiet", "verbose", "format", "output",
         "db")),
    "show": ActionHelp(
        "iolab results show ID [--json|--csv] [-o FILE] [--db PATH]",
        "Show one stored run: its facts, one row per phase and repetition, the summary over "
        "the repetitions (bandwidth; for a metadata run operations per second per phase, as "
        "mdtest's SUMMARY), the effective hints and notes. --json adds the engine's document "
        "under 'engine'; --csv is one row per phase.",
        ("format", "output", "db")),
    "import": ActionHelp(
        "iolab results import FILE.json [--label L] [--db PATH]",
        "Store an engine document made elsewhere ('iolab-bench --json FILE.json').",
        ("label", "db")),
    "delete": ActionHelp(
        "iolab results delete ID|sweep:ID|tune:ID|study:ID... [--yes] [--db PATH]",
        "Delete stored runs (all or none), or a sweep, tune or study with all its runs; asks "
        "first unless --yes. A run of a sweep, tune or study goes only with the whole of it.",
        ("yes", "db")),
    "tunes": ActionHelp(
        "iolab results tunes [--json] [-o FILE] [--db PATH]",
        "List the stored tunes (iolab tune).",
        ("format", "output", "db")),
}


EXAMPLES = [  # the verb's --help, and each action's own help its own
    ('iolab results', 'every stored run, oldest first'),
    ('iolab results --last 5 --api posix', 'the newest 5 POSIX runs'),
    ('iolab results show 3 --json', "run 3: its phases, settings and the engine's document"),
    ('iolab results import run.json --label laptop',
     "store a document that 'iolab-bench --json run.json' wrote elsewhere"),
    ('iolab results delete 7 --yes',
     "delete run 7 (a run of a sweep goes only with it: delete sweep:ID)"),
    ('iolab results tunes', 'the stored tunes with their claims'),
]


class _HelpAction(argparse.Action):
    """``-h/--help``: after an action word (``iolab results show --help``) that action's own
    help; alone, the whole verb's."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        action = getattr(namespace, "action", None)
        if action in ACTION_HELP:
            sys.stdout.write(action_help(parser, action))
        else:
            parser.print_help()
        parser.exit()


def action_help(parser: argparse.ArgumentParser, action: str) -> str:
    """One action's help, from the verb's own options (their help text lives once)."""
    spec = ACTION_HELP[action]
    fmt = parser._get_formatter()
    fmt.add_usage(spec.usage, [], [], prefix="usage: ")
    fmt.add_text(spec.description)
    fmt.start_section("options")
    fmt.add_arguments([a for a in parser._actions if a.dest in spec.options])
    fmt.end_section()
    mine = [(c, w) for c, w in EXAMPLES if _action_of(c) == action]
    if mine:
        fmt.add_text(cli_common.examples_text(mine))
    return fmt.format_help()


def _action_of(command: str) -> str:
    words = command.split()
    return words[2] if len(words) > 2 and words[2] in ACTION_HELP else "list"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = ("iolab results [list] [filters] | show ID | import FILE.json [--label L] "
                    "| delete ID|sweep:ID|tune:ID|study:ID... [--yes] | tunes   "
                    "(ACTION --help: its own help)")
    # replaces argparse's own -h/--help, which cannot see the action word given before it
    optionals = parser._optionals  # the group holding argparse's -h/--help
    optionals.conflict_handler = "resolve"
    parser.add_argument("-h", "--help", action=_HelpAction,
                        help="show this help and exit; after an action, that action's help")
    optionals.conflict_handler = "error"
    # no default here: the help tells "results --help" from "results list --help"
    parser.add_argument("action", nargs="?", choices=ACTIONS, default=None,
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
    cli_common.add_examples(parser, EXAMPLES)
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
    args.action = args.action or "list"
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
        print(f"iolab results: no runs stored yet ({db.default_db_path()} does not exist; "
              "'iolab bench' "
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
        cli_common.write_output(Path(args.output), text, verb="results")
    else:
        sys.stdout.write(text)
    return 0


def _tunes(args: argparse.Namespace, conn: Any) -> int:
    rows = tunes.list_tunes(conn)
    text = tunes.tunes_json(rows) if args.format == "json" else tunes.tunes_table(rows)
    if args.output:
        cli_common.write_output(Path(args.output), text, verb="results")
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
            print("iolab results: nothing deleted", file=sys.stderr)
            return 0
    n = db.delete_runs(conn, ids) if ids else 0
    for kind, ident in groups:
        n += db.delete_group(conn, kind, ident)
        print(f"iolab results: deleted {kind} {ident}", file=sys.stderr)
    print(f"iolab results: deleted {n} run{'s' if n != 1 else ''}", file=sys.stderr)
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
    print(f"iolab results: {path} stored as run {rid} in {args.db or db.default_db_path()}",
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
