"""``iolab compare A B``: B against A.

    iolab compare run:12 run:15           # two stored runs (a bare number is a run)
    iolab compare sweep:3 sweep:4         # point by point
    iolab compare study:1 study:2         # machine against machine (the KNL/Haswell table)
    iolab compare before.darshan after.darshan   # per-layer bytes and time

Ratios are B/A of the medians, above 1 when B is better, with the 95% interval and verdict of
iolab.stats from the repetitions (B or A better exactly when the interval excludes 1). Like is
compared with like; a side that did not finish is marked partial (iolab.compare.sides).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

from iolab import cli_common
from iolab.compare.logs import LAYER_HEADERS, layer_diff, layer_rows
from iolab.compare.sides import check_kinds, parse_side, stored_side
from iolab.errors import UsageError
from iolab.pages.page import Page, Plot, Section, Table, write_page
from iolab.pages.prep_bench import (
    RATIO_HEADERS,
    Series,
    op_name,
    ops_of,
    ratios,
    sweep_series,
    x_kind,
)
from iolab.results.db import connect
from iolab.stats import CONFIDENCE, RESAMPLES
from iolab.sweep import store

# Imported where they are used: the logs' model and diagnosis (numpy) by _logs, the plots
# (numpy) with -o; a compare of two stored runs, sweeps, tunes or studies needs neither, and
# numpy at start-up cost every compare ~0.2 s of CPU.


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.usage = "iolab compare A B   (run:ID, sweep:ID, tune:ID, study:ID, or two logs)"
    p.add_argument("a", metavar="A", help="the reference: KIND:ID or a log / profile")
    p.add_argument("b", metavar="B", help="compared with A (B/A)")
    cli_common.add_output(p, "also write an HTML page with the table and plot (never an input)")
    cli_common.add_format(p, csv=False, json_help="print the ratios as JSON instead of text")
    cli_common.add_db(p)
    cli_common.add_quiet_verbose(p, "no table on stdout",
                                 "also each side's repetitions and how they are judged")
    cli_common.add_examples(p, [
        ('iolab compare run:3 run:5', 'B/A ratios per phase with 95% confidence intervals'),
        ('iolab compare sweep:1 sweep:2 -o compare.html',
         'two sweeps point by point, as an HTML page'),
        ('iolab compare run:3 run:5 --json', 'the ratios as JSON'),
        ('iolab compare before.darshan after.darshan', 'two logs of a job, before and after a fix'),
    ])
    cli_common.one_line_errors(p, "iolab compare")


def run(args: argparse.Namespace) -> int:
    sa, sb = parse_side(args.a), parse_side(args.b)
    if (sa is None) != (sb is None):
        raise UsageError("compare two stored things (KIND:ID) or two logs, not one of each")
    inputs = [x for x in (args.a, args.b) if sa is None]
    out = cli_common.check_output_file(args.output, "-o", inputs) if args.output else None
    if sa is None:
        return _logs(args, out)
    assert sb is not None

    check_kinds(args.a, sa, args.b, sb)
    conn = connect(args.db, read_only=True)
    side_a, side_b = stored_side(conn, *sa), stored_side(conn, *sb)
    a, b = side_a.samples, side_b.samples
    rows = ratios(a, b)
    for tag, side in (("A", side_a), ("B", side_b)):
        if side.partial and args.format != "json":
            print(f"iolab compare: {tag} is partial ({side.status}): compared on what it "
                  "holds", file=sys.stderr)
    if args.format == "json":
        print(json.dumps({
            "schema_version": 1, "kind": "compare", "a": a.title, "b": b.title,
            "a_status": side_a.status, "b_status": side_b.status,
            "partial": side_a.partial or side_b.partial, "unit": "MiB/s", "ratios": [
            {"workload": r.workload, "a_median": r.a_median, "b_median": r.b_median,
             "ratio": r.ratio, "ci_low": r.ci_low, "ci_high": r.ci_high, "n_a": r.n_a,
             "n_b": r.n_b, "note": r.note} for r in rows]}, indent=2))
    elif not args.quiet:
        _print_table(f"B/A: A = {a.title}, B = {b.title} (MiB/s)", RATIO_HEADERS,
                     [r.row() for r in rows])
        if args.verbose:
            _print_samples(a, b, [r.workload for r in rows])
    if out is not None:
        # deferred: matplotlib and numpy only when a page is written (-o)
        from iolab.pages import plots

        ok = [r for r in rows if r.ratio is not None]
        vals = [float(r.ratio or 0) for r in ok]
        lows = [float(r.ci_low if r.ci_low is not None else r.ratio or 0) for r in ok]
        highs = [float(r.ci_high if r.ci_high is not None else r.ratio or 0) for r in ok]
        sec = Section("B / A", [Table(RATIO_HEADERS, [r.row() for r in rows],
                                      "Median bandwidth, MiB/s; 95% bootstrap interval")])
        if ok:
            sec.blocks.append(Plot("ratios", "B/A per workload (bars: 95% interval)",
                                   lambda: plots.ratio_bars(
                                       [r.workload for r in ok], vals, lows, highs,
                                       f"{b.title} / {a.title}")))
        if sa[0] == sb[0] == "sweep":
            sec.blocks += _sweep_overlays(conn, sa[1], sb[1])
        write_page(Page(f"iolab compare: {a.title} vs {b.title}", [], [sec]), out,
                   quiet=args.quiet, verb="compare", verbose=args.verbose)
    return 0


def _sweep_overlays(conn: Any, ida: int, idb: int) -> list[Any]:
    """Both sweeps' lines on one plot per phase, when they vary the same parameter."""
    # deferred: matplotlib and numpy only when a page is written (-o)
    from iolab.pages import plots

    swa, swb = store.get_sweep(conn, ida), store.get_sweep(conn, idb)
    assert swa is not None and swb is not None
    if [n for n, _ in swa["grid"]] != [n for n, _ in swb["grid"]]:
        return []
    x = swa["grid"][0][0]
    line = swa["grid"][1][0] if len(swa["grid"]) > 1 else None
    pa, pb = store.sweep_points(conn, ida), store.sweep_points(conn, idb)
    keys = [k for pt in pa for k in ops_of(pt.doc)]
    out = []
    for op, rp in dict.fromkeys(keys):
        lines: list[Series] = []
        for tag, pts in (("A", pa), ("B", pb)):
            for s in sweep_series(pts, x, op, line, rp):
                s.label = f"{tag} {s.label}".strip()
                lines.append(s)
        if lines:
            name = op_name(op, rp)
            out.append(Plot(f"overlay-{name.replace(' ', '-')}", f"{name}: A and B against {x}",
                            partial(plots.series, lines, x, "MiB/s", f"{name} bandwidth",
                                    x_kind=x_kind(x, swa["grid"][0][1], pa))))
    return out


