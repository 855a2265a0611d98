"""``iolab io500 CONFIG.ini``: the IO500 benchmark, as its users run it, on iolab's engine.

IO500's ini file (:mod:`.config`), its phases in its order with its fixed parameters
(:mod:`.phases`: each IOR and mdtest line made into engine options by iolab.ior and
iolab.mdtest, each run stored like every ``iolab bench`` run), its find (:mod:`.find`), its
score, validity marks and result files (:mod:`.output`). Everything is checked before the
first phase: a bad ini, a phase iolab cannot run, or options the engine refuses are one line,
exit 2, with nothing created.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from iolab import cli_common
from iolab import launch as launchers
from iolab.bench import subrun
from iolab.errors import EXIT_USAGE, UsageError
from iolab.io500 import config, find, find_ranks, output, phase_files, phases
from iolab.io500.phases import Phase, Settings
from iolab.ior import front
from iolab.ior import output as ior_output
from iolab.runs.engine_doc import from_json

EXIT_FAILED_RUN = 1
QUICK_STONEWALL_S = 5  # --quick: the longest stonewall, far below a valid run's 300 s
GIB = float(1 << 30)

# --quick without an ini file: every standard phase at a size a laptop runs in seconds, in
# ./io500-quick; the stonewall other than IO500's 300 s marks the run [INVALID] as IO500
# itself would
QUICK_INI = """[global]
datadir = ./io500-quick/datafiles
resultdir = ./io500-quick/results

[debug]
stonewall-time = 2

[ior-easy]
transferSize = 64k
blockSize = 16m

[mdtest-easy]
n = 500

[ior-hard]
segmentCount = 500

