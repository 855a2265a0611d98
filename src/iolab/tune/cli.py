"""``iolab tune``: find the fastest hints, striping and I/O mode on this file system, proven.

    iolab tune --preset mpiio -- iolab bench -a mpiio --layout strided -t 64k -b 4m --np 4
    iolab tune --knob cb_nodes=1,2 --knob romio_cb_write -- mpirun -np 16 ./app args
    iolab tune --resume 3

After ``--`` comes the workload: an ``iolab bench`` command line (the engine's JSON gives
the bandwidth; ``iolab`` by any path, or ``python -m iolab``), or any command (scored by wall
time, or by ``--metric``). A tune without a workload is refused: a tuned setting holds for the
workload it was measured on, so that workload is the user's to name.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iolab import backends, cli_common
from iolab.bench.subrun import mpiio_implementation
from iolab.diagnose.proof import log_identity
from iolab.errors import UsageError
from iolab.launch import in_slurm_allocation, mpi_flavour, mpirun_program, parse_launcher_args
from iolab.results import db
from iolab.results import tunes as store
from iolab.results.tunes import tunes_json, tunes_table
from iolab.stats import fewest_to_judge
from iolab.tune import proof, workload
from iolab.tune.artifacts import winner_changes, write_artifacts
from iolab.tune.fromlog import from_model, judge, load_log
from iolab.tune.knobs import PRESET_NAMES, all_knobs, knob, parse_size
from iolab.tune.objective import BenchObjective, CommandObjective
from iolab.tune.policy import Policy
from iolab.tune.render import TrialPrinter, render_result
from iolab.tune.search import Tuner, drop_for_implementation
from iolab.tune.space import SearchSpace, build_space
from iolab.tune.workload import Workload

EXIT_FAILED = 1
EXIT_INTERRUPTED = 130

# What the refusal of a tune without a workload shows, per preset: a workload of that kind.
EXAMPLE_WORKLOADS = {
    "posix": "iolab bench -a posix --layout segmented -t 1m -b 16m --np 2 -w",
    "mpiio": "iolab bench -a mpiio --layout strided -t 64k -b 4m --np 4 -w",
    "hdf5": "iolab bench -a hdf5 --layout strided -t 64k -b 4m --np 4 -w",
    "pnetcdf": "iolab bench -a pnetcdf --layout strided -t 64k -b 4m --np 4 -w",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.usage = ("iolab tune [options] -- iolab bench BENCH-OPTIONS | -- COMMAND ...\n"
               "       iolab tune --resume ID | --list | --list-knobs")
    _add_space_and_search(p)
    _add_objective(p.add_argument_group("objective"))
    _add_output_and_listing(p)


def _add_space_and_search(p: argparse.ArgumentParser) -> None:
    space = p.add_argument_group("search space")
    space.add_argument("--preset", action="append", default=[], metavar="NAME",
                       choices=PRESET_NAMES,
                       help="knobs to explore: posix, mpiio (ROMIO hints, or OMPIO parameters "
                            "under Open MPI), hdf5, pnetcdf, lustre (repeatable)")
    space.add_argument("--knob", action="append", default=[], metavar="NAME[=V1,V2]",
                       help="a knob and the values to try (its own values when none given); "
                            "repeatable; see --list-knobs")
    space.add_argument("--space", type=Path, metavar="FILE",
                       help="TOML file with a [knobs] table: name = [values] or \"explore\"")
    search = p.add_argument_group("search and proof")
    search.add_argument("--trials", type=int, default=20, metavar="N",
                        help="search runs, the baseline and the repeats included (default 20)")
    search.add_argument("--repeats", type=int, default=3, metavar="N",
                        help="noisy runs: the best candidates are measured until each has N "
                             "samples and the winner is the best among them (median less one "
                             "standard error of the noise); up to a third of --trials is kept "
                             "for it (default 3; 1: none)")
    search.add_argument("--repeat-top", type=int, default=3, metavar="K",
                        help="how many of the best candidates are repeated (default 3)")
    search.add_argument("--confirm", type=int, default=5, metavar="N",
                        help="interleaved runs of winner and baseline for the final claim "
                             "(default 5 each; when the winner runs 1.5x below its search "
                             "speed, the runner-up gets as many, and the better is kept)")
    search.add_argument("--seed", type=int, default=0, metavar="N",
                        help="seed of the sampler and the bootstrap (default 0)")


def _add_objective(obj: argparse._ArgumentGroup) -> None:
    obj.add_argument("--from-log", metavar="LOG",
                     help="a Darshan log or iolab profile: tune a proxy of its costliest "
                          "file's pattern and say which of diagnose's predicted fixes the "
                          "measurement confirms; with '-- COMMAND': prove each predicted fix "
                          "on your own command (--repeats runs a side, default 4)")
    obj.add_argument("--proxy-ranks", type=int, default=4, metavar="N",
                     help="--from-log: at most N ranks in the proxy (default 4)")
    obj.add_argument("--proxy-bytes", default="64M", metavar="SIZE",
                     help="--from-log: at most SIZE per rank in the proxy (default 64M)")
    obj.add_argument("--sbatch", action="store_true",
                     help="bench workloads: run each trial as a batch job (sbatch --wait); "
                          "the database and the current folder must be seen by the nodes")
    obj.add_argument("--sbatch-args", metavar="ARGS", default="",
                     help="options for each trial's sbatch, split like a shell would; write "
                          "--sbatch-args=\"-N 2 -n 8 -t 10\" (with '=')")
    obj.add_argument("--target", choices=("write", "read"), default="write",
                     help="bench workloads: the phase whose median bandwidth counts")
    obj.add_argument("--metric", metavar="REGEX",
                     help="commands: a regular expression whose first group is the score, "
                          "e.g. 'I/O bandwidth\\s*:\\s*([\\d.]+)' (default: wall time)")
    way = obj.add_mutually_exclusive_group()
    way.add_argument("--maximize", dest="maximize", action="store_true", default=None,
                     help="higher --metric is better (the default for --metric)")
    way.add_argument("--minimize", dest="maximize", action="store_false",
                     help="lower --metric is better (the default for wall time)")
    obj.add_argument("--time-limit", type=float, metavar="S",
                     help="seconds a trial may take before it is stopped (launcher and ranks) "
                          "and stored as failed; the search goes on (a hint combination can "
                          "hang an MPI-IO run)")
    obj.add_argument("--output-dir", metavar="DIR",
                     help="commands: the directory the program writes to (lfs knobs stripe it)")
    cli_common.add_mpi(obj, "commands: the MPI library the program uses; default: told by "
                            "its launcher (mpirun/mpiexec), needed under srun")


def _add_output_and_listing(p: argparse.ArgumentParser) -> None:
    out = p.add_argument_group("output")
    cli_common.add_db(out)
    cli_common.add_format(out, csv=False, json_help="the whole tune as JSON on stdout "
                                                    "(schema_version 1)")
    cli_common.add_output(out, "write the winner's files (romio-hints, env.sh, lfs.sh, "
                               "slurm.txt, code-changes.txt) into DIR when it is proven "
                               "faster", metavar="DIR")
    cli_common.add_quiet_verbose(out, quiet_help="no line per trial",
                                 verbose_help="also the stored run id of each trial")
    p.add_argument("--resume", type=int, metavar="ID",
                   help="continue an interrupted tune with the settings it was started with "
                        "(workload, space, --trials, --repeats, ...); a search option given "
                        "again with a different value is refused")
    p.add_argument("--list", action="store_true", help="list stored tunes and exit")
    p.add_argument("--list-knobs", action="store_true", help="describe every knob and exit")
    p.add_argument("workload", nargs=argparse.REMAINDER,
                   help="-- iolab bench OPTIONS, or -- any command")
    cli_common.add_examples(p, [
        ('iolab tune --preset posix -- iolab bench -a posix -t 64k -b 16m --np 2',
         'the fastest POSIX settings for this workload, proven against the defaults'),
        ('iolab tune --knob transfer=64k,1m,4m --trials 6 -o best -- iolab bench -b 16m --np 2',
         "one knob's values; the winner's files in best/ when it is proven faster"),
        ('iolab tune --from-log job.darshan',
         "a proxy of a logged job's I/O, tuned on the settings diagnose points at"),
        ('iolab tune --from-log job.darshan -- mpirun -np 4 ./app',
         "each of diagnose's fixes for the log run on the real command: proven faster, no "
         "effect, or slower — do not apply"),
        ('iolab tune --list --json', 'the stored tunes'),
        ('iolab tune --resume 3', 'continue tune 3 after Ctrl-C, with its own settings'),
        ('iolab tune --list-knobs', 'every knob, its values and how a user applies it'),
    ])
    cli_common.one_line_errors(p, "iolab tune")


def _list_knobs() -> int:
    for k in all_knobs():
        values = ",".join(k.choices) if k.choices else f"{k.value_type}"
        only = "; acts in collective calls only" if k.collective_only else ""
        print(f"{k.name:24} {k.kind:7} {values:38} {k.doc}{only}; applied by {k.applied_by}")
    return 0


def _workload(args: argparse.Namespace) -> tuple[str, list[str]]:
    """("bench", engine options) or ("command", argv)."""
    rest = list(args.workload)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if args.from_log:  # a command: the proof of the log's fixes on it; none: a proxy
        if rest and rest[0].startswith("-"):
            raise UsageError(f"unknown option {rest[0]!r} for iolab tune (a command follows "
                             "'--')")
        return ("proof", rest) if rest else ("bench", [])
    bench = bench_workload(rest)
    if bench is not None:
        return "bench", bench
    if not rest:
        example = next((EXAMPLE_WORKLOADS[p] for p in args.preset if p in EXAMPLE_WORKLOADS),
                       EXAMPLE_WORKLOADS["mpiio"])
        raise UsageError("no workload to tune: end the line with '-- iolab bench OPTIONS' "
                         f"(e.g. -- {example}) or '-- COMMAND ...' (your own program)")
    if rest[0].startswith("-"):
        raise UsageError(f"unknown option {rest[0]!r} for iolab tune (a workload follows '--')")
    return "command", rest


def bench_workload(argv: list[str]) -> list[str] | None:
    """The bench options of an ``iolab bench`` command line, whatever path names the
    ``iolab`` script (``/opt/x/bin/iolab``, ``.venv/bin/iolab``) or ``python -m iolab``;
    None for any other command. A bare ``bench`` is iolab's too (``-- bench -t 1m``)."""
    if argv[:1] == ["bench"]:
        return argv[1:]
    if argv and Path(argv[0]).name == "iolab" and argv[1:2] == ["bench"]:
        return argv[2:]
    if argv and Path(argv[0]).name.startswith("python") and argv[1:4] == ["-m", "iolab",
                                                                         "bench"]:
        return argv[4:]
    return None


