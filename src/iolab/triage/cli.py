"""``iolab triage``: every log a centre collects, read once into a store, ranked by the
node-hours its I/O wastes, each with its fix."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from iolab import cli_common
from iolab.errors import EXIT_OK, UsageError, verb_line

EXIT_READER_LOST = 1  # the readers were lost mid-run: what was read is stored, not all


def default_store() -> Path:
    env = os.environ.get("IOLAB_TRIAGE_STORE")
    if env is not None:
        if not env:
            raise UsageError("IOLAB_TRIAGE_STORE is set but empty; give a folder or unset it")
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "iolab" / "triage"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="folders of logs (walked recursively, any layout), Darshan logs, "
                        "iolab profiles, or manifest files (one path per line); none: report "
                        "from the store as it is")
    p.add_argument("--store", metavar="DIR",
                   help="the store's folder (Parquet tables by day; default: "
                        "$IOLAB_TRIAGE_STORE, else $XDG_DATA_HOME/iolab/triage)")
    p.add_argument("--batch", type=int, default=64, metavar="N",
                   help="logs per batch written to the store: the most a killed run loses "
                        "(default: %(default)s)")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="applications, users, jobs and experiments shown (default: %(default)s)")
    p.add_argument("--ranks-per-node", type=int, default=64, metavar="N",
                   help="ranks per node assumed for a job whose log does not say its node "
                        "count; such jobs are marked estimated (default: %(default)s)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", dest="format", action="store_const", const="json",
                     help="the report as JSON (schema_version 1) on stdout")
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv",
                     help="CSV on stdout: one row per job by wasted node-hours, with its "
                          "costliest finding and fix")
    fmt.set_defaults(format="text")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines while reading")
    _add_view_arguments(p)
    # ---- where logs are read (-j, --dask*): src/iolab/triage/scale.py owns these options
    from iolab.triage import scale

    scale.add_arguments(p)
    # ---- end of the reading options
    # ---- anonymised stores (--anonymize, --anonymize-key): src/iolab/triage/anonymize.py
    from iolab.triage import anonymize

    anonymize.add_arguments(p)
    # ---- end of the anonymisation options
    cli_common.add_examples(p, [
        ("iolab triage /darshan-logs/2026/11 --store /scratch/u/triage",
         "read a month of a centre's logs (only new ones on a second run), rank by waste"),
        ("iolab triage --store /scratch/u/triage --top 20 --json",
         "the ranking of what the store holds, as JSON"),
        ("iolab triage -j 8 manifest.txt --store /scratch/u/triage --csv",
         "the logs a manifest lists, 8 processes, the ranking as CSV"),
        ("iolab triage --store /scratch/u/triage --html triage.html",
         "the dashboard: top applications and their fixes, weekly trends, file systems"),
        ("iolab triage --store /scratch/u/triage --csv --table slowdowns",
         "the flagged slowdowns as CSV (also: weeks, file-systems, savings, ...)"),
        ("iolab triage /archive/darshan --store /scratch/u/triage --dask-slurm --slurm-jobs 16",
         "read on 16 Slurm jobs of Dask workers (dask-jobqueue)"),
    ])
    cli_common.one_line_errors(p, "iolab triage")
    p.set_defaults(_positionals_anywhere="paths")


# --- views: CSV tables, the HTML dashboard, slowdown settings (iolab.triage.trends) ---
def _add_view_arguments(p: argparse.ArgumentParser) -> None:
    # deferred: see the note above run()
    from iolab.triage.render_views import CSV_TABLES

    tables = ["jobs", *CSV_TABLES]
    p.add_argument("--table", choices=tables, metavar="NAME",
                   help="with --csv: which table (" + ", ".join(tables) + "; default: jobs)")
    p.add_argument("--html", metavar="FILE",
                   help="also write the dashboard: one self-contained HTML page (top "
                        "applications, users and jobs with their fixes, weekly trends with "
                        "the flagged slowdowns, file systems)")
    p.add_argument("--slowdown-factor", type=float, default=1.2, metavar="X",
                   help="a week's runs are a slowdown when their median I/O seconds per GiB "
                        "is at least X times the earlier steady weeks' (default: %(default)s)")
    p.add_argument("--slowdown-p", type=float, default=0.01, metavar="P",
                   help="... and the one-sided Mann-Whitney U test gives p < P "
                        "(default: %(default)s)")


def _check_view_arguments(args: argparse.Namespace) -> Path | None:
    """Bad view options refused before any log is read; the --html file checked."""
    if args.table is not None and args.format != "csv":
        raise UsageError(f"--table {args.table}: only with --csv")
    if not args.slowdown_factor > 1.0:
        raise UsageError(f"--slowdown-factor {args.slowdown_factor}: must be more than 1")
    if not 0.0 < args.slowdown_p < 1.0:
        raise UsageError(f"--slowdown-p {args.slowdown_p}: must be between 0 and 1")
    if args.html is None:
        return None
    return cli_common.check_output_file(args.html, "--html", args.paths)


def _write_html(args: argparse.Namespace, report: dict[str, Any], out: Path) -> None:
    # deferred: see the note above run()
    from iolab.pages.page import write_page
    from iolab.triage.dashboard import dashboard_page

    write_page(dashboard_page(report), out, quiet=True, verb="triage")
    if not args.quiet:
        print(f"iolab triage: wrote {out.resolve()}", file=sys.stderr)
# --- end of views ---


# The verb's modules are imported where they are used: `iolab triage --help` builds only the
# options (with scale's and anonymize's blocks); the store, discovery, reading and report come
# in with the run that needs them.
def run(args: argparse.Namespace) -> int:
    # deferred: see the note above run()
    from iolab.triage import scale

    scale.stacks_on_sigusr1()  # a centre's run that seems stuck says where it is

    scale.check_arguments(args)
    for opt, val in (("--top", args.top), ("--batch", args.batch),
                     ("--ranks-per-node", args.ranks_per_node)):
        if val is not None and val < 1:
            raise UsageError(f"{opt} {val}: must be at least 1")
    if args.store == "":
        raise UsageError("--store: empty folder name")
    where = Path(args.store).expanduser() if args.store else default_store()
    html_out = _check_view_arguments(args)
    # deferred: see the note above run()
    from iolab.triage import store
    from iolab.triage.discover import discover

    store.check_store(where, args.paths, creating=bool(args.paths))
    # ---- anonymised stores: the key checked, nothing created yet
    from iolab.triage import anonymize

    anon_plan = anonymize.plan(args, where, reading=bool(args.paths))
    # ---- end of the anonymisation hook
    found = discover(args.paths)  # bad paths refused before anything is created
    if args.paths:
        # deferred: see the note above run()
        from iolab.triage.ingest import ingest, stderr_progress

        try:  # a cluster that cannot be reached is refused here, before the store is made
            with scale.open_reader(args) as reader:
                done = ingest(found, where, reader, batch_logs=args.batch,
                              progress=None if args.quiet else stderr_progress,
                              anonymize=anon_plan)
        except scale.ReaderLost as exc:
            got = exc.done
            print(verb_line("triage", f"reading stopped {exc}; {got.read + got.unreadable} "
                            "new logs stored, the rest not read: run the same command again "
                            "to read them"), file=sys.stderr)
            return EXIT_READER_LOST
        stalled = getattr(reader, "stalled", 0)
        if stalled:  # said even with -q: a reader hung, not a progress note
            stderr_progress(f"a log's reader did not answer within its time limit "
                            f"({stalled} time{'s' if stalled > 1 else ''}): "
                            "stopped, the logs it held read again one at a time "
                            "(--log-time-limit)")
        if not args.quiet:
            stderr_progress(
                f"{done.found} logs found ({done.skipped_files} other files skipped): "
                f"{done.read} read, {done.unreadable} could not be read, {done.already} "
                f"already stored, {done.duplicates} copies of stored logs, {reader.label}, "
                f"in {done.seconds:.1f} s")
    _report(args, where, html_out)
    return EXIT_OK


def _report(args: argparse.Namespace, where: Path, html_out: Path | None) -> None:
    # deferred: see the note above run()
    from iolab.triage import render, store
    from iolab.triage.anonymize import report_record
    from iolab.triage.rank import Options, build_report, prepare, ranked_jobs
    from iolab.triage.render_views import to_csv_table

    opts = Options(top=args.top, ranks_per_node=args.ranks_per_node,
                   slowdown_factor=args.slowdown_factor, slowdown_p=args.slowdown_p)
    anonymization = report_record(where)  # said in every output, never the key
    con = store.connect(where)
    try:
        if args.format == "csv" and args.table in (None, "jobs") and html_out is None:
            prepare(con, opts)
            sys.stdout.write(render.to_csv(ranked_jobs(con, None), anonymization))
            return
        report = build_report(con, opts, anonymization)
        jobs_csv = (render.to_csv(ranked_jobs(con, None), anonymization)
                    if args.format == "csv" and args.table in (None, "jobs") else "")
    finally:
        con.close()
    if html_out is not None:
        _write_html(args, report, html_out)
    if args.format == "csv":
        sys.stdout.write(jobs_csv or to_csv_table(report, args.table))
    else:
        sys.stdout.write(render.to_json(report) if args.format == "json" else
                         render.to_text(report))