[mdtest-hard]
n = 500
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Run the IO500 benchmark from its ini file on iolab's engine: "
                          "IO500's phases, score and result files; every phase stored.")
    parser.add_argument("config", nargs="?", metavar="CONFIG.ini", help="IO500's ini file")
    parser.add_argument("--list", action="store_true",
                        help="list the ini file's sections and options (io500 --list)")
    parser.add_argument("--mode", choices=("standard", "extended"), default="standard",
                        help="IO500's mode: extended adds the optional phases")
    parser.add_argument("--quick", action="store_true",
                        help=f"a short run for laptops and tests: stonewall at most "
                        f"{QUICK_STONEWALL_S} s (the ini's [debug] stonewall-time when "
                        "shorter); without CONFIG.ini, every phase at a size of seconds "
                        "under ./io500-quick; the result is marked not valid for submission")
    parser.add_argument("--timestamp", metavar="TEXT",
                        help="the name of the timestamped folders (default: the start time)")
    parser.add_argument("--np", type=int, metavar="N", help="ranks (default as iolab bench)")
    parser.add_argument("--nodes", type=int, metavar="N", help="nodes (srun -N)")
    parser.add_argument("--ppn", type=int, metavar="N", help="ranks per node")
    parser.add_argument("--launcher", choices=launchers.LAUNCHERS, default="auto")
    parser.add_argument("--launcher-args", metavar="ARGS")
    cli_common.add_mpi(parser, "MPI library, as iolab bench --mpi")
    cli_common.add_db(parser)
    parser.add_argument("--label", help="stored with each phase's run (default: 'io500')")
    cli_common.add_format(parser, csv=False,
                          json_help="the result as JSON on stdout instead of IO500's summary")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each phase's iolab bench line; runs and creates nothing")
    cli_common.add_examples(parser, [
        ("iolab io500 --np 8 config.ini", "IO500 on 8 ranks, result files in resultdir"),
        ("iolab io500 --list", "the ini file's sections and options"),
        ("iolab io500 --quick --np 2", "a run of seconds (not valid for submission)"),
    ])
    cli_common.one_line_errors(parser, "iolab io500")


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UsageError as exc:
        print(f"iolab io500: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _refuse_what_iolab_lacks(cfg: config.Io500Config, todo: list[Phase]) -> None:
    for ph in todo:
        if ph.kind == "missing":
            raise UsageError(f"phase {ph.name}: {phases.NOT_IN_IOLAB[ph.name]}; set run = "
                             f"FALSE in [{ph.name}] or use --mode standard")
        if ph.kind == "find" and cfg.get(ph.name, "external-script"):
            raise UsageError(f"[{ph.name}] external-script: iolab runs its own parallel "
                             "walk; remove external-script")
    for section, name, why in (
            ("global", "io-buffers-on-gpu", "GPU buffers are not in the engine"),
            ("debug", "pause-dir", "pausing between phases is not in iolab"),
            ("mdtest-hard", "files-per-dir", "mdtest -I (a directory tree) is not in the "
             "engine")):
        value = cfg.get(section, name)
        if value not in (None, "", "FALSE", "0"):
            raise UsageError(f"[{section}] {name} = {value}: {why}; remove it")


def _settings(cfg: config.Io500Config, args: argparse.Namespace, stamp: str) -> Settings:
    datadir = os.path.abspath(cfg.get("global", "datadir") or "")
    resdir = os.path.abspath(cfg.get("global", "resultdir") or "./results")
    if cfg.flag("global", "timestamp-datadir"):
        datadir = os.path.join(datadir, stamp)
    if cfg.flag("global", "timestamp-resultdir"):
        resdir = os.path.join(resdir, stamp)
    stonewall = int(cfg.get("debug", "stonewall-time") or 0)
    if args.quick:
        stonewall = min(stonewall, QUICK_STONEWALL_S) if stonewall > 0 else QUICK_STONEWALL_S
    return Settings(datadir, resdir, stonewall, front.ranks(args), front.nodes(args),
                    cfg.get("global", "api") or "POSIX")


def _run(args: argparse.Namespace) -> int:
    if args.list:
        sys.stdout.write(config.list_text())
        return 0
    if not args.config and not args.quick:
        raise UsageError("give IO500's ini file: iolab io500 CONFIG.ini (--list: its options; "
                         "--quick: a run of seconds)")
    cfg = config.read_config(args.config) if args.config \
        else config.parse_text(QUICK_INI, "--quick")
    todo = [p for p in phases.PHASES if phases.enabled(cfg, p, args.mode == "extended")]
    _refuse_what_iolab_lacks(cfg, todo)
    stamp = args.timestamp or time.strftime("%Y.%m.%d-%H.%M.%S")
    s = _settings(cfg, args, stamp)
    launch = front.launch_args(args, s.ranks)
    planned = {p.name: phases.engine_args(cfg, p, s) for p in todo
               if p.kind in ("ior", "mdtest")}
    if args.dry_run:
        for name, (_, words) in planned.items():
            print(f"{name}: " + shlex.join(["iolab", "bench", *launch, *words]))
        return 0
    for _, words in planned.values():
        subrun.check_args([*launch, *words])
    _check_outputs(args.config, s)
    for sub in ("ior-easy", "ior-hard", "mdtest-easy", "mdtest-hard"):
        os.makedirs(os.path.join(s.datadir, sub), exist_ok=True)
    os.makedirs(s.resdir, exist_ok=True)
    return _benchmark(cfg, args, s, todo, launch)


def _check_outputs(config_path: str | None, s: Settings) -> None:
    """The result files never overwrite the ini file they come from."""
    if config_path is None:  # --quick: no ini file
        return
    src = Path(config_path).resolve()
    for name in ("result.txt", "result_summary.txt", "config.ini", "config-orig.ini"):
        if Path(s.resdir, name).resolve() == src:
            raise UsageError(f"{config_path}: it is in the result folder {s.resdir} as "
                             f"{name}, which the run writes; move it or set resultdir")


def _benchmark(cfg: config.Io500Config, args: argparse.Namespace, s: Settings,
               todo: list[Phase], launch: list[str]) -> int:
    Path(s.resdir, "config-orig.ini").write_text(cfg.text)
    Path(s.resdir, "config.ini").write_text(cfg.render())
    minwrite = 30 if cfg.flag("global", "scc") else 300
    run_invalid = [] if s.stonewall == minwrite else \
        [f"stonewall-time {s.stonewall}s != {minwrite}s"]
    if args.quick:
        run_invalid.append(f"--quick (stonewall {s.stonewall} s): not valid for submission")
        print(f"iolab io500 --quick: stonewall {s.stonewall} s; the result is not valid for "
              "submission", file=sys.stderr)
    summary = open(Path(s.resdir, "result_summary.txt"), "w")  # noqa: SIM115 - kept open
    _say(summary, f"IO500 version {output.VERSION} ({args.mode})", args.format != "json")
    results: list[output.PhaseResult] = []
    failed = False
    try:
        for ph in todo:
            if cfg.flag("global", "drop-caches"):
                subprocess.run(cfg.get("global", "drop-caches-cmd") or "true", shell=True,
                               check=False)
            res = _one_phase(cfg, args, s, ph, launch, minwrite)
            results.append(res)
            _say(summary, output.result_line(res), args.format != "json")
            if res.run_id is None and ph.kind in ("ior", "mdtest"):
                failed = True
                break
    finally:
        valid = not run_invalid and not failed and all(not r.invalid for r in results)
        scores = output.group_scores(results)
        _say(summary, output.score_line(scores, valid), args.format != "json")
        summary.close()
        head = [("procs", str(s.ranks)), ("version", output.VERSION),
                ("result-dir", s.resdir), ("mode", args.mode)]
        Path(s.resdir, "result.txt").write_text(
            output.result_txt(results, head, run_invalid, scores, valid))
        _cleanup(s)
    if args.format == "json":
        print(json.dumps(output.json_doc(results, scores, valid, args.mode, s.resdir,
                                         s.ranks, run_invalid), indent=2))
    else:
        print(f"\nThe result files are stored in the directory: {s.resdir}")
    return EXIT_FAILED_RUN if failed else 0


def _say(summary: Any, line: str, echo: bool) -> None:
    summary.write(line + "\n")
    summary.flush()
    if echo:
        print(line, flush=True)


def _one_phase(cfg: config.Io500Config, args: argparse.Namespace, s: Settings, ph: Phase,
               launch: list[str], minwrite: int) -> output.PhaseResult:
    if ph.kind == "timestamp":
        start = time.perf_counter()
        Path(s.resdir, "timestampfile").touch()
        return output.PhaseResult(ph, 0.0, time.perf_counter() - start, "", "")
    if ph.kind == "find":
        return _find_phase(cfg, args, s, ph)
    io500, words = phases.engine_args(cfg, ph, s)
    label = f"{args.label or 'io500'} {ph.name}"
    began = ior_output.now_text()
    done = subrun.run_bench([*launch, *words], label, args.db)
    if done.doc is not None:
        _phase_files(cfg, s, ph, done.doc, began)
    res = output.PhaseResult(ph, 0.0, done.wall_time_s, shlex.join(io500),
                             shlex.join(["iolab", "bench", *words]), done.run_id)
    if done.status != "ok" or done.doc is None:
        res.invalid.append(f"the phase's run {done.status}: {done.error} (stored as run "
                           f"{done.run_id})")
        res.run_id = None
        return res
    _score(res, done.doc, s, minwrite)
    count = phases.written_count(done.doc)
    if count is not None:
        s.written["-".join(ph.name.split("-")[:2])] = count
    return res


def _phase_files(cfg: config.Io500Config, s: Settings, ph: Phase, doc: dict[str, Any],
                 began: str) -> None:
    """IO500's <phase>.txt and <phase>.csv, from the tool's words and the stored run."""
    if ph.kind == "ior":
        io500, words = phases.ior_words(cfg, ph.name, s)
        phase_files.write_ior(s.resdir, ph.name, io500, words, doc, began)
    else:
        io500, words = phases.mdtest_words(cfg, ph.name, s)
        family = ph.name.rsplit("-", 1)[0]
        items = phases.written_count(doc) if ph.name.endswith("-write") else \
            s.written.get(family)
        phase_files.write_mdtest(s.resdir, ph.name, io500, words, doc, began, items)


def _score(res: output.PhaseResult, doc: dict[str, Any], s: Settings, minwrite: int) -> None:
    """IO500's phase score (GiB/s or kIOPS over the phase's time) and its validity marks."""
    # the phase's own operation: an mdtest step also times its tree (tree_create/_remove)
    run = from_json(doc)
    ph = [p for p in run.phases() if not str(p.op or "").startswith("tree_")][-1]
    time_s = float(ph.time_s or 0.0)
    res.runtime_s = time_s
    if res.phase.kind == "ior":
        res.score = float(ph.bytes or 0) / time_s / GIB if time_s > 0 else 0.0
    else:
        res.score = float(ph.ops or 0) / time_s / 1000 if time_s > 0 else 0.0
    sw = ph.stonewall
    if sw:
        res.pairs.append(("stonewall-hit", "TRUE" if sw.get("hit") else "FALSE"))
    errors = run.verify.errors or 0
    if errors:
        res.invalid.append(f"Errors ({errors}) occured during phase. This invalidates your run.")
    if res.phase.stonewall and time_s < s.stonewall:
        res.invalid.append(f"Runtime of phase ({time_s:f}) is below stonewall time. This "
                           "shouldn't happen!")
    elif res.score == 0.0:
        res.invalid.append("Resulting score shouldn't be 0.0")
    if res.phase.stonewall and time_s < minwrite:
        res.invalid.append("Runtime is smaller than expected minimum runtime")


def _find_spec(args: argparse.Namespace, s: Settings, workers: int) -> launchers.LaunchSpec:
    """The find's walkers launched as the run's ranks are (its nodes and ranks per node when
    [find] nproc keeps the run's rank count)."""
    same = workers == s.ranks
    return launchers.LaunchSpec(
        np=workers, nodes=args.nodes if same else None, ppn=args.ppn if same else None,
        launcher=args.launcher, mpi=args.mpi,
        extra=launchers.parse_launcher_args(args.launcher_args))


def _find_phase(cfg: config.Io500Config, args: argparse.Namespace, s: Settings, ph: Phase
                ) -> output.PhaseResult:
    newer = os.lstat(Path(s.resdir, "timestampfile")).st_ctime_ns // 1_000_000_000  # pfind's
    root, crit = s.datadir, find.Criteria(size=phases.HARD_FILE, newer_than_s=newer)
    exe = f"pfind {s.datadir} -newer {s.resdir}/timestampfile -size 3901c -name *01*"
    if ph.name == "find-easy":
        root, crit = os.path.join(s.datadir, "mdtest-easy"), find.Criteria()
        exe = f"pfind {root}/ -name *01*"
    elif ph.name == "find-hard":
        root = os.path.join(s.datadir, "mdtest-hard")
        exe = f"pfind {root}/ -newer {s.resdir}/timestampfile -size 3901c -name *01*"
    nproc = cfg.get(ph.name, "nproc")
    workers = int(nproc) if nproc else s.ranks
    try:
        found, ranks = find_ranks.rank_find(root, crit, _find_spec(args, s, workers), s.resdir)
    except RuntimeError as exc:
        res = output.PhaseResult(ph, 0.0, 0.0, exe, f"iolab walk over {workers} ranks")
        res.invalid.append(str(exc))
        return res
    Path(s.resdir, f"{ph.name}.csv").write_text(phase_files.find_csv(found, ranks))
    res = output.PhaseResult(ph, found.kiops, found.runtime_s, exe,
                             f"iolab walk over {workers} ranks (python -m "
                             "iolab.io500.find_ranks)")
    res.pairs += [("nproc", str(workers)), ("found", str(found.found)),
                  ("total-files", str(found.total))]
    if found.found == 0:
        res.invalid.append("Find didn't find anything, this is likely invalid.")
    return res


def _cleanup(s: Settings) -> None:
    """IO500's cleanup: the IOR files the phases kept, then the folders the run made (each
    only when empty: a folder holding anything else stays)."""
    for sub, prefix in (("ior-easy", "ior_file_easy"), ("ior-hard", "file")):
        folder = Path(s.datadir, sub)
        for f in folder.glob(f"{prefix}*") if folder.is_dir() else []:
            if f.is_file():
                f.unlink()
        for d in sorted(folder.glob("*"), reverse=True) if folder.is_dir() else []:
            if d.is_dir():
                _rmdir(d)
    for sub in ("ior-easy", "ior-hard", "mdtest-easy", "mdtest-hard", ""):
        _rmdir(Path(s.datadir, sub))


def _rmdir(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass
