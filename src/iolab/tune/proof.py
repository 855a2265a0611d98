"""``iolab tune --from-log LOG -- COMMAND``: diagnose's fixes proven on the user's own command.

The settings are exactly those diagnose predicts for the log (iolab.tune.fromlog.predictions).
Each is applied to the real command the way diagnose's fix files say (iolab.tune.objective:
a ROMIO hints file named by ROMIO_HINTS and MPICH_MPIIO_HINTS, OMPIO's OMPI_MCA_*, lfs on
--output-dir, srun's input environment), with Open MPI's switch to ROMIO
(``OMPI_MCA_io=^ompio``) beside ROMIO hints when the command runs OMPIO, as the fix files
pair them: alone, all the settings of one finding together, and all of them together.

The runs come in rounds: in each, the unchanged command and every candidate once, the order
turned from round to round, so drift on a shared machine touches all alike. Each candidate
is compared with all the unchanged runs by the one decision of :mod:`iolab.stats`: "proven
faster" when the interval of the speed-up is above 1, "slower — do not apply" when it is
below, else "no effect" (the interval holds 1, or too few runs to judge: which one is said).
The intervals are family-wise: with k candidates each is a 1 - 0.05/k interval (Bonferroni,
as tune's confirmation does), so that settings which change nothing are all called "no
effect" 95% of the time, not each one 95% of the time (with 8 candidates that was a 1 in 3
chance of one "proven faster" setting that does nothing). A setting a command cannot
receive (a change in the program's own calls, an OMPIO parameter under ROMIO, striping
without --output-dir) stays "predicted, not proven here", with the reason.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from iolab.diagnose.proof import log_identity
from iolab.errors import EXIT_USAGE, UsageError
from iolab.launch import in_slurm_allocation
from iolab.results import db
from iolab.results import tunes as store
from iolab.stats import CONFIDENCE, estimate, fewest_to_judge
from iolab.tune.fromlog import predictions
from iolab.tune.knobs import LAUNCH, Knob, all_knobs

# Open MPI reads ROMIO's hints only with ROMIO as its MPI-IO component (diagnose's .env files
# export this line beside ROMIO_HINTS).
ROMIO_SWITCH = {"OMPI_MCA_io": "^ompio"}

CODE_CHANGE = ("a change in the program's own I/O calls (a code change): iolab tune "
               "--from-log LOG, without a command, measures it on a proxy of the log")


@dataclass(frozen=True)
class Candidate:
    """A set of predicted settings applied together to the command."""

    label: str
    group: str  # "alone" | "finding" (a finding's settings together) | "all"
    rules: tuple[str, ...]  # the findings whose fix it applies
    params: dict[str, str]  # knob -> value
    env: dict[str, str] = field(default_factory=dict)  # set beside them (the ROMIO switch)

    def key(self) -> str:
        return json.dumps([sorted(self.params.items()), sorted(self.env.items())])


@dataclass(frozen=True)
class Unproven:
    rule: str
    title: str
    knob: str
    value: str
    reason: str


def _path(k: Knob | None, implementation: str | None, argv: list[str],
          output_dir: str | None) -> tuple[str, str | None]:
    """How a knob reaches the command: ("romio" | "ompio" | "any", None), or ("", why not)."""
    if k is None or k.kind == "engine":
        return "", CODE_CHANGE if k is not None else "iolab cannot apply it to a command"
    if k.kind == "ompio" and implementation == "romio":
        return "", ("the command runs ROMIO (its launcher or OMPI_MCA_io says so), which does "
                    "not read Open MPI's OMPIO parameters")
    if k.kind == "lfs":
        if not output_dir:
            return "", ("striping reaches the program's files through the folder it writes: "
                        "give it with --output-dir DIR")
        if shutil.which("lfs") is None:
            return "", "needs Lustre's lfs command, which is not on PATH here"
    if k.kind == "launch":
        if not in_slurm_allocation() or not argv or Path(argv[0]).name != "srun":
            return "", (f"a placement ({LAUNCH[k.name][2]}) reaches a command started with "
                        "srun inside a Slurm allocation")
    return (k.kind if k.kind in ("romio", "ompio") else "any"), None


def plan(preds: list[Any], implementation: str | None, argv: list[str],
         output_dir: str | None) -> tuple[list[Candidate], list[Unproven]]:
    """The candidates (each applicable setting alone, each finding's together, all
    together; duplicates once) and the settings that stay predictions. Under OMPIO a
    finding's ROMIO hints (with the switch) and its OMPIO parameters are two ways to the
    same end, so they are never mixed in one run."""
    by_name = {k.name: k for k in all_knobs()}
    usable: list[tuple[Any, str]] = []
    unproven: list[Unproven] = []
    for p in preds:
        path, why = _path(by_name.get(p.knob), implementation, argv, output_dir)
        if why:
            unproven.append(Unproven(p.rule, p.title, p.knob, p.value, why))
        else:
            usable.append((p, path))
    switch = implementation == "ompio"

    def make(label: str, group: str, members: list[tuple[Any, str]]) -> list[Candidate]:
        def one(suffix: str, part: list[tuple[Any, str]], env: dict[str, str]) -> Candidate:
            return Candidate(label + suffix, group,
                             tuple(dict.fromkeys(p.rule for p, _ in part)),
                             {p.knob: p.value for p, _ in part}, env)

        ways = [(way, suffix, env) for way, suffix, env in (
            ("romio", " (ROMIO hints, with the ROMIO switch)", dict(ROMIO_SWITCH)),
            ("ompio", " (OMPIO parameters)", {})) if any(path == way for _, path in members)]
        if not switch or not ways:
            return [one("", members, {})]
        return [one(suffix if len(ways) > 1 else "",
                    [(p, path) for p, path in members if path in (way, "any")], env)
                for way, suffix, env in ways]

    cands: list[Candidate] = []
    for p, path in usable:
        env = dict(ROMIO_SWITCH) if switch and path == "romio" else {}
        label = f"{p.knob}={p.value}" + (" with OMPI_MCA_io=^ompio" if env else "")
        cands.append(Candidate(label, "alone", (p.rule,), {p.knob: p.value}, env))
    rules = list(dict.fromkeys(p.rule for p, _ in usable))
    for rule in rules:
        cands += make(f"{rule}: its settings together", "finding",
                      [(p, path) for p, path in usable if p.rule == rule])
    if usable:  # none: nothing to run (an empty "fix" would time the command against itself)
        cands += make("every predicted setting together", "all", usable)
    seen: dict[str, Candidate] = {}
    for c in cands:  # the first (the most specific) label of a set of settings is kept
        if c.key() in seen:
            first = seen[c.key()]
            seen[c.key()] = Candidate(first.label, first.group,
                                      tuple(dict.fromkeys(first.rules + c.rules)),
                                      first.params, first.env)
        else:
            seen[c.key()] = c
    return list(seen.values()), unproven


def family_confidence(candidates: int) -> float:
    """Each candidate's interval level so that all ``candidates`` together hold CONFIDENCE."""
    return 1 - (1 - CONFIDENCE) / max(candidates, 1)


