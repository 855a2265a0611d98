"""``iolab sweep``: run ``iolab bench`` over a grid of one or two parameters.

    iolab sweep --param np=1,2,4 --param posix.mode=buffered,direct --reps 3 -- -t 1m -b 16m
    iolab sweep --resume 7          # run the points an interrupted sweep did not store
    iolab report sweep 7 -o sweep.html
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from iolab import cli_common
from iolab.errors import UsageError
from iolab.results.db import connect
from iolab.sweep import grid as g
from iolab.sweep import store
from iolab.sweep.runner import check_points, run_sweep
from iolab.units import fmt_time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.usage = ("iolab sweep --param NAME=V1,V2,... [--param NAME=...] [--reps N] "
               "[-- BENCH OPTIONS] | iolab sweep --resume ID")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=V1,V2",
                   help="an iolab bench option and its values (np, transfer, block, "
                        "posix.mode, threads, layout, api, collective=on,off...; 'ranks' "
                        "and 'mode' are short for np and posix.mode); one or two")
    p.add_argument("--reps", type=int, default=3, metavar="N",
                   help="engine repetitions of each point: the range shown around each "
                        "median (default: %(default)s)")
    p.add_argument("--resume", type=int, metavar="ID",
                   help="continue sweep ID: run only the points not stored as ok")
    p.add_argument("--list", action="store_true",
                   help="list the stored sweeps (a study's experiments too) and exit")
    p.add_argument("bench_args", nargs=argparse.REMAINDER,
                   help="after '--': iolab bench options fixed for every point")
    cli_common.add_db(p)
    cli_common.add_format(p, csv=False, json_help="print the sweep (grid, each point with its "
                          "status and stored run) as JSON; with --list, the list")
    cli_common.add_quiet_verbose(p, quiet_help="no progress lines",
                                 verbose_help="each point's iolab bench command line too")
    cli_common.add_examples(p, [
        ('iolab sweep --param np=1,2,4 -- -t 1m -b 16m',
         'bandwidth against ranks, 3 repetitions a point, each point stored as it ends'),
        ('iolab sweep -p transfer=64k,1m -p posix.mode=buffered,direct --reps 5 -- --np 2',
         'a two-parameter grid'),
        ('iolab sweep --resume 7', 'run the points sweep 7 did not store'),
        ('iolab sweep --list', "the stored sweeps (a study's too)"),
    ])
    cli_common.one_line_errors(p, "iolab sweep")


def run(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args.db, args.format == "json")
    bench_args = list(args.bench_args)
    if bench_args and bench_args[0] == "--":
        bench_args = bench_args[1:]
    if args.resume is not None:
        if args.param or bench_args:
            raise UsageError("--resume ID runs the stored grid: give no --param or bench "
                             "options with it")
        conn = connect(args.db, must_exist=True)
        sw = store.get_sweep(conn, args.resume)
        if sw is None:
            raise UsageError(f"--resume {args.resume}: no such sweep (see 'iolab sweep "
                             "--list')")
        sweep_id = args.resume
    else:
        if not args.param:
            raise UsageError("no --param given; e.g. iolab sweep --param np=1,2,4 -- -t 1m")
        if len(args.param) > 2:
            raise UsageError("a sweep varies one or two parameters (got "
                             f"{len(args.param)}); run several sweeps")
        if args.reps < 1:
            raise UsageError(f"--reps {args.reps}: must be at least 1")
        grid = [g.parse_param(s) for s in args.param]
        if len(grid) == 2 and grid[0][0] == grid[1][0]:
            raise UsageError(f"--param {grid[0][0]} is given twice")
        g.check_bench_args(bench_args, grid)
        check_points(bench_args, g.points(grid))
        conn = connect(args.db)
        sweep_id = store.create_sweep(conn, ["iolab", "sweep", *sys.argv[2:]], bench_args, grid,
                                      args.reps)
        n = len(g.points(grid))
        if not args.quiet:
            print(f"iolab sweep: sweep {sweep_id}: {n} points x {args.reps} repetitions",
                  file=sys.stderr)
    try:
        status = run_sweep(conn, sweep_id, args.db, None if args.quiet else sys.stderr,
                           verbose=args.verbose)
    except KeyboardInterrupt:
        return 130
    if args.format == "json":
        print(_sweep_json(conn, sweep_id))
    else:
        print(f"sweep {sweep_id}: {status}; see it with: iolab report sweep {sweep_id}"
              + (f" --db {args.db}" if args.db else ""))
    return 0 if status == "done" else 1


def _sweep_json(conn: Any, sweep_id: int) -> str:
    sw = store.get_sweep(conn, sweep_id) or {}
    points = [{"number": p["number"], "params": p["params"], "status": p["status"],
               "run_id": p["run_id"]} for p in store.point_rows(conn, sweep_id)]
    return json.dumps({"schema_version": 1, "kind": "sweep", "id": sweep_id,
                       "status": sw.get("status"), "created_at": fmt_time(sw.get("created_at")),
                       "command": sw.get("command"), "bench_args": sw.get("bench_args"),
                       "grid": sw.get("grid"), "repetitions": sw.get("repetitions"),
                       "points": points},
                      indent=2)


def _list(db: str | None, as_json: bool) -> int:
    conn = connect(db, read_only=True)  # only reads: works on a read-only file system
    if as_json:
        rows = [{**sw, "created_at": fmt_time(sw["created_at"]),
                 "updated_at": fmt_time(sw["updated_at"]),
                 **{k: json.loads(sw[k]) for k in ("command", "bench_args", "grid")}}
                for sw in store.list_sweeps(conn)]
        print(json.dumps({"schema_version": 1, "kind": "sweeps", "sweeps": rows}, indent=2))
        return 0
    print(f"{'id':>4}  {'created':25}  {'status':11}  {'points':>7}  grid")
    for sw in store.list_sweeps(conn):
        grid = json.loads(sw["grid"])
        total = len(g.points([(n, v) for n, v in grid]))
        where = f"  (study {sw['study_id']}: {sw['name']})" if sw["study_id"] else ""
        print(f"{sw['id']:>4}  {fmt_time(sw['created_at']):25}  {sw['status']:11}  "
              f"{sw['done']:>3}/{total:<3}  "
              + " x ".join(f"{n}={','.join(v)}" for n, v in grid) + where)
    return 0
