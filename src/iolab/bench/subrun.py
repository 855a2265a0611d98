"""``iolab bench`` run by another verb (tune, sweep, study): a subprocess with ``--json``, so
every run is stored and checked by the bench verb itself, and its one result read back.

The other verbs never reach into the bench verb's internals: the command line is the
contract, and ``docs/bench.md``'s report schema is what comes back.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab import backends, launch, paths
from iolab.bench import options
from iolab.bench.engine import run_engine
from iolab.bench.parser import bench_parser
from iolab.errors import EXIT_USAGE, UsageError
from iolab.runs.engine_doc import from_json


@dataclass
class BenchRun:
    status: str  # "ok" | "failed" | "interrupted" | "refused" (bad input: exit 2)
    run_id: int | None
    doc: dict[str, Any] | None  # the engine's document
    error: str | None  # one line when not ok (for "refused": the bench verb's message)
    wall_time_s: float


def bench_command(args: Sequence[str], label: str, db: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "iolab", "bench", *args, "--json", "--label", label]
    return cmd + (["--db", db] if db else [])


def check_args(args: Sequence[str]) -> Any:
    """Bad ``iolab bench`` options as one UsageError line, before anything runs or is stored:
    the bench verb's own parser (unknown options, choices, the APIs built), then the
    engine's own parser on the values (sizes, counts: ``-t 3x``). ``iolab-bench OPTIONS
    --version`` parses every option before it prints, without MPI (driver.c), so the values
    are judged by the code that will run them, in milliseconds. What needs the ranks (a block
    that is not a multiple of the transfer) is still the run's to refuse."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            ns = bench_parser().parse_args(list(args))
    except SystemExit:
        raise UsageError(_last_line(said.getvalue(), "iolab bench refused the options")
                         .removeprefix("iolab bench: ")) from None
    if getattr(ns, "engine_error", None):
        raise UsageError(ns.engine_error)
    values = options.set_options(ns)
    options.check_api(values, ns.engine_table)
    options.check_hints_file(values)
    engine_refusal(paths.engine_for_mpi(ns.mpi), options.engine_argv(values))
    return ns


