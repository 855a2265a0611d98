"""``iolab diagnose``: explain a job's I/O from its Darshan log(s), with exact fixes."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

from iolab import cli_common
from iolab.diagnose.config import Thresholds, build_thresholds, parse_size
from iolab.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from iolab.sources import load_source, start_source

# Imported where they are used, not here: the text renderer (rich), the HTML page (pages,
# plots), the results database (--proof) and the fix writer (--emit-fixes) cost ~0.2 s of
# start-up that a --json diagnosis, run on thousands of logs a day, never needs. The model
# and the rules (numpy) are imported once the first log's reader runs (run).

_FAIL_LEVELS = {"high": ("high",), "warn": ("high", "warn")}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("logs", nargs="*", metavar="LOG",
                   help="Darshan log(s) or iolab profile(s) (.iolab, .iolabp, folder of parts); "
                        "logs of one job (same job id) are analysed together, others alone")
    p.add_argument("--each", action="store_true", help="analyse each log alone")
    p.add_argument("--as-one-job", action="store_true",
                   help="analyse all the logs as one job even when their job ids differ")
    cli_common.add_format(p, csv=False,
                          json_help="the report as JSON (schema_version 1): on stdout, or in "
                                    "the -o FILE")
    cli_common.add_output(p, "write the report to FILE: JSON with --json or a .json name, "
                             "HTML with a .html name, else text (never an input or an "
                             "existing log or profile)")
    p.add_argument("--html", metavar="FILE",
                   help="also write a self-contained HTML report to FILE (never an input or "
                        "an existing log or profile)")
    p.add_argument("--emit-fixes", metavar="DIR",
                   help="write the fix artifacts (hints files, env, lfs, Slurm, snippets)")
    p.add_argument("--fail-on", choices=sorted(_FAIL_LEVELS),
                   help="exit 1 when a finding at this level (or worse) exists")
    p.add_argument("--config", metavar="FILE", help="thresholds file (TOML or JSON)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", default=[],
                   help="set one threshold (repeatable), e.g. --set random_share=0.3")
    p.add_argument("--node-memory", metavar="SIZE",
                   help="memory per node (e.g. 96G) for the direct-I/O rule")
    p.add_argument("--nodes", type=int, metavar="N",
                   help="number of nodes of the job (iolab profiles know it)")
    p.add_argument("--cores-per-node", type=int, metavar="N",
                   help="cores per node, for the one-I/O-stream-per-node rule")
    p.add_argument("--proof", type=int, metavar="TUNE_ID", action="append",
                   help="show next to each fix the verdict measured on the real command by "
                        "iolab tune --from-log LOG -- COMMAND (tune TUNE_ID, of this log); "
                        "a proxy tune of this log (iolab tune --from-log LOG) adds the "
                        "proxy's evidence beside the code changes; give one of each "
                        "(--proof A --proof B); without it each fix is 'predicted, not "
                        "proven here'")
    cli_common.add_db(p)
    p.add_argument("--list-thresholds", action="store_true", help="print thresholds and exit")
    p.add_argument("--list-rules", action="store_true", help="print the rules and exit")
    cli_common.add_quiet_verbose(
        p, quiet_help="print no text report (files and --json still written)",
        verbose_help="show why, sources, expected effect and all thresholds")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text report: auto (on a terminal), always, never "
                        "(default: %(default)s)")
    cli_common.add_examples(p, [
        ('iolab diagnose job.darshan', 'the findings of a Darshan log: evidence, cost and the fix'),
        ('iolab diagnose -v run1.iolab', 'an iolab profile, with why, sources and thresholds'),
        ('iolab diagnose --json job.darshan', 'the report as JSON on stdout'),
        ('iolab diagnose --html report.html --emit-fixes fixes job.darshan',
         'an HTML page and the fix files (hints, environment, lfs, Slurm lines)'),
        ('iolab diagnose --fail-on high job.darshan',
         'exit 1 when a HIGH finding appears (for CI)'),
        ('iolab diagnose --list-rules', 'the rules, their thresholds and sources'),
    ])
    cli_common.one_line_errors(p, "iolab diagnose")
    p.set_defaults(_positionals_anywhere="logs")


def _thresholds(args: argparse.Namespace):  # -> Thresholds

    th = build_thresholds(args.config, args.set)
    if args.node_memory:
        try:
            th.node_memory_bytes = parse_size(args.node_memory)
        except ValueError:
            raise UsageError(f"--node-memory {args.node_memory!r}: expected a size like 96G"
                             ) from None
    return th


def _list(args: argparse.Namespace) -> int:
    if args.list_thresholds:
        for name, typ, default, unit, help_ in Thresholds.describe():
            print(f"{name:26} {typ:5} {default!s:>14} {unit:9} {help_}")
    if args.list_rules:
        from iolab.diagnose.rules import registry  # deferred: see the imports

        for r in registry():
            print(f"{r.id:24} {r.severity:5} {r.family:10} {r.title}")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if args.list_thresholds or args.list_rules:
        return _list(args)
    if args.format == "json" and "-" in args.logs:
        args.logs = [x for x in args.logs if x != "-"]  # the old spelling '--json -'
    if not args.logs:
        raise UsageError("no log given; usage: iolab diagnose LOG.darshan [LOG ...]")
    _check_outputs(args)
    for opt, val in (("--nodes", args.nodes), ("--cores-per-node", args.cores_per_node)):
        if val is not None and val < 1:
            raise UsageError(f"{opt} {val}: must be at least 1")
    th = _thresholds(args)
    # The first log's forked reader decompresses it while this process imports numpy, the
    # model and the rules (two cores: a 64,000-file log's ~0.3 s of wall time less).
    first = start_source(args.logs[0])
    try:
        from iolab.diagnose.report import diagnose  # deferred: see above
        from iolab.diagnose.several import group_logs
        from iolab.model.job import build_model

        raws = [first.result(), *(load_source(p) for p in args.logs[1:])]
    finally:
        first.cancel()  # a reader left running when this failed first
    groups, note = group_logs(raws, as_one_job=args.as_one_job, each=args.each)
    if note:
        print(f"iolab diagnose: {note}", file=sys.stderr)
    reports = []
    for g in groups:
        model = build_model(g, nodes=args.nodes, node_memory_bytes=th.node_memory_bytes or None,
                            cores_per_node=args.cores_per_node)
        if note:  # in each report's JSON too
            model.job.notes.append(note)
        reports.append(diagnose(model, th))
    if args.proof:
        _attach_proof(args, reports)
    _render(args, reports)
    if args.fail_on:
        bad = _FAIL_LEVELS[args.fail_on]
        if any(f.severity in bad for rep in reports for f in rep.findings):
            return EXIT_FINDINGS
    return EXIT_OK


def _attach_proof(args: argparse.Namespace, reports: list) -> None:
    """The stored proof and/or proxy tune (tunes of this log, one of each kind at most),
    checked before anything is written."""
    given = " ".join(f"--proof {i}" for i in args.proof)
    if len(reports) != 1:
        raise UsageError(f"{given}: give the one log the proof was made from "
                         f"(these logs make {len(reports)} reports)")
    if len(args.proof) > 2:
        raise UsageError(f"{given}: give at most one proof on the command and one proxy "
                         "tune")
    from iolab.results import db, tunes  # deferred: the database only for --proof

    conn = db.connect(args.db, must_exist=True, read_only=True)
    try:
        rows = [(i, tunes.get_tune(conn, i)) for i in args.proof]
    finally:
        conn.close()
    from iolab.diagnose import proof  # deferred: see the imports

    rep = reports[0]
    for tune_id, row in rows:
        got = proof.load(row, tune_id, rep.model)
        attr = "proof" if isinstance(got, proof.Proof) else "proxy"
        if getattr(rep, attr) is not None:
            what = "proofs on the command" if attr == "proof" else "proxy tunes"
            raise UsageError(f"{given}: tunes {getattr(rep, attr).tune_id} and {tune_id} are "
                             f"both {what}; give one proof on the command and/or one proxy "
                             "tune")
        setattr(rep, attr, got)


def _output_format(args: argparse.Namespace) -> str:
    """The -o file's format: --json, else the file's suffix (.json, .html), else text."""
    if args.format == "json":
        return "json"
    suffix = Path(args.output).suffix.lower()
    return {".json": "json", ".html": "html", ".htm": "html"}.get(suffix, "text")


def _check_outputs(args: argparse.Namespace) -> None:
    """Every file this command writes, checked before any log is read: never one of the
    inputs, never an existing Darshan log or profile, a place where files can be made."""
    inputs = [*args.logs, *([args.config] if args.config else [])]
    files = [(opt, val) for opt, val in (("-o", args.output), ("--html", args.html)) if val]
    for opt, val in files:
        cli_common.check_output_file(val, opt, inputs)
    if len(files) == 2 and Path(files[0][1]).resolve() == Path(files[1][1]).resolve():
        raise UsageError(f"-o and --html name the same file {args.output}; give two names")
    if args.emit_fixes:
        # a new or empty folder, or one an earlier --emit-fixes wrote whose files nobody
        # changed since (docs/diagnose.md, "--emit-fixes into a used folder")
        from iolab.diagnose.emit import check_folder  # deferred: only for --emit-fixes

        check_folder(cli_common.check_output_dir(args.emit_fixes, "--emit-fixes", inputs))


def _render(args: argparse.Namespace, reports: list) -> None:
    """stdout first (the report is shown even if a file then cannot be written), then the
    files, each checked before any log was read."""
    pipe_closed = False
    try:
        _to_stdout(args, reports)
    except BrokenPipeError:
        pipe_closed = True  # the reader stopped (| head): the files below are still written
    except SystemExit as exc:  # rich ends on a closed pipe with SystemExit(1)
        if not isinstance(exc.__context__, BrokenPipeError):
            raise
        pipe_closed = True
    fixes = None
    if args.emit_fixes:  # every refusal before any file is written
        from iolab.diagnose import emit  # deferred: the fix writer only for --emit-fixes

        fixes = emit.plan_all(reports)
        emit.check_plan(Path(args.emit_fixes), fixes)
    if args.output:
        cli_common.write_output(Path(args.output),
                                _document(reports, _output_format(args), args), "-o",
                                verb="diagnose")
    if args.html:
        cli_common.write_output(Path(args.html), _document(reports, "html", args), "--html",
                                verb="diagnose")
    if fixes is not None:
        _emit(Path(args.emit_fixes), fixes)
    if pipe_closed:
        raise BrokenPipeError  # iolab.cli ends quietly with 0, not the --fail-on code


def _emit(folder: Path, fixes: list) -> None:
    """Write the fix files; say which earlier fix folders went and which were kept."""
    from iolab.diagnose import emit  # deferred: the fix writer only for --emit-fixes

    done = emit.write_planned(cli_common.make_dir(folder, verb="diagnose"), fixes)
    gone = sorted({Path(rel).parent.as_posix() if "/" in rel else rel
                   for rel in done.removed} - set(done.kept))
    if gone:
        print(f"iolab diagnose: --emit-fixes {folder}: removed the earlier files the new fixes "
              f"do not have (unchanged since iolab wrote them): {', '.join(gone)}",
              file=sys.stderr)
    if done.kept:
        print(f"iolab diagnose: --emit-fixes {folder}: kept {', '.join(done.kept)}: no longer "
              "part of the fixes, but holding files iolab did not write", file=sys.stderr)


def _to_stdout(args: argparse.Namespace, reports: list) -> None:
    if args.format == "json" and not args.output:
        sys.stdout.write(_json_text(reports) + "\n")
    elif not args.quiet:
        from iolab.diagnose.render_text import render_text  # deferred: rich, for text only

        color = {"always": True, "never": False}.get(args.color)
        if color is None:
            color = sys.stdout.isatty()
        for r in reports:
            render_text(r, sys.stdout, color=color, verbose=args.verbose)
    sys.stdout.flush()


def _json_text(reports: list) -> str:
    from iolab.diagnose.proof import annotate  # deferred: see the imports
    from iolab.diagnose.report import to_dict

    # kind: the envelope of docs/cli.md; each fix predicted or proven (--proof)
    data = [{"schema_version": d["schema_version"], "kind": "diagnosis", **d}
            for d in (annotate(to_dict(r), r) for r in reports)]
    doc = data[0] if len(data) == 1 else {"schema_version": data[0]["schema_version"],
                                           "kind": "diagnoses", "reports": data}
    return json.dumps(doc, indent=2, default=str)


def _document(reports: list, fmt: str, args: argparse.Namespace) -> str:
    if fmt == "json":
        return _json_text(reports) + "\n"
    if fmt == "html":  # the report's page: plots, Darshan-summary tables, the diagnosis
        from iolab.diagnose.page import log_page  # deferred: the page code only for HTML
        from iolab.pages.page import render  # deferred: the page code only for HTML

        return render(log_page(reports))
    from iolab.diagnose.render_text import render_text  # deferred: rich, for text only

    buf = io.StringIO()
    for r in reports:
        render_text(r, buf, color=False, verbose=args.verbose)
    return buf.getvalue()