def _bench_workload(argv: list[str]) -> Workload:
    """The workload, parsed once by iolab bench's own parsers before the tune is stored: a
    bad option is the one line, not a failed tune in the database."""
    try:
        return workload.parse(argv)
    except UsageError as exc:
        raise UsageError(f"the workload after '-- iolab bench': {exc}") from None


def _from_log(args: argparse.Namespace) -> tuple[dict[str, Any], Workload]:
    """The proxy and the predictions; the space gains the predicted knobs and values, and
    the proxy's interface preset when the user named none."""

    if args.proxy_ranks < 1:
        raise UsageError(f"--proxy-ranks {args.proxy_ranks}: at least 1")
    try:
        max_bytes = parse_size(args.proxy_bytes)
    except ValueError:
        raise UsageError(f"--proxy-bytes {args.proxy_bytes!r}: expected a size like 64M"
                         ) from None
    model = load_log(args.from_log)
    proxy, preds = from_model(model, args.proxy_ranks, max_bytes)
    if not args.preset and not args.knob and not args.space:
        args.preset = [proxy.api]
    named = {a.partition("=")[0] for a in args.knob}
    notes = []
    for p in preds:
        if p.knob not in named and knob(p.knob).kind == "lfs" and shutil.which("lfs") is None:
            # diagnose predicts Lustre layouts; without lfs here they are judged, not tuned
            notes.append(f"{p.knob}: not tuned, Lustre's 'lfs' command is not on PATH here")
        elif p.knob not in named:
            values = {knob(p.knob).normalise(v) for v in knob(p.knob).explore} | {p.value}
            if p.knob == "transfer":  # a transfer must divide the proxy's block
                block = int(str(proxy.workload.block))
                values = {v for v in values if block % int(v) == 0}
                if not values:
                    continue
            args.knob.append(f"{p.knob}={','.join(sorted(values))}")
    if proxy.target == "read" and args.target == "write":  # a read proxy scores its reads
        args.target = "read"
    for line in proxy.description:
        print(f"iolab tune: {line}", file=sys.stderr)
    # the job the log recorded, so that diagnose --proof shows this tune for that log only
    return {"log": str(args.from_log), "log_identity": log_identity(model),
            "proxy": proxy.description,
            "bench_args": proxy.workload.argv(), "predictions": [p.to_json() for p in preds],
            "notes": notes}, proxy.workload