def engine_refusal(engine: Any, engine_argv: Sequence[str]) -> None:
    """UsageError with the engine's own line when its parser refuses these options:
    ``iolab-bench OPTIONS --version`` parses every option before it prints, without MPI,
    in milliseconds, so a bad value is refused before anything is stored or run."""
    done = subprocess.run([str(engine), *engine_argv, "--version"], capture_output=True,
                          text=True, check=False, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise UsageError(_last_line(done.stderr, "iolab-bench refused the options")
                         .removeprefix("iolab-bench: "))


def mpiio_implementation(args: Sequence[str]) -> str | None:
    """The MPI-IO implementation ("romio", "ompio") the runs of these ``iolab bench``
    options get, learnt the way ``iolab hints`` learns it: one rank's 4 KiB MPI-IO write
    (the file removed) with their MPI library, launcher and launcher arguments, in their
    test directory, since Open MPI may pick another implementation by file system. None
    when the options do no MPI-IO or the probe cannot tell."""
    ns = check_args(args)
    values = options.set_options(ns)
    if values.get("api", "posix") not in backends.OVER_MPIIO:
        return None
    where = Path(str(values["path"])).parent if values.get("path") else Path.cwd()
    target = where.resolve() / f".iolab-probe-{os.getpid()}"
    spec = launch.LaunchSpec(np=1, launcher=ns.launcher, mpi=ns.mpi,
                             extra=launch.parse_launcher_args(ns.launcher_args))
    cmd = launch.prepare(spec, [str(paths.engine_for_mpi(ns.mpi)), "--api", "mpiio",
                                "--layout", "segmented", "--transfer", "4K", "--block", "4K",
                                "--write", "--path", str(target), "--quiet"])
    impl = from_json(run_engine(cmd, lambda _p: None).doc).environment.mpiio_implementation
    return impl if impl in ("romio", "ompio") else None


def _run_to_end(cmd: list[str], env: dict[str, str],
                limit: float | None) -> subprocess.CompletedProcess[str] | None:
    """The command in its own process group, so that the launcher and every rank stop with
    it. Ctrl-C here is passed on as SIGINT and the bench verb is given the time to store
    the run as interrupted and remove its test folder (a SIGKILL at once left an empty
    ``.iolab-bench-*`` behind); at the time limit, SIGTERM. SIGKILL only if it does not end
    within 10 s. None when the limit was reached."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit)
    except (subprocess.TimeoutExpired, KeyboardInterrupt) as exc:
        interrupted = isinstance(exc, KeyboardInterrupt)
        _stop(proc, signal.SIGINT if interrupted else signal.SIGTERM)
        if interrupted:
            raise
        return None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _stop(proc: subprocess.Popen[str], sig: int) -> None:
    """Signal the group and wait for it to clean up; a second Ctrl-C, or 10 s, SIGKILLs."""
    try:
        os.killpg(proc.pid, sig)
        proc.communicate(timeout=10)
    except ProcessLookupError:
        proc.communicate()
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()


def _stored_error(db: str | None, run_id: Any) -> str | None:
    """The error the bench verb stored with the run (a check of what ran, e.g. ranks per
    node), which its stderr may bury under later notes."""
    if not isinstance(run_id, int):
        return None
    from iolab.results import db as results  # deferred: `iolab bench --help` needs no sqlite3

    try:
        conn = results.connect(db, must_exist=True)
        try:
            row = conn.execute("SELECT error FROM runs WHERE id = ?", (run_id,)).fetchone()
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - only a better message is lost
        return None
    return str(row[0]) if row and row[0] else None


def _last_line(text: str, default: str) -> str:
    return (text.strip().splitlines() or [default])[-1].removeprefix("iolab: ")


def run_bench(args: Sequence[str], label: str, db: str | None = None,
              env: Mapping[str, str] | None = None,
              runner: Callable[[list[str], dict[str, str]],
                               subprocess.CompletedProcess[str]] | None = None,
              time_limit_s: float | None = None) -> BenchRun:
    """Run ``iolab bench ARGS --json``; Ctrl-C in it (130) is a KeyboardInterrupt here.
    ``runner`` starts the command (default: here, as a subprocess; tune --sbatch: a batch
    job) and returns its exit code and output. ``time_limit_s`` (local runs): a run still
    going after that long is stopped, launcher and ranks with it, and reported failed (a
    hint combination can hang an MPI-IO run)."""
    cmd = bench_command(args, label, db)
    full_env = {**os.environ, **(env or {})}
    start = time.monotonic()
    if runner is not None:
        done = runner(cmd, full_env)
    else:
        limited = _run_to_end(cmd, full_env, time_limit_s)
        if limited is None:
            return BenchRun("failed", None, None, f"time limit of {time_limit_s:g} s reached "
                            "(the run was stopped)", time.monotonic() - start)
        done = limited
    wall = time.monotonic() - start
    if done.returncode == EXIT_USAGE:
        return BenchRun("refused", None, None,
                        _last_line(done.stderr, "iolab bench refused the workload"), wall)
    if done.returncode in (130, -signal.SIGINT):
        raise KeyboardInterrupt
    try:
        runs = json.loads(done.stdout).get("runs") or []
    except (ValueError, AttributeError):
        runs = []
    if not runs:
        return BenchRun("failed", None, None, _last_line(done.stderr, "no result"), wall)
    run = runs[0]
    doc = run.get("engine") or None
    status = str(run.get("status") or "failed")
    if status not in ("ok", "failed", "interrupted"):
        status = "failed"
    err = None
    if status != "ok":
        e = from_json(doc).error
        err = e.message if e is not None and e.message else \
            _stored_error(db, run.get("id")) or _last_line(done.stderr, "the run failed")
    return BenchRun(status, run.get("id"), doc, err, wall)