def verdict(baseline: list[float], values: list[float], errors: list[str], maximize: bool,
            seed: int = 0, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """One candidate's verdict against the unchanged runs (see the module doc)."""
    out: dict[str, Any] = {"values": values, "errors": errors, "speedup": None,
                           "ci_low": None, "ci_high": None, "confidence": confidence}
    runs = len(values) + len(errors)
    if errors:
        out.update(verdict="failed", text=f"fails — do not apply ({len(errors)} of {runs} "
                   f"run(s) failed: {errors[0]})")
        return out
    if not values or not baseline:
        out.update(verdict="no-effect", text="no effect shown (no run to compare)")
        return out
    est = estimate(baseline, values, maximize, seed=seed, confidence=confidence)
    out.update(speedup=est.ratio, ci_low=est.low, ci_high=est.high)
    sides = f"{len(values)} vs {len(baseline)} interleaved runs"
    if est.low is None or est.high is None:
        out.update(verdict="no-effect", text=f"no effect shown: too few runs to judge "
                   f"({est.ratio:.2f}x, {sides}; {fewest_to_judge(confidence)} a side are needed)")
        return out
    ci = f"{confidence * 100:.3g}% CI {est.low:.2f}-{est.high:.2f}"
    text = {1: f"proven faster ({est.ratio:.2f}x, {ci}, {sides})",
            -1: f"slower — do not apply ({est.ratio:.2f}x, {ci}, {sides})",
            0: f"no effect ({est.ratio:.2f}x, {ci} holds 1, {sides})"}[est.direction]
    out.update(verdict={1: "faster", -1: "slower", 0: "no-effect"}[est.direction], text=text)
    return out


_EXIT_CODE = re.compile(r"^exit code (\d+)")


class BaselineFailed(Exception):
    """The unchanged command failed: nothing to prove against (nothing is stored)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _run(objective: Any, params: Mapping[str, str], env_extra: Mapping[str, str],
         label: str) -> Any:
    """One run of the command with a candidate applied as the objective applies knobs,
    plus ``env_extra`` (the ROMIO switch)."""
    with tempfile.TemporaryDirectory(prefix="iolab-tune-") as hints_dir:
        env = objective.environment(params, label, Path(hints_dir))
        env.update(env_extra)
        return objective._evaluate(params, env)


OnRun = Callable[[int, str, Mapping[str, str], Any], None]  # number, label, params, outcome


def measure(objective: Any, cands: list[Candidate], rounds: int,
            on_run: OnRun) -> tuple[list[float], list[list[Any]]]:
    """Rounds of (the unchanged command, every candidate), the order turned each round; the
    first unchanged run comes first of all and a failure of it raises BaselineFailed."""
    baseline: list[float] = []
    outcomes: list[list[Any]] = [[] for _ in cands]
    number = 0
    for r in range(rounds):
        order = list(range(len(cands)))
        if cands:
            shift = r % len(cands)
            order = order[shift:] + order[:shift]
        slots: list[int | None] = [None, *order] if r % 2 == 0 else [*order, None]
        for slot in slots:
            params = {} if slot is None else cands[slot].params
            extra = {} if slot is None else cands[slot].env
            out = _run(objective, params, extra, f"proof-{number}")
            if slot is None:
                if out.status != "ok" and not baseline and r == 0:
                    m = _EXIT_CODE.match(out.error or "")
                    raise BaselineFailed(out.error or "failed", int(m.group(1)) if m
                                         else EXIT_USAGE)
                if out.status == "ok" and out.value is not None:
                    baseline.append(float(out.value))
            else:
                outcomes[slot].append(out)
            on_run(number, "unchanged" if slot is None else cands[slot].label, params, out)
            number += 1
    return baseline, outcomes


# Options of a search that a proof has no use for: its settings are diagnose's, its runs
# the rounds above.
_SEARCH_ONLY = (("preset", "--preset"), ("knob", "--knob"), ("space", "--space"),
                ("sbatch", "--sbatch"), ("output", "-o"))


def _refuse_search_options(args: argparse.Namespace) -> None:
    for dest, option in _SEARCH_ONLY:
        if getattr(args, dest, None):
            raise UsageError(f"{option} is for a search; --from-log LOG -- COMMAND proves "
                             "exactly the settings diagnose predicts for LOG: leave it out")


def _diagnosis(log: str) -> tuple[Any, list[Any]]:
    """The log's model and diagnose's predicted settings (iolab.tune.fromlog.predictions)."""
    # the model and the diagnosis (numpy) only for a proof: every `iolab tune` imports this
    # module, and numpy at start-up cost each one ~0.2 s of CPU
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose
    from iolab.model.job import build_model
    from iolab.sources import load_source

    model = build_model([load_source(log)])
    return model, predictions(diagnose(model, Thresholds()))


def _claim(best: Mapping[str, Any] | None, n_baseline: int) -> dict[str, Any] | None:
    """The fastest proven candidate as a tune's claim (``tune --list``, compare, report)."""
    if best is None:
        return None
    return {"speedup": best["speedup"], "ci_low": best["ci_low"], "ci_high": best["ci_high"],
            "confidence": best["confidence"], "n_baseline": n_baseline,
            "n_winner": len(best["values"]), "significant": True}


def result_doc(log: str, identity: str, implementation: str | None, rounds: int,
               cands: list[Candidate], unproven: list[Unproven], baseline: list[float],
               outcomes: list[list[Any]], maximize: bool, seed: int) -> dict[str, Any]:
    """The stored result: a verdict per candidate, the settings left predictions."""
    fixes = []
    level = family_confidence(len(cands))
    for c, outs in zip(cands, outcomes):
        values = [float(o.value) for o in outs if o.status == "ok" and o.value is not None]
        errors = [o.error or o.status for o in outs if o.status != "ok"]
        fixes.append({**asdict(c), "rules": list(c.rules),
                      **verdict(baseline, values, errors, maximize, seed, level)})
    proven = [f for f in fixes if f["verdict"] == "faster"]
    best = max(proven, key=lambda f: f["speedup"], default=None)
    return {"kind": "proof", "log": log, "log_identity": identity,
            "implementation": implementation, "rounds": rounds,
            "baseline": {"values": baseline,
                         "median": median(baseline) if baseline else None},
            "fixes": fixes, "not_proven": [asdict(u) for u in unproven],
            "winner": dict(best["params"]) if best else {},
            "claim": _claim(best, len(baseline))}


def render(tune_id: int, doc: Mapping[str, Any], unit: str, status: str) -> str:
    def value(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f} s" if unit == "s" else f"{v:.4g} {unit}"

    base = doc["baseline"]
    lines = [f"Proof {tune_id} of the fixes diagnose predicts for {doc['log']}"
             + (f" ({status})" if status != "done" else "")
             + (f"; MPI-IO implementation: {doc['implementation']}"
                if doc.get("implementation") else ""),
             f"  unchanged command: {value(base['median'])} (median of "
             f"{len(base['values'])} run(s))"]
    for f in doc["fixes"]:
        lines.append(f"  {f['label']} [{', '.join(f['rules'])}]: {f['text']}")
    if doc["not_proven"]:
        lines.append("  predicted, not proven here:")
        lines += [f"    {u['knob']}={u['value']} [{u['rule']}]: {u['reason']}"
                  for u in doc["not_proven"]]
    if not doc["fixes"] and not doc["not_proven"]:
        lines.append("  diagnose predicts no setting for this log: nothing to prove")
    lines.append(f"  beside the findings: iolab diagnose {doc['log']} --proof {tune_id}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, argv: list[str], objective: Any,
        implementation: str | None, rounds: int | None) -> int:
    """The proof of ``args.from_log``'s predicted fixes on ``argv`` (stored as a tune);
    ``rounds`` None: as few as can be judged at the candidates' family-wise level."""
    _refuse_search_options(args)
    model, preds = _diagnosis(args.from_log)
    cands, unproven = plan(preds, implementation, argv, getattr(objective, "output_dir", None))
    if rounds is None:
        rounds = fewest_to_judge(family_confidence(len(cands)))
    conn: Any = None  # opened after the first unchanged run: a failing command creates nothing
    tune_id: int | None = None
    total = rounds * (len(cands) + 1) if cands else 0
    quiet = bool(args.quiet) or args.format == "json"

    def on_run(number: int, label: str, params: Mapping[str, str], out: Any) -> None:
        nonlocal tune_id, conn
        if tune_id is None:  # after the first unchanged run: a failing command stores nothing
            conn = db.connect(args.db)
            tune_id = store.create_tune(conn, ["iolab", "tune", *sys.argv[2:]],
                                        {**objective.to_json(), "proof_of": args.from_log},
                                        {p.knob: [p.value] for p in preds}, total, rounds,
                                        args.seed)
        store.add_trial(conn, tune_id, store.Trial(
            number, "confirm", dict(params), out.status, out.value, None, out.error, (),
            out.wall_time_s, {}))
        if not quiet:
            score = f"{out.value:.3f}" if out.status == "ok" and out.value is not None \
                else f"{out.status}: {out.error}"
            print(f"iolab tune: proof run {number + 1}/{total}  {label:50} {score}",
                  file=sys.stderr, flush=True)

    status = "done"
    baseline: list[float] = []
    outcomes: list[list[Any]] = [[] for _ in cands]
    try:
        if cands:
            baseline, outcomes = measure(objective, cands, rounds, on_run)
    except BaselineFailed as exc:
        print(f"iolab tune: the unchanged command failed ({exc}); a proof needs it to run: "
              "fix the command first (nothing stored)", file=sys.stderr)
        return exc.code if 0 < exc.code < 256 else EXIT_USAGE
    except KeyboardInterrupt:
        status = "interrupted"
    try:
        if tune_id is None:  # nothing to run: the predictions and their reasons are stored
            conn = db.connect(args.db)
            tune_id = store.create_tune(conn, ["iolab", "tune", *sys.argv[2:]],
                                        {**objective.to_json(), "proof_of": args.from_log},
                                        {p.knob: [p.value] for p in preds}, 0, rounds,
                                        args.seed)
        doc = result_doc(args.from_log, log_identity(model), implementation, rounds, cands,
                         unproven, baseline, outcomes, objective.maximize, args.seed)
        store.update_tune(conn, tune_id, status=status, implementation=implementation,
                          result=doc)
        trials = [t.__dict__ for t in store.trials(conn, tune_id)]
    finally:
        if conn is not None:
            conn.close()
    if args.format == "json":
        sys.stdout.write(json.dumps({"schema_version": 1, "kind": "proof", "id": tune_id,
                                     "status": status, "objective": objective.to_json(),
                                     "unit": objective.unit, **doc, "trials": trials},
                                    indent=2) + "\n")
    else:
        sys.stdout.write(render(tune_id, doc, objective.unit, status))
    return 0 if status == "done" else 130
