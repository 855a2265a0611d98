"""Run a sweep's points: each one ``iolab bench --json`` as a subprocess (the bench verb
stores the run), then the point row that links it; a progress line per point."""

from __future__ import annotations

import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any, TextIO

from iolab.bench.subrun import check_args, run_bench
from iolab.errors import UsageError
from iolab.pages.fmt import human_seconds
from iolab.pages.prep_bench import MIB, op_name, ops_of, phase_bandwidths
from iolab.sweep import store
from iolab.sweep.grid import point_args, points


@dataclass
class PointOutcome:
    status: str  # ok | failed | interrupted
    run_id: int | None
    error: str | None
    doc: Mapping[str, Any] | None
    wall_time_s: float


def run_point(bench_args: Sequence[str], params: Mapping[str, str], repetitions: int,
              db: str | None, label: str, env: Mapping[str, str] | None = None) -> PointOutcome:
    """One ``iolab bench`` run (iolab.bench.subrun); bad input (exit 2) is a UsageError,
    Ctrl-C a KeyboardInterrupt."""
    run = run_bench(point_argv(bench_args, params, repetitions), label, db, env)
    if run.status == "refused":
        raise UsageError(f"{_params_text(params)}: {run.error}")
    return PointOutcome(run.status, run.run_id, run.error, run.doc, run.wall_time_s)


def point_argv(bench_args: Sequence[str], params: Mapping[str, str],
               repetitions: int) -> list[str]:
    """The ``iolab bench`` options of one point."""
    return [*bench_args, *point_args(dict(params)), f"--reps={repetitions}", "--quiet"]


def check_points(bench_args: Sequence[str], grid_points: Sequence[Mapping[str, str]]) -> None:
    """Every point's options and values judged by iolab bench's own parsers (a bad value
    of the second point must not wait for the first point's run), then ``iolab bench
    --dry-run`` of the first and last point (the launcher, the test path): bad input is
    one line (UsageError) before anything is stored or run."""
    for params in grid_points:
        try:
            check_args([*bench_args, *point_args(dict(params))])
        except UsageError as exc:
            raise UsageError(f"{_params_text(params)}: {exc}") from None
    for params in {0: grid_points[0], 1: grid_points[-1]}.values():
        cmd = [sys.executable, "-m", "iolab", "bench", *bench_args, *point_args(dict(params)),
               "--dry-run"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["iolab bench refused it"])[-1]
            raise UsageError(f"{_params_text(params)}: {last.removeprefix('iolab: ')}")


def _params_text(params: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def _result_text(doc: Mapping[str, Any] | None) -> str:
    parts = []
    for op, p in ops_of(doc):
        bws = phase_bandwidths(doc, op, p)
        if bws:
            parts.append(f"{op_name(op, p)} {median(bws) / MIB:,.1f} MiB/s")
    return ", ".join(parts) or "no bandwidth"


def run_sweep(conn: sqlite3.Connection, sweep_id: int, db: str | None,
              out: TextIO | None = sys.stderr, env: Mapping[str, str] | None = None,
              verb: str = "sweep", verbose: bool = False) -> str:
    """Run the points of ``sweep_id`` not yet stored as ok; return the sweep's status.
    Progress lines go to ``out`` as the running verb's (``iolab study:`` in a study);
    ``verbose``: each point's ``iolab bench`` command line first."""
    sw = store.get_sweep(conn, sweep_id)
    assert sw is not None
    grid_points = points(sw["grid"])
    done = {r["number"] for r in store.point_rows(conn, sweep_id) if r["status"] == "ok"}
    todo = [i for i in range(len(grid_points)) if i not in done]
    total = len(grid_points)
    store.set_status(conn, sweep_id, "running")
    if out and done:
        print(f"iolab {verb}: sweep {sweep_id}: {len(done)} of {total} points already stored, "
              f"{len(todo)} to run", file=out)
    durations: list[float] = []
    failed = 0
    for k, i in enumerate(todo):
        params = grid_points[i]
        if out and verbose:
            print(f"iolab {verb}: sweep {sweep_id}: point {i + 1}/{total}: iolab bench "
                  + shlex.join(point_argv(sw["bench_args"], params, sw["repetitions"])),
                  file=out, flush=True)
        try:
            res = run_point(sw["bench_args"], params, sw["repetitions"], db,
                            f"sweep:{sweep_id}:{i}", env)
        except KeyboardInterrupt:
            store.set_status(conn, sweep_id, "interrupted")
            if out:
                print(f"iolab {verb}: sweep {sweep_id}: interrupted; "
                      f"{total - len(todo) + k} of {total} points stored; continue with: "
                      f"iolab sweep --resume {sweep_id}"
                      + (f" --db {shlex.quote(db)}" if db else ""), file=out)
            raise
        except UsageError:
            store.set_status(conn, sweep_id, "failed")
            raise
        store.add_point(conn, sweep_id, i, params, res.status, res.run_id, res.error,
                        res.wall_time_s)
        failed += res.status != "ok"
        durations.append(res.wall_time_s)
        if out:
            left = median(durations) * (len(todo) - k - 1)
            what = _result_text(res.doc) if res.status == "ok" else f"{res.status}: {res.error}"
            print(f"iolab {verb}: sweep {sweep_id}: point {i + 1}/{total} "
                  f"{_params_text(params)}: {what} (run {res.run_id}, "
                  f"{human_seconds(res.wall_time_s)}; about "
                  f"{human_seconds(left)} left)", file=out, flush=True)
    status = "done" if not failed else "failed"
    store.set_status(conn, sweep_id, status)
    return status
