"""``iolab report``: one self-contained HTML page with plots. The verb only: the pages are
built by :mod:`iolab.pages` (runs, sweeps), :mod:`iolab.diagnose.page` (logs),
:mod:`iolab.tune.page` and :mod:`iolab.study.report`.

    iolab report run 12            # a stored benchmark run
    iolab report sweep 3           # bandwidth against the swept parameter(s)
    iolab report tune 5            # convergence and knob importances
    iolab report study 2           # the CUG'17 study of this machine
    iolab report job.darshan       # a Darshan log or iolab profile (also: diagnose --html)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from iolab import cli_common
from iolab.errors import UsageError
from iolab.pages.page import Page, write_page
from iolab.results import tunes
from iolab.results.db import connect, get_run
from iolab.sweep import store as sweep_store

# Each kind of page is imported where it is built: each pulls numpy (the plots) and the
# log, tune and study pages their verb's modules too (diagnose's model and rules, tune's
# search), ~0.3 s of every start that a refused command line or another kind never needs.

KINDS = ("run", "sweep", "tune", "study")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.usage = "iolab report {run,sweep,tune,study} ID | LOG [LOG ...]  [-o FILE] [--figures DIR]"
    p.add_argument("what", nargs="+", metavar="WHAT",
                   help="'run ID', 'sweep ID', 'tune ID', 'study ID' (stored in the results "
                        "database), or Darshan logs / iolab profiles")
    cli_common.add_output(p, "the HTML file (default: iolab-report-<what>.html in the "
                             "current directory; never an input)")
    p.add_argument("--figures", metavar="DIR",
                   help="also write each plot as PNG and SVG into DIR (for papers)")
    cli_common.add_db(p)
    cli_common.add_quiet_verbose(p, "print nothing but errors",
                                 "also each section and plot the page holds")
    cli_common.add_examples(p, [
        ('iolab report run 3 -o run3.html', 'one page with the plots of run 3'),
        ('iolab report sweep 1', 'the page of sweep 1 (iolab-report-sweep-1.html)'),
        ('iolab report job.darshan --figures figs',
         "a log's page, and each plot as PNG and SVG in figs/"),
    ])
    cli_common.one_line_errors(p, "iolab report")


def _stored_id(what: list[str]) -> tuple[str, list[int]] | None:
    """('run', [ids]) for 'run 3 4' (several runs on one page), ('sweep', [id])..."""
    if what[0] not in KINDS:
        return None
    ids = what[1:]
    many = what[0] == "run"
    if not ids or not all(i.isdigit() for i in ids) or (len(ids) > 1 and not many):
        one = "ID [ID ...]" if many else "ID (one number"
        raise UsageError(f"usage: iolab report {what[0]} {one}, e.g. "
                         f"'iolab report {what[0]} 3'" + (")" if not many else ""))
    return what[0], [int(i) for i in ids]


def run(args: argparse.Namespace) -> int:
    stored = _stored_id(args.what)
    inputs = [] if stored else list(args.what)
    if not stored:
        for p in inputs:
            if not Path(p).is_file():
                raise UsageError(f"{p}: no such file; give a Darshan log, an iolab profile, "
                                 f"or one of {', '.join(KINDS)} and an ID")
    default = (f"iolab-report-{stored[0]}-{'-'.join(map(str, stored[1]))}.html" if stored
               else f"iolab-report-{Path(inputs[0]).name.split('.')[0] or 'log'}.html")
    out = cli_common.check_output_file(args.output or default, "-o", inputs)
    figdir = cli_common.check_output_dir(args.figures, "--figures", inputs) \
        if args.figures else None
    page = _stored_page(stored[0], stored[1], args.db) if stored else _log_page(inputs)
    write_page(page, out, figdir, quiet=args.quiet, verbose=args.verbose)
    return 0


def _log_page(paths: list[str]) -> Page:
    # deferred: numpy, the model, diagnose's rules and page (see the imports above)
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.page import log_page
    from iolab.diagnose.report import diagnose
    from iolab.model.job import build_model
    from iolab.sources import load_source

    model = build_model([load_source(p) for p in paths])
    return log_page([diagnose(model, Thresholds())])


def _stored_page(kind: str, idents: list[int], db: str | None) -> Page:
    conn = connect(db, read_only=True)  # a missing database: one line, before numpy
    # deferred: numpy, through the plots (see the imports above)
    from iolab.pages.build_bench import runs_page, sweep_page

    if kind == "run":
        rows = []
        for i in idents:
            row = get_run(conn, i)
            if row is None:
                raise UsageError(f"run {i}: no such run (see 'iolab results')")
            rows.append(row)
        return runs_page(rows)
    ident = idents[0]
    if kind == "tune":
        tune = tunes.get_tune(conn, ident)
        if tune is None:
            raise UsageError(f"tune {ident}: no such tune (see 'iolab tune --list')")
        # deferred: numpy and tune's search (see the imports above)
        from iolab.tune.page import tune_page

        return tune_page(tune, tunes.trials(conn, ident))
    if kind == "sweep":
        sw = sweep_store.get_sweep(conn, ident)
        if sw is None:
            raise UsageError(f"sweep {ident}: no such sweep (see 'iolab sweep --list')")
        return sweep_page(sw, sweep_store.sweep_points(conn, ident))
    # deferred: numpy and the study's tables (see the imports above)
    from iolab.study.report import study_page

    return study_page(conn, ident)
