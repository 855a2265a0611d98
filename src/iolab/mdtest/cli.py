"""``iolab mdtest [iolab options] MDTEST-ARGS...``: an mdtest command line (IOR 4's mdtest)
run by iolab's engine, with mdtest's report.

iolab's own options (ranks, launcher, database) come first; everything from the first word
that is not one of them is mdtest's, read as mdtest reads it (:mod:`iolab.mdtest.parse`).
The line becomes one ``iolab bench --metadata`` run (:mod:`iolab.bench.subrun`), launched,
checked and stored like every other run; the report is mdtest's (:mod:`.output`). A refused
option is one line, exit 2, with nothing run, created or stored.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from iolab.bench import subrun
from iolab.errors import EXIT_USAGE, UsageError
from iolab.ior import front
from iolab.mdtest import mapping, output, table
from iolab.mdtest.parse import parse_command_line
from iolab.runs.engine_doc import from_json

EXIT_FAILED_RUN = 1

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Run an mdtest command line on iolab's engine (its metadata run), "
                          "with mdtest's SUMMARY table; 'iolab mdtest -h' lists mdtest's "
                          "options and what iolab does with each.")
    parser.usage = ("iolab mdtest [--np N] [--nodes N] [--ppn N] [--launcher L] [--mpi M] "
                    "[--db FILE] [--label TEXT] [--dry-run] MDTEST-ARGS...")
    front.add_front_arguments(
        parser, verb="mdtest", dest="mdtest_args",
        words_help="an mdtest command line (-h: mdtest's options and what iolab does with each)",
        label_help="stored with the run (default: 'mdtest' and the line)",
        dry_run_help="print the iolab bench run an mdtest line becomes; runs nothing",
        examples=[
            ("iolab mdtest -n 1000 -u -d /scratch/u/md",
             "1,000 files and directories per rank, a directory per rank"),
            ("iolab mdtest --np 4 -F -n 10000 -w 3901 -e 3901 -d /scratch/u/md",
             "files only, 3,901 bytes written and read in each (IO500's mdtest-hard size)"),
        ])


def help_text() -> str:
    lines = ["iolab mdtest: mdtest's command line on iolab's engine (its metadata run), "
             "with mdtest's report.", "", "mdtest option            what iolab does"]
    for opt in table.OPTIONS:
        what = opt.note if opt.how != "refused" else \
            f"refused: {opt.note}; nearest: {opt.nearest}"
        spelled = f"-{opt.short}, --{opt.long}" if opt.short and opt.long else opt.spelling
        lines.append(f"  {spelled:<26} {what}")
    lines += ["", "APIs: POSIX. Not in iolab's metadata run: " + ", ".join(table.MISSING_APIS),
              "", "mdtest's defaults: -a POSIX -d ./out -i 1 -z 0 -b 1, directory and file "
              "phases (-F: files only, -D: directories only).", "See docs/mdtest.md."]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UsageError as exc:  # the verb's own one line, as the other verbs print theirs
        print(f"iolab mdtest: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    words = list(args.mdtest_args)
    line = parse_command_line(words)
    if line.help or not words and not args.dry_run:
        sys.stdout.write(help_text())
        return 0
    ranks = front.ranks(args)
    plan = mapping.plan(line.test, ranks)
    counts = plan.task_counts or (ranks,)
    engine_args = plan.engine_args(bool(line.test.params["verify_read"]))
    runs = [[*front.launch_args(args, n), *engine_args] for n in counts]
    if args.dry_run:
        for bench_args in runs:
            print(shlex.join(["iolab", "bench", *bench_args]))
        return 0
    parent = os.path.dirname(os.path.abspath(plan.directory))
    touches_fs = plan.api != "null"  # mdtest -a DUMMY makes nothing, -d included
    if touches_fs and not os.path.isdir(parent):
        raise UsageError(f"mdtest -d {plan.directory}: its parent folder {parent} does not "
                         "exist (mdtest makes only the last folder); create it first")
    for bench_args in runs:
        subrun.check_args(bench_args)  # the engine's own judgement, before anything is made
    for warning in plan.warnings:
        print(f"iolab mdtest: {warning} {plan.status_file}; -n {plan.items} is used, as "
              "mdtest does", file=sys.stderr)
    began = output.now_text()
    made_dir = touches_fs and not os.path.isdir(plan.directory)
    if made_dir:
        os.mkdir(plan.directory, 0o775)  # mdtest's DIRMODE
    fs_text = output.fs_text(plan.directory) if touches_fs else output.DUMMY_FS_TEXT
    label = args.label or f"mdtest {shlex.join(words)}"
    done_tests: list[tuple[int, dict[str, Any]]] = []
    failed = None
    try:
        for n, bench_args in zip(counts, runs):  # mdtest's -f/-l/-s: one test per count
            done = subrun.run_bench(bench_args, label, args.db)
            if done.status == "refused":
                raise UsageError(done.error or "iolab bench refused the run")
            if done.status == "ok" and done.doc is not None:
                _store_status_file(plan, done.doc)
            if done.doc is not None:
                done_tests.append((n, done.doc))
            if done.status != "ok":
                failed = done
                break
    finally:
        if made_dir:
            _remove_if_empty(plan.directory)
    if done_tests:  # what finished is printed, a failed test's table included
        sys.stdout.write(output.render_series(done_tests, line.test, plan,
                                              output.command_line_text(words), began,
                                              fs_text, ranks))
    if failed is not None:
        print(f"iolab mdtest: the run {failed.status}: {failed.error} (stored as run "
              f"{failed.run_id})", file=sys.stderr)
        return EXIT_FAILED_RUN
    return 0


def _store_status_file(plan: mapping.MdtestRun, doc: dict[str, Any]) -> None:
    """mdtest's StoreStoneWallingIterations: after a stonewalled creation (-W) with -x,
    the count every rank created (the furthest rank's at the deadline, all worn out to it)
    as one number, for a later -T/-E/-r line's -x."""
    if not plan.status_file or not plan.per_item.stonewall_s or \
            not plan.selected("create") or plan.phases == "dirs":  # mdtest's file_test
        return
    count = plan.items
    for ph in from_json(doc).phases("create"):
        if ph.stonewall:
            count = int(ph.stonewall["xfers_max"])
    with open(plan.status_file, "w", encoding="utf-8") as f:
        f.write(str(count))


def _remove_if_empty(folder: str) -> None:
    """mdtest removes the -d folder it made; one something else wrote into stays."""
    try:
        os.rmdir(folder)
    except OSError:
        pass