def _logs(args: argparse.Namespace, out: Path | None) -> int:
    # deferred: the log readers, model and diagnosis (numpy) only when two logs are compared
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.page import log_sections
    from iolab.diagnose.report import diagnose
    from iolab.model.job import build_model
    from iolab.pages.prep_log import layers
    from iolab.sources import load_source

    ma, mb = (build_model([load_source(p)]) for p in (args.a, args.b))
    la, lb = layers(ma), layers(mb)
    rows = layer_rows(la, lb, ma.metrics.io_time_s, mb.metrics.io_time_s)
    if args.format == "json":
        print(json.dumps({"schema_version": 1, "kind": "compare-logs", "a": args.a,
                          "b": args.b, "layers": [
            {"layer": n, "time_ratio": r} for n, r in layer_diff(la, lb)]}, indent=2))
    elif not args.quiet:
        _print_table(f"A = {args.a}, B = {args.b}", LAYER_HEADERS, rows)
        if args.verbose:
            for tag, m in (("A", ma), ("B", mb)):
                print(f"{tag}: {m.job.nprocs} processes, {len(m.files.paths)} files, "
                      f"I/O time {m.metrics.io_time_s:.3f} s (slowest rank)")
    if out is not None:
        secs = [Section("Per layer, B against A", [Table(LAYER_HEADERS, rows)])]
        for tag, m, name in (("a-", ma, args.a), ("b-", mb, args.b)):
            part = log_sections(diagnose(m, Thresholds()), prefix=tag)
            part[0].heading = f"{tag[0].upper()}: {name}"
            secs += part
        write_page(Page(f"iolab compare: {args.a} vs {args.b}", [], secs), out,
                   quiet=args.quiet, verb="compare", verbose=args.verbose)
    return 0


def _print_samples(a: Any, b: Any, workloads: list[str]) -> None:
    """What each ratio is made of: every repetition of each side (MiB/s), and the rule."""
    print()
    print(f"Repetitions (MiB/s); the interval is a {CONFIDENCE:.0%} percentile bootstrap "
          f"({RESAMPLES} resamples) of the ratio of medians, judged only with enough runs "
          "a side to show a difference at that level (iolab.stats)")
    for w in workloads:
        for tag, side in (("A", a), ("B", b)):
            vals = side.values.get(w, [])
            shown = " ".join(f"{v:.1f}" for v in vals) if vals else "none"
            print(f"  {w}  {tag} ({len(vals)}): {shown}")
    sys.stdout.flush()


def _print_table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    print(title)
    for row in (headers, *rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    sys.stdout.flush()
