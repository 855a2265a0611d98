"""``iolab ior [iolab options] IOR-ARGS...``: an IOR 4 command line, run by iolab's engine.

iolab's own options (ranks, launcher, database) come first; everything from the first word
that is not one of them is IOR's, read as IOR 4 reads it (:mod:`iolab.ior.parse`). Each IOR
test becomes one ``iolab bench`` run (:mod:`iolab.bench.subrun`), so it is launched, checked
and stored exactly like every other run; the report is IOR's (:mod:`iolab.ior.output`).
Every test is checked before the first one runs: a refused option is one line, exit 2,
nothing stored.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from iolab import cli_common
from iolab.bench import subrun
from iolab.errors import EXIT_USAGE, UsageError
from iolab.ior import front, mapping, output, stonewall_file, table
from iolab.ior.parse import IorLine, IorTest, parse_command_line

EXIT_FAILED_RUN = 1

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Run an IOR 4 command line on iolab's engine, with IOR's report; "
                          "'iolab ior -h' lists IOR's options and what iolab does with each.")
    parser.usage = ("iolab ior [--np N] [--nodes N] [--ppn N] [--launcher L] [--mpi M] "
                    "[--db FILE] [--label TEXT] [--dry-run] IOR-ARGS...")
    front.add_front_arguments(
        parser, verb="ior", dest="ior_args",
        words_help="an IOR 4 command line (-h: IOR's options and what iolab does with each)",
        label_help="stored with each run (default: 'ior' and the line)",
        dry_run_help="print the iolab bench runs an IOR line becomes; runs nothing",
        examples=[
            ("iolab ior -a POSIX -t 1m -b 16m -s 4 -F -e -o /scratch/u/ior/file",
             "IOR's file-per-process POSIX write and read, fsync at close"),
            ("iolab ior --np 8 -a MPIIO -c -t 4m -b 64m -o /scratch/u/ior/shared",
             "8 ranks, one shared file, collective MPI-IO"),
            ("iolab ior -f tests.ior -O summaryFormat=JSON",
             "every test of an IOR script, IOR's JSON summary on stdout"),
        ])


def help_text() -> str:
    lines = ["iolab ior: IOR 4's command line on iolab's engine, with IOR's report.",
             "", "IOR option            what iolab does"]
    for opt in (*table.OPTIONS, *table.DIRECTIVES):
        what = opt.note if opt.how != "refused" else \
            f"refused: {opt.note}; nearest: {opt.nearest}"
        lines.append(f"  {opt.spelling:<26} {what}")
    lines += ["", "APIs: " + ", ".join(f"{k} -> {v}" for k, v in table.APIS.items()),
              "Not in iolab: " + ", ".join(table.MISSING_APIS), "",
              "Defaults as IOR 4: -a POSIX -t 256k -b 1m -s 1 -i 1 -o testFile, one shared "
              "file (-F: one per rank), write and read.", "See docs/ior.md."]
    return "\n".join(lines) + "\n"


def _summary_target(line: IorLine) -> tuple[str, str | None]:
    """(format, file or None) from -O summaryFormat / summaryFile (IOR: the first test's)."""
    p = line.tests[0].params
    fmt = str(p["summaryFormat"]).lower()
    if fmt not in ("default", "json", "csv"):
        raise UsageError(f"IOR -O summaryFormat={p['summaryFormat']}: IOR 4 takes default, "
                         "JSON or CSV")
    return fmt, (str(p["summaryFile"]) or None)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UsageError as exc:  # the verb's own one line, as the other verbs print theirs
        print(f"iolab ior: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    ior_argv = list(args.ior_args)
    line = parse_command_line(ior_argv)
    if line.help or not ior_argv and not args.dry_run:
        sys.stdout.write(help_text())
        return 0
    ranks = front.ranks(args)
    nodes = front.nodes(args)
    fmt, summary_file = _summary_target(line)
    runs = [mapping.engine_args(t, ranks, nodes) for t in line.tests]
    if summary_file:
        cli_common.check_output_file(summary_file, "-O summaryFile", [
            str(t.params["testFileName"]) for t in line.tests])
    bench_args = [[*front.launch_args(args, ranks), *r] for r in runs]
    if args.dry_run:
        _print_notes(line)
        for test, words in zip(line.tests, bench_args):
            print(shlex.join(["iolab", "bench", *words, *stonewall_file.read_args(test)[0]]))
        return 0
    for words in bench_args:  # the engine's own judgement of every run, before any runs
        subrun.check_args(words)
    _print_notes(line)
    command_line = shlex.join(["ior", *ior_argv])
    label = args.label or f"ior {shlex.join(ior_argv)}"
    began = output.now_text()
    results, failed = _run_all(line.tests, bench_args, label, args.db, command_line)
    report = {"json": lambda: output.render_json(results, began, command_line),
              "csv": lambda: output.render_csv(results)}.get(
                  fmt, lambda: output.render_text(results, began, command_line))()
    if summary_file:
        Path(summary_file).write_text(report)
        print(f"Writing output to {summary_file}")
    else:
        sys.stdout.write(report)
    return EXIT_FAILED_RUN if failed else 0


def _print_notes(line: IorLine) -> None:
    """Once each, after every check passed: how IOR reads what was written (-d 0.1)."""
    for note in dict.fromkeys(n for t in line.tests for n in t.notes):
        print(f"iolab ior: note: {note}", file=sys.stderr)


def _run_all(tests: list[IorTest], bench_args: list[list[str]], label: str, db: str | None,
             command_line: str) -> tuple[list[output.TestResult], bool]:
    results: list[output.TestResult] = []
    failed = False
    for test_id, (test, words) in enumerate(zip(tests, bench_args)):
        start = output.now_text()
        read_limit, warning = stonewall_file.read_args(test)  # as the file is now
        if warning:
            print(f"iolab ior: WARNING: {warning}", file=sys.stderr)
        done = subrun.run_bench([*words, *read_limit], label, db)
        if done.status == "refused":
            raise UsageError(done.error or "iolab bench refused the run")
        if done.status != "ok" or done.doc is None:
            failed = True
            print(f"iolab ior: test {test_id} {done.status}: {done.error} (stored as run "
                  f"{done.run_id})", file=sys.stderr)
            if done.doc is None:
                continue
        if done.status == "ok":
            stonewall_file.store(test, done.doc)
        result = output.TestResult(test_id, test, done.doc, command_line, start)
        result.rows = output.rows_of(done.doc, int(test.params["transferSize"]),
                                     int(test.params["outlierThreshold"]))
        results.append(result)
    return results, failed
