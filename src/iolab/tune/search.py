"""The tune itself: baseline, model-based search (Optuna's TPE), then the confirmation.

1. The baseline (every knob at its default) runs first: it is the configuration to beat,
   and it says which MPI-IO implementation runs the workload, so knobs that implementation
   ignores (ROMIO hints under OMPIO, OMPIO parameters under ROMIO) are dropped before the
   search spends a trial on them.
2. TPE proposes configurations; a proposal measured before is measured again, which is how
   promising candidates get repeated on a noisy machine. A configuration's score is the
   median of its samples.
3. The best configuration and the baseline run again, interleaved, ``confirm`` times each;
   :mod:`iolab.tune.stats` turns those samples into the claim.
Every trial is stored as it finishes; a resumed tune replays the stored ones into the study.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from iolab.tune import store
from iolab.tune.objective import Objective, TrialOutcome
from iolab.tune.space import DEFAULT, SearchSpace
from iolab.tune.stats import Claim, compare

Key = str  # a configuration as canonical JSON


def key_of(params: Mapping[str, str]) -> Key:
    """Knobs left at DEFAULT do not count: the baseline is "{}" whatever the space."""
    return json.dumps({k: v for k, v in sorted(params.items()) if v != DEFAULT})


def drop_for_implementation(space: SearchSpace, implementation: str | None,
                            objective_kind: str) -> tuple[SearchSpace, list[str]]:
    """Knobs the running library ignores, removed with one note each."""
    notes: list[str] = []
    drop: list[str] = []
    for d in space.dimensions:
        k = d.knob
        if k.kind == "romio" and implementation == "ompio":
            drop.append(k.name)
            notes.append(f"{k.name}: not tuned, Open MPI's OMPIO ignores ROMIO hints "
                         "(tune ompio.* knobs, or run with --mca io romio321)")
        elif k.kind == "ompio" and implementation == "romio":
            drop.append(k.name)
            notes.append(f"{k.name}: not tuned, the workload runs ROMIO, not OMPIO")
        elif k.kind in ("romio", "ompio") and implementation is None \
                and objective_kind == "bench":
            drop.append(k.name)
            notes.append(f"{k.name}: not tuned, the workload does no MPI-IO")
    return space.without(drop), notes


@dataclass
class TuneResult:
    status: str  # "done" | "failed"
    implementation: str | None
    baseline_score: float | None
    winner: dict[str, str] = field(default_factory=dict)  # knobs set (DEFAULT left out)
    winner_score: float | None = None
    claim: Claim | None = None
    importances: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    space: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "implementation": self.implementation,
                "baseline_score": self.baseline_score, "winner": self.winner,
                "winner_score": self.winner_score,
                "claim": self.claim.to_json() if self.claim else None,
                "importances": self.importances, "notes": self.notes, "error": self.error}


class Tuner:
    """One tune over ``space`` for ``objective``; ``on_trial`` sees each finished trial."""

    def __init__(self, objective: Objective, space: SearchSpace, budget: int, confirm: int,
                 seed: int, conn: sqlite3.Connection, tune_id: int,
                 on_trial: Callable[[store.Trial, TuneResult], None] | None = None,
                 implementation: str | None = None, sampler: str = "tpe") -> None:
        self.objective = objective
        self.space = space
        self.budget = budget
        self.confirm = confirm
        self.seed = seed
        self.conn = conn
        self.tune_id = tune_id
        self.on_trial = on_trial
        self.sampler = sampler  # "tpe", or "random" (the baseline of bench/tune_efficiency)
        self.done: list[store.Trial] = []
        self.progress = TuneResult("running", implementation, None)

    # -- measuring ---------------------------------------------------------------------
    def _measure(self, params: dict[str, str], phase: str) -> store.Trial:
        number = len(self.done)
        out: TrialOutcome = self.objective.evaluate(params, f"tune:{self.tune_id}:{number}")
        trial = store.Trial(number, phase, params, out.status, out.value, out.run_id,
                            out.error, out.ignored, out.wall_time_s, out.settings)
        store.add_trial(self.conn, self.tune_id, trial)
        self.done.append(trial)
        if out.implementation and not self.progress.implementation:
            self.progress.implementation = out.implementation
        self._update_best()
        if self.on_trial:
            self.on_trial(trial, self.progress)
        return trial

    def _scores(self, phase: str = "search") -> dict[Key, list[float]]:
        scores: dict[Key, list[float]] = {}
        for t in self.done:
            if t.phase == phase and t.status == "ok" and t.value is not None:
                scores.setdefault(key_of(t.params), []).append(t.value)
        return scores

    def _best(self) -> tuple[Key, float] | None:
        scores = self._scores()
        if not scores:
            return None
        pick = max if self.objective.maximize else min
        best = pick(scores, key=lambda k: median(scores[k]))
        return best, median(scores[best])

    def _update_best(self) -> None:
        if any(t.phase == "confirm" for t in self.done):
            return  # the winner is chosen; the confirmation decides the rest
        base = self._scores().get(key_of(self.space.baseline()))
        self.progress.baseline_score = median(base) if base else None
        best = self._best()
        if best:
            self.progress.winner = {k: v for k, v in json.loads(best[0]).items() if v != DEFAULT}
            self.progress.winner_score = best[1]

    # -- the three steps ---------------------------------------------------------------
    def run(self, resumed: list[store.Trial] | None = None) -> TuneResult:
        self.done = list(resumed or [])
        self._update_best()
        baseline = self.space.baseline()
        base_trials = [t for t in self.done
                       if t.phase == "search" and key_of(t.params) == key_of(baseline)]
        if not base_trials:
            base_trials = [self._measure(baseline, "search")]
        if all(t.status != "ok" for t in base_trials):
            return self._finish("failed", error="the baseline (the defaults) failed: "
                                f"{base_trials[-1].error}; fix the workload first")
        kind = getattr(self.objective, "kind", "bench")
        self.space, notes = drop_for_implementation(self.space, self.progress.implementation,
                                                    kind)
        in_effect = next((t.settings for t in base_trials if t.settings), {})
        self.space = self.space.without_values(in_effect)
        self.progress.notes = notes
        store.update_tune(self.conn, self.tune_id, implementation=self.progress.implementation,
                          space=self.space.to_json())
        if not self.space.dimensions:
            return self._finish("failed", error="no knob is left to tune for this workload "
                                "and MPI-IO implementation: " + "; ".join(notes))
        self._search()
        return self._confirm_and_claim()

    def _distributions(self) -> dict[str, Any]:
        from optuna.distributions import CategoricalDistribution

        return {d.knob.name: CategoricalDistribution(d.choices) for d in self.space.dimensions}

    def _study(self) -> Any:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = (optuna.samplers.RandomSampler(seed=self.seed) if self.sampler == "random"
                   else optuna.samplers.TPESampler(seed=self.seed, multivariate=True,
                                                   n_startup_trials=max(3, self.budget // 4)))
        study = optuna.create_study(
            direction="maximize" if self.objective.maximize else "minimize", sampler=sampler)
        dists = self._distributions()
        for t in self.done:  # replay what was measured (the baseline, a resumed tune)
            params = {n: t.params.get(n, DEFAULT) for n in dists}
            if t.phase != "search" or key_of(params) != key_of(t.params) or any(
                    v not in dists[n].choices for n, v in params.items()):
                continue  # measured on knobs or values the space no longer has
            state = (optuna.trial.TrialState.COMPLETE if t.status == "ok" and t.value is not None
                     else optuna.trial.TrialState.FAIL)
            study.add_trial(optuna.trial.create_trial(
                params=params, distributions=dists, state=state,
                value=t.value if state == optuna.trial.TrialState.COMPLETE else None))
        return study

    def _search(self) -> None:
        import optuna

        study = self._study()
        dists = self._distributions()
        full_defaults = {d.knob.name: DEFAULT for d in self.space.dimensions}
        while sum(1 for t in self.done if t.phase == "search") < self.budget:
            ot = study.ask(dists)
            params = {**full_defaults, **{n: str(v) for n, v in ot.params.items()}}
            trial = self._measure(params, "search")
            if trial.status == "ok" and trial.value is not None:
                study.tell(ot, trial.value)
            else:
                study.tell(ot, state=optuna.trial.TrialState.FAIL)
        self.progress.importances = _importances(study)

    def _confirm_and_claim(self) -> TuneResult:
        best = self._best()
        baseline = self.space.baseline()
        if best is None:
            return self._finish("failed", error="no trial succeeded")
        winner = {**baseline, **json.loads(best[0])}
        self._drop_ignored(winner)
        if key_of(winner) == key_of(baseline) or self.confirm < 2:
            self.progress.notes.append("no configuration beat the defaults in the search"
                                       if key_of(winner) == key_of(baseline) else
                                       "confirmation skipped (--confirm below 2)")
            return self._finish("done")
        sides = {"baseline": baseline, "winner": winner}
        samples: dict[str, list[float]] = {"baseline": [], "winner": []}
        for t in self.done:  # a resumed confirmation keeps its runs
            if t.phase == "confirm":
                side = "winner" if key_of(t.params) == key_of(winner) else "baseline"
                if t.status == "ok" and t.value is not None:
                    samples[side].append(t.value)
        counts = {s: sum(1 for t in self.done if t.phase == "confirm"
                         and key_of(t.params) == key_of(p)) for s, p in sides.items()}
        while min(counts.values()) < self.confirm:
            for side in ("baseline", "winner"):  # interleaved: drift hits both alike
                if counts[side] < self.confirm:
                    t = self._measure(sides[side], "confirm")
                    counts[side] += 1
                    if t.status == "ok" and t.value is not None:
                        samples[side].append(t.value)
        if len(samples["baseline"]) < 2 or len(samples["winner"]) < 2:
            return self._finish("failed", error="too many confirmation runs failed to judge")
        self.progress.winner = {k: v for k, v in winner.items() if v != DEFAULT}
        try:
            self.progress.claim = compare(samples["baseline"], samples["winner"],
                                          self.objective.maximize, seed=self.seed)
        except ValueError as exc:  # e.g. a --metric that can be zero or negative
            return self._finish("failed", error=f"cannot judge the winner: {exc}")
        self.progress.baseline_score = median(samples["baseline"])
        self.progress.winner_score = median(samples["winner"])
        return self._finish("done")

    def _drop_ignored(self, winner: dict[str, str]) -> None:
        """A hint the library did not honour in the winner's own runs is not part of it."""
        ignored = {i for t in self.done if key_of(t.params) == key_of(winner) for i in t.ignored}
        for d in self.space.dimensions:
            if d.knob.library_key in ignored and winner.get(d.knob.name, DEFAULT) != DEFAULT:
                winner[d.knob.name] = DEFAULT
                self.progress.notes.append(
                    f"{d.knob.name}: the library did not honour it (read back), left out")
        self.progress.winner = {k: v for k, v in winner.items() if v != DEFAULT}

    def _finish(self, status: str, error: str | None = None) -> TuneResult:
        self.progress.status = status
        self.progress.error = error
        self.progress.space = self.space.to_json()
        if status == "done" and self.progress.claim is not None \
                and not self.progress.claim.significant:
            self.progress.notes.append("the winner is not significantly faster: "
                                       "keep the defaults")
        return self.progress


def _importances(study: Any) -> dict[str, float]:
    """Which knobs mattered (Optuna's fANOVA); empty when the study cannot say."""
    import optuna

    try:
        imp = optuna.importance.get_param_importances(study)
    except (RuntimeError, ValueError, ZeroDivisionError):
        return {}
    return {k: round(float(v), 3) for k, v in imp.items()}

