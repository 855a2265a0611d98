"""``iolab bench``: run the iolab-bench engine under mpirun or srun, store, summarise.

Engine options come from the engine's own table (:mod:`iolab.bench.options`), read only when
this verb is used, so other verbs never start the engine. With no engine option the bundled
default job runs (:mod:`iolab.bench.jobs`). Every run is stored in the results database
before anything is printed.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from iolab import launch, paths
from iolab.bench import jobs, options
from iolab.bench.engine import EngineOutcome, ProgressView, run_engine
from iolab.errors import EXIT_USAGE, UsageError
from iolab.results import db
from iolab.results.cli import add_db_argument, add_format_arguments
from iolab.results.render import render, summary_report

HELP = ("benchmark the file system with the iolab-bench engine (IOR's flags work too); "
        "with no options, the default job")

EXIT_FAILED_RUN = 1
EXIT_INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "iolab bench [options]   (no engine option: the default job)"
    grp = parser.add_argument_group("launch")
    grp.add_argument("--launcher", choices=launch.LAUNCHERS, default="auto",
                     help="auto (default): srun inside a Slurm allocation, else mpirun")
    grp.add_argument("--np", type=int, metavar="N",
                     help="ranks (default: $SLURM_NTASKS under srun, else 2)")
    grp.add_argument("--nodes", type=int, metavar="N", help="nodes (srun -N)")
    grp.add_argument("--ppn", type=int, metavar="N", help="ranks per node")
    grp.add_argument("--mpi", choices=("default", "mpich"), default="default",
                     help="MPI library: the default build, or mpich (iolab-bench-mpich under "
                          "mpirun.mpich: ROMIO with verifiable hints, like Cray MPICH)")
    grp.add_argument("--launcher-args", metavar="ARGS",
                     help="extra launcher arguments, split like a shell would; write "
                          "--launcher-args=\"--mca io romio321\" (with '=') when they "
                          "start with '-'")
    out = parser.add_argument_group("output")
    add_db_argument(out)
    add_format_arguments(out)
    out.add_argument("--label", help="a label stored with the run (filter with "
                                     "'iolab results --label')")
    out.add_argument("--dry-run", action="store_true",
                     help="print the launch command(s) and exit; runs nothing")
    out.add_argument("--verbose", action="store_true",
                     help="pass the engine's and launcher's messages through as they come")
    _read_engine_options_lazily(parser)
    _one_line_errors(parser)


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """Bad input is one line (argparse's default prints the long usage first)."""

    def error(message: str) -> NoReturn:
        sys.stderr.write(f"iolab bench: {message} (see 'iolab bench --help')\n")
        raise SystemExit(EXIT_USAGE)

    setattr(parser, "error", error)  # noqa: B010  (an instance override, not a new attribute)


def _read_engine_options_lazily(parser: argparse.ArgumentParser) -> None:
    """Add the engine's options the first time this parser parses.

    ``iolab`` builds every verb's parser on each call; running the engine there would slow
    every verb and break them all when the engine is missing. The subparser's
    ``parse_known_args`` runs only when ``bench`` is the verb (``--help`` included).
    """
    original = parser.parse_known_args
    loaded: list[bool] = []

    def parse_known_args(args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        if not loaded:
            loaded.append(True)
            _load_engine_options(parser)
        ns, rest = original(args, namespace)
        ns.bench_argv = list(args or [])
        if rest and getattr(ns, "engine_error", None):
            rest = []  # the real problem (no engine) is reported by run()
        elif rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return ns, rest

    setattr(parser, "parse_known_args", parse_known_args)  # noqa: B010


def _table_engine() -> Path:
    try:
        return paths.engine_binary("default")
    except UsageError:
        return paths.engine_binary("mpich")  # same source, same table


def _load_engine_options(parser: argparse.ArgumentParser) -> None:
    try:
        table = options.load_table(_table_engine())
    except UsageError as exc:
        parser.set_defaults(engine_error=str(exc), engine_table=[])
        parser.epilog = f"Engine options are not available: {exc}"
        return
    options.add_engine_options(parser, table)
    parser.set_defaults(engine_error=None, engine_table=table)


@dataclass
class CaseResult:
    case: jobs.Case
    run_id: int
    status: str


def _launch_spec(args: argparse.Namespace) -> launch.LaunchSpec:
    launcher = launch.resolve_launcher(launch.LaunchSpec(np=1, launcher=args.launcher))
    np = args.np if args.np is not None else (
        args.nodes * args.ppn if args.nodes and args.ppn else launch.default_np(launcher))
    return launch.LaunchSpec(np=np, nodes=args.nodes, ppn=args.ppn, launcher=args.launcher,
                             mpi=args.mpi, extra=launch.parse_launcher_args(args.launcher_args))


def _cases(args: argparse.Namespace) -> tuple[list[jobs.Case], bool]:
    """The cases to run, and whether they need a scratch directory (no --path given)."""
    values = options.set_options(args)
    # each MPI library's build has its own backends (Debian has no PnetCDF for MPICH)
    table = args.engine_table if args.mpi == "default" else \
        options.load_table(paths.engine_binary(args.mpi))
    options.check_api(values, table)
    if not values:
        return list(jobs.DEFAULT_JOB), True
    return [jobs.user_case(args.label, options.engine_argv(values))], "path" not in values


def run(args: argparse.Namespace) -> int:
    spec = _launch_spec(args)
    if args.engine_error:
        # An Open MPI engine cannot even list its options without mpirun's helpers on PATH:
        # name the missing mpirun rather than the engine's abort message.
        launch.prepare(spec, ["iolab-bench"])
        raise UsageError(args.engine_error)
    cases, needs_scratch = _cases(args)
    engine = paths.engine_binary(args.mpi)
    fixed = ("--quiet", "--progress")  # JSON on stdout, progress lines on stderr
    if args.dry_run:
        for case in cases:
            path = ("--path", f"./.iolab-bench-XXXX/{case.scratch_name}") if needs_scratch else ()
            cmd = launch.prepare(spec, [str(engine), *case.engine_args, *path, *fixed])
            print(shlex.join(cmd.argv))
        return 0
    launch.prepare(spec, [str(engine)])  # no mpirun / srun: one line, before any scratch
    conn = db.connect(args.db)
    scratch = jobs.Scratch() if needs_scratch else None
    stored: list[dict[str, Any]] = []
    try:
        for case in cases:
            if scratch is not None:
                case = jobs.with_path(case, scratch.path_for(case))
            result = _run_case(args, spec, engine, case, fixed, conn)
            row = db.get_run(conn, result.run_id)
            if row is not None:
                stored.append(row)
            if result.status == "interrupted":
                break
    finally:
        if scratch is not None and not _keeps(args):
            scratch.remove()
        conn.close()
    _print_summary(args, stored, _heading(stored) if needs_scratch and not
                   options.set_options(args) else None)
    statuses = {r["status"] for r in stored}
    if "interrupted" in statuses:
        return EXIT_INTERRUPTED
    return EXIT_FAILED_RUN if "failed" in statuses else 0


def _keeps(args: argparse.Namespace) -> bool:
    return bool(options.set_options(args).get("keep"))


def _run_case(args: argparse.Namespace, spec: launch.LaunchSpec, engine: Path,
              case: jobs.Case, fixed: Sequence[str], conn: Any) -> CaseResult:
    cmd = launch.prepare(spec, [str(engine), *case.engine_args, *fixed])
    title = case.label or "iolab bench"
    view = ProgressView(title)
    echo = (lambda line: print(line, file=sys.stderr)) if args.verbose else None
    try:
        outcome = run_engine(cmd, view.update, echo)
    finally:
        view.close()
    if outcome.exit_code == EXIT_USAGE and not outcome.interrupted and outcome.doc is None:
        raise UsageError(outcome.engine_message() or "the engine rejected its options")
    status, error = _status(outcome, cmd.launcher, spec.np)
    run_id = db.store_run(conn, db.NewRun(
        command=["iolab", "bench", *args.bench_argv], status=status, engine_doc=outcome.doc,
        exit_code=outcome.exit_code, error=error, label=case.label,
        launch_command=cmd.argv, launcher=cmd.launcher, wall_time_s=outcome.wall_time_s))
    if not args.verbose and status == "ok":
        for line in outcome.messages:  # the engine's warnings, e.g. eviction not verified
            if line.startswith("iolab-bench"):
                print(line, file=sys.stderr)
    return CaseResult(case, run_id, status)


def _status(outcome: EngineOutcome, launcher: str, np: int) -> tuple[str, str | None]:
    """The stored status and, when not ok, one line saying why."""
    doc = outcome.doc
    if doc is not None and doc.get("status") in db.RUN_STATUSES:
        status = str(doc["status"])
        ranks = (doc.get("environment") or {}).get("ranks")
        if status == "ok" and ranks != np:
            # e.g. an MPI library that does not speak the launcher's PMI: every rank starts
            # as its own one-rank job, and the first one's document is not the run asked for
            return "failed", (f"{launcher} started {np} ranks but the engine ran as a job of "
                              f"{ranks}: the launcher and the engine's MPI library do not "
                              "match (under srun, --mpi mpich needs srun --mpi=pmi2)")
        if outcome.interrupted and status == "ok" and outcome.exit_code != 0:
            status = "interrupted"
        err = doc.get("error")
        msg = err.get("message") if isinstance(err, dict) else None
        if status == "interrupted" and not msg:
            msg = "interrupted (Ctrl-C or a signal); the engine stopped and cleaned up"
        elif status != "ok" and not msg:
            msg = outcome.engine_message() or f"{launcher} exited with {outcome.exit_code}"
        return status, (None if status == "ok" else str(msg))
    if outcome.interrupted:
        return "interrupted", "interrupted before the engine printed its result"
    reason = outcome.engine_message() or "no message"
    return "failed", (f"{launcher} exited with {outcome.exit_code} and the engine printed no "
                      f"result: {reason}")


def _heading(stored: list[dict[str, Any]]) -> str | None:
    """The default job says what it measured: where, which file system, how."""
    if not stored:
        return None
    first = stored[0]
    return (f"Default job: the file system of {first.get('cwd')} ({first.get('fs_type') or '?'}), "
            f"{first.get('ranks') or '?'} ranks, POSIX file per process and shared file; "
            "writes end with fsync, reads follow eviction from the page cache.")


def _print_summary(args: argparse.Namespace, stored: list[dict[str, Any]],
                   heading: str | None = None) -> None:
    report = summary_report(stored, str(args.db or db.default_db_path()), heading)
    if args.format == "json":
        report.raw["runs"] = [{"id": r["id"], "status": r["status"], "label": r["label"],
                               "engine": r.get("engine_json")} for r in stored]
    sys.stdout.write(render(report, args.format))