def openmpi_io_choice(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Open MPI's ``io`` component selection for a command: ``--mca io X`` (or ``-mca``,
    ``--gmca``) or ``OMPI_MCA_io=X`` on its command line (``env``, ``mpirun -x``), else
    ``OMPI_MCA_io`` in the environment the command inherits (the line diagnose's fix files
    export); None when nothing selects one."""
    # also inside one argument: iolab bench --launcher-args="--mca io romio321"
    found = re.search(r"""(?:^|[\s="'])(?:--?g?mca\s+io\s+|OMPI_MCA_io=)([^\s"']+)""",
                      " ".join(argv))
    return found.group(1) if found else env.get("OMPI_MCA_io")


def selects_romio(io: str) -> bool:
    """"romio321", "romio341", "^ompio": ROMIO; "ompio" (Open MPI's own default) is not."""
    io = io.strip().strip("'\"")
    return "romio" in io or (io.startswith("^") and "ompio" in io)


def predict_implementation(kind: str, argv: list[str], mpi: str | None,
                           env: Mapping[str, str] | None = None) -> str | None:
    """ROMIO or OMPIO, as far as the command line and its environment tell before anything
    runs (the baseline trial's read-back settles it for bench workloads). The ROMIO switch
    counts wherever Open MPI reads it: ``OMPI_MCA_io=^ompio`` exported before ``iolab tune``
    (diagnose's ``.env`` files) made OMPIO knobs be tuned under ROMIO, where they act on
    nothing."""
    io = openmpi_io_choice(argv, os.environ if env is None else env)
    if io is not None and selects_romio(io):
        return "romio"
    text = " ".join(argv)  # not searched for "romio": a path may hold the word
    if kind == "bench":
        if "mpich" in text:
            return "romio"

        try:
            return "ompio" if mpi_flavour(mpirun_program("default")) == "openmpi" else "romio"
        except UsageError:
            return None
    if mpi and mpi != "default":
        return {"mpich": "romio", "openmpi": "ompio"}.get(mpi)
    if argv and Path(argv[0]).name.startswith(("mpirun", "mpiexec", "orterun")):
        return "ompio" if mpi_flavour(argv[0]) == "openmpi" else "romio"
    return None


def _objective(kind: str, argv: list[str], args: argparse.Namespace,
               bench: Workload | None = None) -> Any:
    if bench is not None:
        if args.metric:
            raise UsageError("--metric is for commands; bench workloads are scored by "
                             "bandwidth (--target write|read)")
        sbatch = None
        if args.sbatch_args and not args.sbatch:
            raise UsageError("--sbatch-args needs --sbatch")
        if args.sbatch:
            if shutil.which("sbatch") is None:
                raise UsageError("--sbatch: 'sbatch' is not on PATH (load Slurm)")
            sbatch = list(parse_launcher_args(args.sbatch_args))
        if args.time_limit is not None and args.time_limit < 1:
            raise UsageError(f"--time-limit {args.time_limit:g}: at least 1 second")
        return BenchObjective(bench, target=args.target, db=args.db, sbatch=sbatch,
                              time_limit_s=args.time_limit)
    maximize = args.maximize if args.maximize is not None else bool(args.metric)
    return CommandObjective(argv, metric=args.metric, maximize=maximize,
                            time_limit_s=args.time_limit, output_dir=args.output_dir)


def _check_space_for(kind: str, space: Any, argv: list[str]) -> None:
    for d in space.dimensions:
        k = d.knob
        if kind == "command" and k.kind == "engine":
            raise UsageError(f"knob {k.name} changes the workload itself: it exists for "
                             "'iolab bench' workloads only")
        if k.kind == "lfs" and shutil.which("lfs") is None:
            raise UsageError(f"knob {k.name} needs Lustre's 'lfs' command, which is not "
                             "on PATH here")
        if k.kind == "launch":
            if not in_slurm_allocation():
                raise UsageError(f"knob {k.name} needs a Slurm allocation (srun)")
            if kind == "command" and (not argv or Path(argv[0]).name != "srun"):
                raise UsageError(f"knob {k.name} reaches a command through srun's "
                                 "environment: start the command with srun (-- srun ...)")
    if space.size() < 2:
        raise UsageError("the search space has one configuration only")


def _refuse_ignored_knobs(kind: str, space: Any, implementation: str | None,
                          named: set[str]) -> None:
    """Knobs the workload's MPI-IO implementation ignores, refused before the baseline runs:
    a knob the user named with --knob, or every knob of the space (a preset's knobs for
    the other implementation are dropped after the baseline, with a note)."""
    kept, notes = drop_for_implementation(space, implementation, kind)
    for note in notes:
        name, _, why = note.partition(": not tuned, ")
        if name in named:
            raise UsageError(f"--knob {name}: {why}; leave it out")
    if space.dimensions and not kept.dimensions:
        raise UsageError("no knob of the search space acts on this workload: "
                         + "; ".join(n.replace(": not tuned, ", ": ") for n in notes))


def _warn_if_confirm_cannot_judge(confirm: int) -> None:
    """The claim is the 95% interval of the speed-up (iolab.stats); with fewer runs a side
    than it needs, no result can be called significant, however clear."""
    enough = fewest_to_judge()
    if 2 <= confirm < enough:
        print(f"iolab tune: warning: --confirm {confirm} cannot show a significant gain: "
              f"with {confirm} runs a side even the clearest result (every winner run "
              f"faster than every default run) happens by chance 1 time in "
              f"{math.comb(2 * confirm, confirm)}, so no 95% interval is given; use "
              f"{enough} or more", file=sys.stderr)


# the presets that tune one I/O interface (iolab bench's API of the same name)
_API_PRESETS = {name: label for name, label in backends.LABELS.items() if name != "null"}


def _refuse_presets_for_another_api(presets: list[str], bench: Workload) -> None:
    """``--preset mpiio`` on an ``iolab bench -a posix`` workload would run trials whose
    every collective or file-view setting fails: refused before the baseline, naming the
    preset that fits."""
    api = bench.api
    for preset in presets:
        interface = _API_PRESETS.get(preset.lower())
        if interface is None or api == preset.lower():
            continue
        instead = (f"--preset {api}" if api in _API_PRESETS else
                   "--knob with the settings it has (iolab tune --list-knobs)")
        raise UsageError(f"--preset {preset} tunes {interface} and the workload is iolab "
                         f"bench -a {api}: use {instead}, or run the workload with "
                         f"-a {preset.lower()}")


def run(args: argparse.Namespace) -> int:
    if args.list_knobs:
        return _list_knobs()

    if args.trials < 1 or args.confirm < 0 or args.repeats < 1 or args.repeat_top < 1:
        raise UsageError("--trials, --repeats and --repeat-top must be at least 1 and "
                         "--confirm at least 0")
    _warn_if_confirm_cannot_judge(args.confirm)
    if args.output:
        cli_common.check_output_dir(args.output)
    if args.resume is None and not args.list:
        named = {k.partition("=")[0].strip() for k in args.knob}  # before --from-log adds
        kind, argv = _workload(args)
        if kind == "proof":
            return _prove(args, argv)
        from_log, bench = _from_log(args) if args.from_log else (None, None)
        if kind == "bench":
            # the proxy's options are judged by bench's parsers as the user's would be
            bench = _bench_workload(bench.argv() if bench is not None else argv)
            argv = bench.argv()
            _refuse_presets_for_another_api(args.preset, bench)

        predicted = predict_implementation(kind, argv, args.mpi)
        space = build_space(args.preset, args.knob, args.space, predicted or "romio",
                            preset_skips=("engine",) if kind == "command" else ())
        if kind == "bench" and any(d.knob.kind in ("romio", "ompio") for d in space.dimensions):
            probed = mpiio_implementation(argv)  # what the baseline would tell, in a second
            if probed != predicted:
                predicted = probed
                space = build_space(args.preset, args.knob, args.space, predicted or "romio")
        _check_space_for(kind, space, argv)
        _refuse_ignored_knobs(kind, space, predicted, named)
        objective = _objective(kind, argv, args, bench)
        if from_log is not None:
            objective.from_log = from_log
    # --list only reads: opened read-only (a read-only file system, no write lock)
    conn = db.connect(args.db, must_exist=args.resume is not None, read_only=args.list)
    try:
        if args.list:
            return _print_list(conn, args.format == "json")
        if args.resume is not None:
            return _resume(conn, args)

        policy = Policy(repeats=args.repeats, repeat_top=args.repeat_top)
        tune_id = store.create_tune(conn, ["iolab", "tune", *sys.argv[2:]],
                                    objective.to_json(), space.to_json(), args.trials,
                                    args.confirm, args.seed, policy=policy.to_json())
        # a command's implementation is known from its launcher only; a bench run reports its own
        return _execute(conn, tune_id, objective, space, args, [], policy,
                        implementation=predicted if kind == "command" else None)
    finally:
        conn.close()


def _prove(args: argparse.Namespace, argv: list[str]) -> int:
    """``--from-log LOG -- COMMAND``: diagnose's fixes proven on the command
    (iolab.tune.proof); ``--repeats`` runs a side, else as few as can be judged at the
    family-wise level of its candidates (4 for up to 3, 5 for up to 12, 6 for up to 46)."""
    rounds = args.repeats if "repeats" in _given_options(args) else None
    return proof.run(args, argv, _objective("command", argv, args),
                     predict_implementation("command", argv, args.mpi), rounds)


# Options that describe a tune: on --resume the stored tune's own values hold. A value given
# again that differs from the stored one is refused (a resumed tune that silently changed
# its budget, repeats or workload would mix two searches in one result).
SEARCH_OPTIONS = ("trials", "repeats", "repeat_top", "confirm", "seed", "preset", "knob",
                  "space", "from_log", "proxy_ranks", "proxy_bytes", "sbatch", "sbatch_args",
                  "target", "metric", "maximize", "time_limit", "output_dir", "mpi",
                  "workload")


def _resume(conn: Any, args: argparse.Namespace) -> int:
    row = store.get_tune(conn, args.resume)
    if row is None:
        raise UsageError(f"no tune {args.resume} in the results database (iolab tune --list)")
    if row["status"] == "done":
        raise UsageError(f"tune {args.resume} is finished; nothing to resume")
    if (row.get("objective") or {}).get("proof_of"):
        raise UsageError(f"tune {args.resume} is a proof of a log's fixes; it is not resumed: "
                         "run iolab tune --from-log LOG -- COMMAND again")
    policy = _stored_policy(row)
    _refuse_changed_settings(args, row, policy)
    o = row["objective"]
    objective: Any
    if o["kind"] == "bench":
        objective = BenchObjective(_bench_workload(o["bench_args"]),
                                   target=o.get("target", "write"), db=args.db,
                                   from_log=o.get("from_log"), sbatch=o.get("sbatch"),
                                   time_limit_s=o.get("time_limit_s"))
    else:
        objective = CommandObjective(o["argv"], metric=o.get("metric"),
                                     maximize=bool(o.get("maximize")),
                                     time_limit_s=o.get("time_limit_s"),
                                     output_dir=o.get("output_dir"))
    args.trials, args.confirm, args.seed = row["budget"], row["confirm"], row["seed"]
    done = store.trials(conn, args.resume)
    print(f"iolab tune: resuming tune {args.resume} after {len(done)} finished trial(s)",
          file=sys.stderr)
    return _execute(conn, args.resume, objective, SearchSpace.from_json(row["space"]), args,
                    done, policy, implementation=row.get("implementation"))


def _stored_policy(row: Mapping[str, Any]) -> Any:
    """The policy the tune was started with; a tune stored before policies were (iolab
    0.5's) kept --repeats and --repeat-top in its command line only, and picked its
    winner by the plain median."""
    stored = (row.get("result") or {}).get("policy")
    if stored:
        return Policy.from_json(stored)
    command = row.get("command")
    repeats, top = Policy().repeats, Policy().repeat_top
    if isinstance(command, list) and command[:2] == ["iolab", "tune"]:
        p = argparse.ArgumentParser(add_help=False)
        add_arguments(p)
        try:
            old, _ = p.parse_known_args([str(a) for a in command[2:]])
            repeats, top = int(old.repeats), int(old.repeat_top)
        except SystemExit:  # a command line this version cannot read
            pass
    return Policy(repeats=repeats, repeat_top=top, rule="median")


def _given_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options written on this command line (the process's own, when it is an
    `iolab tune` one), else those whose value is not the default: a value given that
    happens to equal the default counts as given only in the first case."""
    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    if sys.argv[1:2] == ["tune"]:
        for action in p._actions:
            action.default = argparse.SUPPRESS
        try:
            written, _ = p.parse_known_args(sys.argv[2:])
            out = vars(written)
            if out.get("workload") in ([], ["--"]):
                out.pop("workload")
            return out
        except SystemExit:  # cannot happen: the same line parsed once already
            pass
    return {d: v for d in SEARCH_OPTIONS if (v := getattr(args, d, None)) != p.get_default(d)
            and not (d == "workload" and v in ([], ["--"]))}


def _refuse_changed_settings(args: argparse.Namespace, row: Mapping[str, Any],
                             policy: Any) -> None:
    """One line, exit 2, when a search option given with --resume differs from the stored
    tune's; an option not given leaves the stored value in force."""
    given = _given_options(args)
    o = row.get("objective") or {}
    stored = {"trials": row.get("budget"), "confirm": row.get("confirm"),
              "seed": row.get("seed"), "repeats": policy.repeats,
              "repeat_top": policy.repeat_top, "target": o.get("target", "write"),
              "metric": o.get("metric"), "time_limit": o.get("time_limit_s"),
              "maximize": o.get("maximize"), "output_dir": o.get("output_dir")}
    for dest in SEARCH_OPTIONS:
        if dest not in given:
            continue
        value = given[dest]
        option = "--" + dest.replace("_", "-")
        if dest == "workload":
            option = "a workload after '--'"
        elif dest == "maximize":
            option = "--maximize" if value else "--minimize"
        if dest in stored and value == stored[dest]:
            continue
        was = f" (the tune's is {stored[dest]})" if dest in stored else ""
        raise UsageError(f"--resume {args.resume} continues tune {args.resume} with the "
                         f"settings it was started with; {option} differs{was}: leave it "
                         "out, or start a new tune")


def _execute(conn: Any, tune_id: int, objective: Any, space: Any, args: argparse.Namespace,
             done: list[Any], policy: Any, implementation: str | None = None) -> int:
    printer = TrialPrinter(args.trials, args.confirm, objective.unit, objective.maximize,
                           quiet=args.quiet, verbose=args.verbose)
    tuner = Tuner(objective, space, args.trials, args.confirm, args.seed, conn, tune_id,
                  on_trial=printer.trial, implementation=implementation, policy=policy)
    try:
        result = tuner.run(done)
    except KeyboardInterrupt:
        store.update_tune(conn, tune_id, status="interrupted")
        print(f"iolab tune: interrupted; {len(tuner.done)} trial(s) stored. "
              f"Continue with: iolab tune --resume {tune_id}"
              + (f" --db {shlex.quote(args.db)}" if args.db else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    except UsageError:
        if done or tuner.done:
            store.update_tune(conn, tune_id, status="failed")
        else:  # refused before its first run (bad input): the tune is not kept
            store.forget_tune(conn, tune_id)
        raise
    fl = getattr(objective, "from_log", None)
    if fl:
        result.predictions = judge(fl["predictions"], result.winner,
                                   bool(result.claim and result.claim.significant),
                                   set(result.space), [*result.notes, *fl.get("notes", ())])
    store.update_tune(conn, tune_id, status=result.status, result=result.to_json())
    written: list[Path] = []
    if args.output and result.status == "done" and result.winner and (
            result.claim is None or not result.claim.significant):
        print(f"iolab tune: nothing written to {args.output}: the winner is not proven faster "
              "than the defaults", file=sys.stderr)
    elif args.output and result.status == "done" and result.winner:
        folder = cli_common.make_dir(Path(args.output), verb="tune")
        written = write_artifacts(result.winner, folder, getattr(objective, "output_dir", None),
                                  result.implementation, _interface(objective))
    if args.format == "json":
        # the winner as data, in the shape of diagnose's fix.settings / fix.code_changes
        data = winner_changes(result.winner or {}, result.implementation,
                              _interface(objective)).to_json()
        doc = {"schema_version": 1, "kind": "tune", "id": tune_id,
               "objective": objective.to_json(), "unit": objective.unit,
               **result.to_json(), **data, "space": result.space,
               "trials": [t.__dict__ for t in tuner.done],
               "files": [str(p) for p in written]}
        sys.stdout.write(json.dumps(doc, indent=2, default=list) + "\n")
    else:
        sys.stdout.write(render_result(tune_id, result, objective.unit, written))
    return 0 if result.status == "done" else EXIT_FAILED


def _interface(objective: Any) -> str:
    """The I/O interface of a bench workload (``-a``); "posix" for a command."""
    bench = getattr(objective, "workload", None)
    return bench.api if bench is not None else "posix"


def _print_list(conn: Any, as_json: bool) -> int:
    rows = store.list_tunes(conn)
    sys.stdout.write(tunes_json(rows) if as_json else tunes_table(rows))
    return 0
