"""``iolab study``: the CUG'17 method on this machine, one command.

    iolab study --quick          # a minute: 1-2 ranks, 4 MiB per rank, 2 repetitions
    iolab study                  # 1..cores ranks, 64 MiB per rank, 3 repetitions
    iolab study --full --cpu-freq 1200000,1800000,2400000    # under Slurm
    iolab compare study:1 study:2    # this machine against another one

Experiments: single-stream writes buffered / O_DSYNC / O_DIRECT; file per process from 1 to
N ranks, buffered and direct, write then read once (cold); read three times with the cache
kept; one shared HDF5 file, independent vs collective; MPI 0-byte latency and bandwidth
between two ranks; bandwidth against CPU frequency with a linear fit (Slurm). What this
machine cannot run is skipped, and the study says why. It measures the current directory's
file system.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from iolab import cli_common
from iolab.errors import UsageError
from iolab.launch import in_slurm_allocation
from iolab.pages.page import write_page
from iolab.results.db import connect
from iolab.study import mpi as mpi_mod
from iolab.study import store
from iolab.study.plan import plan, probe
from iolab.study.store import get_study
from iolab.sweep import store as sstore
from iolab.sweep.runner import run_sweep
from iolab.units import fmt_time

_MPI_SIZE = {"quick": (200, 1 << 20, 2), "default": (2000, 4 << 20, 3),
             "full": (10000, 4 << 20, 5)}  # ping-pong round trips, message bytes, runs


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.usage = "iolab study [--quick | --full] [--cpu-freq F1,F2,...] [-o FILE]"
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="size", action="store_const", const="quick",
                      help="about a minute: 1-2 ranks, 4 MiB per rank, 2 repetitions")
    size.add_argument("--full", dest="size", action="store_const", const="full",
                      help="1..cores ranks, 1 GiB per rank, 5 repetitions")
    p.set_defaults(size="default")
    p.add_argument("--cpu-freq", metavar="F1,F2,...",
                   help="CPU frequencies in kHz (srun --cpu-freq) for bandwidth against "
                        "frequency; needs a Slurm allocation")
    p.add_argument("--list", action="store_true", help="list the stored studies and exit")
    cli_common.add_output(p, "also write the study's HTML report (never an input)")
    cli_common.add_mpi(p, "MPI library of the engine and the ping-pong")
    cli_common.add_db(p)
    cli_common.add_format(p, csv=False, json_help="print the stored study (plan, machine, "
                          "what was skipped, its sweeps) as JSON; with --list, the list")
    cli_common.add_quiet_verbose(p, quiet_help="no progress lines",
                                 verbose_help="each point's iolab bench command line too")
    cli_common.add_examples(p, [
        ('iolab study --quick', "about a minute: the machine's I/O study at small sizes"),
        ('iolab study -o study.html', 'the default study, and its HTML report'),
        ('iolab study --list', 'the stored studies (compare two: iolab compare study:1 study:2)'),
    ])
    cli_common.one_line_errors(p, "iolab study")


def run(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args.db, args.format == "json")
    freqs = [f.strip() for f in (args.cpu_freq or "").split(",") if f.strip()]
    bad = [f for f in freqs if not f.isdigit()]
    if bad:
        raise UsageError(f"--cpu-freq {args.cpu_freq}: give frequencies in kHz, e.g. "
                         "1200000,2400000")
    if freqs:
        if not in_slurm_allocation():  # asked for, so never skipped quietly
            raise UsageError("--cpu-freq needs a Slurm allocation (it runs srun --cpu-freq): "
                             "run the study inside salloc or sbatch, or leave --cpu-freq out")
    out = cli_common.check_output_file(args.output, "-o") if args.output else None
    machine = probe(os.getcwd(), freqs)
    exps, skipped = plan(args.size, machine)
    conn = connect(args.db)
    study_id = store.create_study(conn, ["iolab", "study", *sys.argv[2:]], args.size)
    say = (lambda msg: None) if args.quiet else \
        (lambda msg: print(f"iolab study: {msg}", file=sys.stderr))
    say(f"study {study_id} ({args.size}): {len(exps)} experiments on {machine.cores} core(s)"
        f"; skipped: {', '.join(n for n, _ in skipped) or 'none'}")
    result: dict = {"size": args.size, "skipped": [list(s) for s in skipped],
                    "experiments": [[e.name, e.what] for e in exps], "machine": {
                        "cores": machine.cores, "direct_io": machine.direct_io,
                        "numa_nodes": machine.numa_nodes, "slurm": machine.slurm}}
    status = "done"
    mpi_args = [] if args.mpi == "default" else ["--mpi", args.mpi]
    try:
        for e in exps:
            say(f"study {study_id}: {e.name}: {e.what}")
            sid = sstore.create_sweep(conn, ["iolab", "study"], [*e.bench_args, *mpi_args],
                                      e.grid, e.reps, study_id, e.name)
            try:
                if run_sweep(conn, sid, args.db, None if args.quiet else sys.stderr,
                             verb="study", verbose=args.verbose) != "done":
                    status = "failed"
            except UsageError as exc:  # this machine refused the experiment: say so, go on
                result["skipped"].append([e.name, str(exc)])
                status = "failed"
        reps, size, runs = _MPI_SIZE[args.size]
        say(f"study {study_id}: MPI ping-pong, 2 ranks")
        mpi_runs, why = mpi_mod.measure(reps, size, runs, args.mpi)
        result["mpi"] = mpi_runs
        if why:
            result["mpi_skipped"] = why
            result["skipped"].append(["MPI latency and bandwidth", why])
    except KeyboardInterrupt:
        store.update_study(conn, study_id, "interrupted", result)
        print(f"iolab study: study {study_id}: interrupted; what finished is stored",
              file=sys.stderr)
        return 130
    store.update_study(conn, study_id, status, result)
    if args.format == "json":
        print(_study_json(conn, study_id))
    else:
        print(f"study {study_id}: {status}; see it with: iolab report study {study_id}"
              + (f" --db {args.db}" if args.db else ""))
    if out is not None:
        # the page's plots (numpy, matplotlib) only with -o: not at every study's start-up
        from iolab.study.report import study_page

        write_page(study_page(conn, study_id), Path(out), quiet=args.quiet, verb="study")
    return 0 if status == "done" else 1


def _study_json(conn: Any, study_id: int) -> str:
    st = get_study(conn, study_id) or {}
    sweeps = [{"id": sw["id"], "name": sw["name"], "status": sw["status"]}
              for sw in sstore.list_sweeps(conn, study_id)]
    return json.dumps({"schema_version": 1, "kind": "study", "id": study_id,
                       **{k: st.get(k) for k in ("status", "size", "host", "command")},
                       "created_at": fmt_time(st.get("created_at")),
                       "result": st.get("result"), "sweeps": sweeps}, indent=2)


def _list(db: str | None, as_json: bool) -> int:
    conn = connect(db, read_only=True)  # only reads: works on a read-only file system
    if as_json:
        rows = [{"id": r["id"], "created_at": fmt_time(r["created_at"]), "size": r["size"],
                 "status": r["status"], "host": r["host"]} for r in conn.execute(
                     "SELECT id, created_at, size, status, host FROM studies ORDER BY id")]
        print(json.dumps({"schema_version": 1, "kind": "studies", "studies": rows}, indent=2))
        return 0
    print(f"{'id':>4}  {'created':25}  {'size':8}  {'status':11}  host")
    for r in conn.execute("SELECT id, created_at, size, status, host FROM studies ORDER BY id"):
        print(f"{r['id']:>4}  {fmt_time(r['created_at']):25}  {r['size']:8}  "
              f"{r['status']:11}  {r['host']}")
    return 0
