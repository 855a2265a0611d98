"""``iolab bench``: run the iolab-bench engine under mpirun or srun, store, summarise.

Engine options come from the engine's own table (:mod:`iolab.bench.options`), read only when
this verb is used, so other verbs never start the engine. With no engine option the bundled
default job runs (:mod:`iolab.bench.jobs`). Every run is stored in the results database
before anything is printed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iolab import backends, cli_common, launch, paths
from iolab.bench import jobs, options, striping
from iolab.bench.engine import EngineOutcome, ProgressView, run_engine
from iolab.bench.parser import add_arguments, bench_parser  # the verb's options
from iolab.bench.subrun import engine_refusal
from iolab.errors import EXIT_USAGE, UsageError, verb_line
from iolab.runs.engine_doc import from_json

# The results database (sqlite3) and its renderer are imported by the functions that run
# and store a benchmark: `iolab bench --help` and --dry-run need neither (+60 ms of CPU).

__all__ = ["add_arguments", "bench_parser", "run"]

EXIT_FAILED_RUN = 1
EXIT_INTERRUPTED = 130


@dataclass
class CaseResult:
    case: jobs.Case
    run_id: int
    status: str


def _launch_spec(args: argparse.Namespace) -> launch.LaunchSpec:
    launcher = launch.resolve_launcher(launch.LaunchSpec(np=1, launcher=args.launcher))
    np = args.np if args.np is not None else (
        args.nodes * args.ppn if args.nodes and args.ppn
        else launch.default_np(launcher, ppn=args.ppn))
    return launch.LaunchSpec(np=np, nodes=args.nodes, ppn=args.ppn, launcher=args.launcher,
                             mpi=args.mpi, extra=launch.parse_launcher_args(args.launcher_args),
                             cpu_bind=args.cpu_bind, cpus_per_rank=args.cpus_per_rank,
                             core_spec=args.core_spec, membind=args.membind,
                             cpu_freq=cpu_freqs(args.cpu_freq)[0])


def cpu_freqs(text: str | None) -> list[str | None]:
    """``--cpu-freq low,high,2400000``: the frequencies to sweep, one run each."""
    if text is None:
        return [None]
    freqs = [f.strip() for f in text.split(",")]
    if not all(freqs):
        raise UsageError(f"--cpu-freq {text!r}: an empty value in the list; write e.g. "
                         "--cpu-freq 1200000,2400000 or --cpu-freq low,high")
    return list(freqs)


def _sweep(args: argparse.Namespace, spec: launch.LaunchSpec, cases: list[jobs.Case]
           ) -> list[tuple[launch.LaunchSpec, jobs.Case]]:
    """Each case once per --cpu-freq value (labelled with it when there are several)."""
    freqs = cpu_freqs(args.cpu_freq)
    runs = []
    for case in cases:
        for freq in freqs:
            label = case.label
            if len(freqs) > 1:
                label = f"{label + ' ' if label else ''}cpu-freq={freq}"
            runs.append((replace(spec, cpu_freq=freq),
                         jobs.Case(label, case.engine_args, case.scratch_name)))
    return runs


def _cases(args: argparse.Namespace) -> tuple[list[jobs.Case], bool]:
    """The cases to run, and whether they need a scratch directory (no --path given)."""
    values = options.set_options(args)
    # each MPI library's build has its own backends (Debian has no PnetCDF for MPICH)
    table = args.engine_table if args.mpi != "mpich" else \
        options.load_table(paths.engine_for_mpi(args.mpi))
    options.check_api(values, table)
    if not values:
        return list(jobs.DEFAULT_JOB), True
    return [jobs.user_case(args.label, options.engine_argv(values))], "path" not in values


def run(args: argparse.Namespace) -> int:
    from iolab.results import db  # deferred: see the imports

    spec = _launch_spec(args)
    if args.engine_error:
        # An Open MPI engine cannot even list its options without mpirun's helpers on PATH:
        # name the missing mpirun rather than the engine's abort message.
        launch.prepare(spec, ["iolab-bench"])
        raise UsageError(args.engine_error)
    options.check_hints_file(options.set_options(args))
    _check_test_files(args, spec)  # before any note: a bad path is the one line
    layout = _striping(args, spec)
    cases, needs_scratch = _cases(args)
    if layout is not None:
        cases = _with_striping_hints(args, cases, layout)
    engine = paths.engine_for_mpi(args.mpi)
    fixed = ("--quiet", "--progress")  # JSON on stdout, progress lines on stderr
    runs = _sweep(args, spec, cases)
    if args.dry_run:
        _print_dry_run(spec, runs, engine, fixed, layout, needs_scratch)
        return 0
    launch.prepare(spec, [str(engine)])  # no mpirun / srun: one line, before any scratch
    for engine_args in dict.fromkeys(tuple(c.engine_args) for _, c in runs):
        engine_refusal(engine, engine_args)  # -t 3x: one line, no database made
    where = db.db_path(args.db)
    new_db, new_folder = not where.exists(), not where.parent.exists()
    conn = db.connect(args.db)
    scratch: jobs.Scratch | None = None
    stored: list[dict[str, Any]] = []
    try:  # made inside: a Ctrl-C just after it still reaches the removal below
        scratch = jobs.Scratch() if needs_scratch else None
        for run_spec, case in runs:
            if scratch is not None:
                case = jobs.with_path(case, scratch.path_for(case))
            record = None
            if layout is not None:
                files, directory = _striping_targets(
                    spec, case.engine_args, scratch.dir if scratch is not None else None)
                record = striping.apply(layout, files, directory)
            result = _run_case(args, run_spec, engine, case, fixed, conn, record)
            row = db.get_run(conn, result.run_id)
            if row is not None:
                stored.append(row)
            if result.status == "interrupted":
                break
    except UsageError:  # the engine refused the first case as bad input: nothing created
        if new_db and not stored:
            conn.close()
            db.remove_unused(where, new_folder)
        raise
    finally:
        if scratch is not None and not _keeps(args):
            scratch.remove()
        elif scratch is not None:
            print(f"iolab bench: test files kept (-k) in {scratch.dir}", file=sys.stderr)
        conn.close()
    _print_summary(args, stored, _heading(stored) if needs_scratch and not
                   options.set_options(args) else None)
    statuses = {r["status"] for r in stored}
    if "interrupted" in statuses:
        return EXIT_INTERRUPTED
    return EXIT_FAILED_RUN if "failed" in statuses else 0


_SCRATCH = "IOLAB_SCRATCH_DIR"  # stands for the private folder in the dry run's lines


def _print_dry_run(spec: launch.LaunchSpec, runs: list[tuple[launch.LaunchSpec, jobs.Case]],
                   engine: Path, fixed: Sequence[str], layout: striping.Striping | None,
                   needs_scratch: bool) -> None:
    """The lines the real run executes, pastable as a script: without --path, the same
    private folder as the real run (.iolab-bench-* in the current folder, made, used for
    every case, removed at the end)."""
    if needs_scratch:
        print('scratch=$(mktemp -d ./.iolab-bench-XXXXXXXX) || exit 2')
    for run_spec, case in runs:
        path = ("--path", f"{_SCRATCH}/{case.scratch_name}") if needs_scratch else ()
        cmd = launch.prepare(run_spec, [str(engine), *case.engine_args, *path, *fixed])
        if layout is not None:
            targets = _striping_targets(spec, [*case.engine_args, *path],
                                        Path(_SCRATCH) if needs_scratch else None)[0]
            for target in targets:
                print(_in_scratch(shlex.join(striping.setstripe_command(target, layout))))
        print(_in_scratch(_pastable(cmd)))
    if needs_scratch:
        print('rm -rf "$scratch"')


def _in_scratch(line: str) -> str:
    return line.replace(_SCRATCH, '"$scratch"')


def _striping(args: argparse.Namespace, spec: launch.LaunchSpec) -> striping.Striping | None:
    """--stripe-count/--stripe-size: checked before anything runs or is stored (Lustre and
    lfs here, a size in 64 KiB units, test files it can stripe)."""
    layout = striping.from_options(args.stripe_count, args.stripe_size)
    if layout is None:
        return None
    path = options.set_options(args).get("path")
    striping.check_lustre(Path(path).parent if path else Path.cwd())
    if path:  # refuses layouts it cannot stripe file by file, before anything runs
        _striping_targets(spec, options.engine_argv(options.set_options(args)))
    return layout


def _striping_targets(spec: launch.LaunchSpec, engine_args: Sequence[str],
                      scratch_dir: Path | None = None) -> tuple[list[str], str | None]:
    """([iolab's own test directory], it) -- every file made in it inherits the layout -- or
    (the test files of the engine's --path, None) to create striped."""
    if scratch_dir is not None:
        return [str(scratch_dir)], str(scratch_dir)
    args = list(engine_args)

    def value(name: str) -> str | None:
        return args[args.index(name) + 1] if name in args[:-1] else None

    return striping.targets(str(value("--path")), value("--layout"), spec.np,
                            value("--group-files"), "--unique-dir" in args), None


def _with_striping_hints(args: argparse.Namespace, cases: list[jobs.Case],
                         layout: striping.Striping) -> list[jobs.Case]:
    """MPI-IO backends also get ROMIO's striping hints (for files ROMIO creates)."""
    if options.set_options(args).get("api") not in backends.OVER_MPIIO:
        return cases
    hints = [w for h in layout.hints() for w in ("--hint", h)]
    return [jobs.Case(c.label, (*c.engine_args, *hints), c.scratch_name) for c in cases]


def _check_test_files(args: argparse.Namespace, spec: launch.LaunchSpec) -> None:
    """The engine writes and then removes its test file(s) (``-o/--path``, and per rank
    PATH.N): never the results database, a Darshan log or a profile; a writable place.
    Checked before anything runs, so a bad path is exit 2 with nothing stored."""
    from iolab.results import db  # deferred: see the imports

    path = options.set_options(args).get("path")
    if not path:
        return
    inputs = [str(args.db or db.default_db_path())]
    inputs += [str(v) for k, v in options.set_options(args).items() if k == "hints-file"]
    _check_test_folder(path)
    if options.set_options(args).get("md-layout") == "mdtest":
        if Path(path).exists() and not Path(path).is_dir():  # mdtest's -d: a folder
            raise UsageError(f"-o/--path {path}: --md-layout mdtest makes its test-dir.N-0 "
                             "in this folder, and it is a file; give a folder")
        return
    cli_common.check_output_file(path, "-o/--path", inputs, make_folder=False)
    for rank in range(min(spec.np, 4096)):
        for name in (f"{path}.{rank}", f"{path}.a{rank}"):
            if Path(name).exists():
                cli_common.check_output_file(name, "-o/--path (per-rank file)", inputs)


def _check_test_folder(path: str) -> None:
    """The test files' folder exists: iolab makes none for them (the engine removes its
    files, an empty folder would stay; ``--path /scratch/$USER/md`` with USER unset would
    make /scratch)."""
    folder = Path(path).parent
    if folder.is_dir():
        return
    what = "is not a folder" if folder.exists() else "does not exist"
    unset = " (the path has an empty part '//': is a variable such as $USER unset?)" \
        if "//" in path else ""
    raise UsageError(f"-o/--path {path}: {folder} {what}{unset}; iolab makes no folder for "
                     "test files: create it first, or give a path in an existing folder")


def _pastable(cmd: launch.Launch) -> str:
    """The launch as a shell line that runs as printed: with the environment iolab sets."""
    added = [f"{k}={v}" for k, v in cmd.env.items() if os.environ.get(k) != v]
    return shlex.join(["env", *added, *cmd.argv] if added else cmd.argv)


def _keeps(args: argparse.Namespace) -> bool:
    return bool(options.set_options(args).get("keep"))


def _run_case(args: argparse.Namespace, spec: launch.LaunchSpec, engine: Path,
              case: jobs.Case, fixed: Sequence[str], conn: Any,
              striped: dict[str, Any] | None = None) -> CaseResult:
    from iolab.results import db  # deferred: see the imports

    cmd = launch.prepare(spec, [str(engine), *case.engine_args, *fixed])
    title = case.label or "iolab bench"
    view = ProgressView(title, quiet_s=float("inf") if args.quiet else 5.0)
    echo = (lambda line: print(line, file=sys.stderr)) if args.verbose else None
    try:
        outcome = run_engine(cmd, view.update, echo)
    finally:
        view.close()
    if outcome.exit_code == EXIT_USAGE and not outcome.interrupted and outcome.doc is None:
        raise UsageError(outcome.engine_message() or "the engine rejected its options")
    if striped is not None and outcome.doc is not None:  # what lfs getstripe saw
        outcome.doc.setdefault("environment", {})["striping"] = striped
    status, error = _status(outcome, cmd.launcher)
    mismatch = None
    if outcome.documents > 1 and not outcome.interrupted:
        mismatch = f"{outcome.documents} separate one-rank jobs ran, not one {spec.np}-rank " \
                   f"job{_launch_hint(cmd)}"
    elif status == "ok":
        mismatch = _launch_mismatch(outcome.doc, spec, cmd)
    if mismatch:
        status, error = "failed", mismatch
        print(f"iolab bench: {mismatch}", file=sys.stderr)
    run_id = db.store_run(conn, db.NewRun(
        command=["iolab", "bench", *args.bench_argv], status=status, engine_doc=outcome.doc,
        exit_code=outcome.exit_code, error=error, label=case.label,
        launch_command=cmd.argv, launcher=cmd.launcher, wall_time_s=outcome.wall_time_s))
    if not args.verbose and status == "ok":
        for line in outcome.messages:  # the engine's warnings, e.g. eviction not verified
            if line.startswith("iolab-bench"):
                print(verb_line("bench", line), file=sys.stderr)
    return CaseResult(case, run_id, status)


def _status(outcome: EngineOutcome, launcher: str) -> tuple[str, str | None]:
    """The stored status and, when not ok, one line saying why."""
    from iolab.results import db  # deferred: see the imports

    run = from_json(outcome.doc) if outcome.doc is not None else None
    if run is not None and run.status in db.RUN_STATUSES:
        status = str(run.status)
        if outcome.interrupted and status == "ok" and outcome.exit_code != 0:
            status = "interrupted"
        msg = run.error.message if run.error is not None else None
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


def _launch_hint(cmd: launch.Launch) -> str:
    if cmd.launcher == "srun":
        return (" (under srun the MPI library needs its PMI type: --launcher-args=--mpi=pmi2 "
                "for MPICH, pmix for Open MPI)")
    return " (is the launcher the one of the engine's MPI library? see --mpi)"


def _launch_mismatch(doc: dict[str, Any] | None, spec: launch.LaunchSpec,
                     cmd: launch.Launch) -> str | None:
    """Why a run the engine calls ok did not run as asked (ranks, nodes, ranks per node,
    phases), or None. A launcher that cannot reach the MPI library's PMI starts N separate
    one-rank jobs that each report success: a wrong result, stored as failed."""
    if doc is None:
        return None
    run = from_json(doc)
    ranks = run.environment.ranks
    if ranks != spec.np:
        return f"{ranks} rank(s) ran as one job, {spec.np} were asked for{_launch_hint(cmd)}"
    per_host = run.environment.ranks_per_host
    if spec.nodes and per_host and len(per_host) != spec.nodes:
        return f"the ranks ran on {len(per_host)} node(s), {spec.nodes} were asked for"
    if spec.ppn and per_host and any(n != spec.ppn for n in per_host.values()):
        counts = ", ".join(f"{h}: {n}" for h, n in sorted(per_host.items()))
        return f"ranks per node {counts}, {spec.ppn} were asked for"
    if not any(run.phases()):
        return "the engine ran no phase (no write or read was timed)"
    return None


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
    from iolab.results import db  # deferred: see the imports
    from iolab.results.render import render, summary_report

    report = summary_report(stored, str(args.db or db.default_db_path()), heading,
                            db_option=args.db)
    if args.format == "json":
        report.raw["runs"] = [{"id": r["id"], "status": r["status"], "label": r["label"],
                               "engine": r.get("engine_json")} for r in stored]
    sys.stdout.write(render(report, args.format))
