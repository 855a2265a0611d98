"""The tune itself: baseline, model-based search (Optuna's TPE), repeats, then the proof.

1. The baseline (every knob at its default) runs first: it is the configuration to beat,
   and it says which MPI-IO implementation runs the workload, so knobs that implementation
   ignores (ROMIO hints under OMPIO, OMPIO parameters under ROMIO) are dropped before the
   search spends a trial on them.
2. Exploration: first a covering start: until every value of every knob
   has been measured in some configuration, each proposal takes a value not seen yet for
   each knob that has one (random among those, the rest at random). A handful of runs (the
   largest knob's number of values) so, where TPE's random start could miss a value for good
   (8 runs without one layout of three: a real search picked a layout at half the best's
   speed), every main effect is seen once before the model narrows (when the exploration
   runs can cover them all; with fewer, the sampler's own start). Each covering run
   differs from the run before it in as many knobs as it can, since a run's speed can
   depend on the run before it (on tmpfs at 1 GiB a rank a file-view run ran up to 4x
   faster right after another file-view run, and slower after any other): a value first
   seen right after a run that shares it is seen in the best light, and the model then
   chases it. Then the values seen only in the run right after the baseline get one more
   run when that run was slow: on a disk it can pay for the baseline's writes. Then TPE
   proposes configurations; one measured before is not measured again (the proposal is
   told to the study as failed, so the model is not biased, and TPE is asked again), so
   every exploration run samples a new point.
3. Repeats: on a noisy machine the best of many single runs is mostly the luckiest run. The
   last part of the budget re-measures the few best candidates until each has ``repeats``
   samples (a candidate whose score drops out of the top is replaced by the next one;
   while the leader's worst run beats every rival's best, the runs explore instead), and
   the winner is the best *score* among the configurations measured ``repeats`` times
   (:func:`pick_winner`). The score (``Policy.rule``) is the median of the log values
   minus one standard error of the configuration's own run-to-run noise pooled with the
   search's (:mod:`iolab.tune.selection`): on heavy-tailed runs a configuration ahead on one
   run has to be ahead by more than the noise, and one whose runs disagree pays for it.
   The policy (:class:`Policy`) is stored with the tune. Alternatives to each step (random
   search, other TPE settings and budget splits, no covering start, other winner rules) are
   research switches: bench/tunelab (ResearchPolicy, ResearchTuner) holds them, and
   bench/tune_variants and bench/tune_efficiency compare them by replay.
4. The winner and the baseline run again, interleaved in a balanced order (baseline,
   winner, winner, baseline, ...: a run can be slowed or sped by the one before it, and
   in plain alternation every winner run would follow a baseline run), ``confirm`` times each;
   :mod:`iolab.tune.stats` turns those samples into the claim. When the winner's
   confirmation runs DRIFT_NOTE times worse than its search runs (a second look),
   the search saw it in a light that does not hold: a point whose runs are two-valued (O_DSYNC
   4 MiB writes on a VM's disk: 450-950 or 1200-1900 MiB/s) seen fast two times out of two,
   or a run sped by the one before it (a file-view run after another on tmpfs). A better
   winner rule cannot see that in two or three search runs; the confirmation's alternation
   with the defaults does. Then the runner-up is confirmed the same way, and the one with the
   larger speed-up over the defaults is kept, each claim at a level corrected for the choice.
Every trial is stored as it finishes; a resumed tune replays the stored ones into the study.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import median
from typing import Any

from iolab.results import tunes as store
from iolab.tune.objective import METRIC_MISSED, Objective, TrialOutcome
from iolab.tune.policy import TPE_EI_CANDIDATES, TPE_STARTUP_SHARE, Policy
from iolab.tune.selection import Key, importances, next_repeat, pick_winner
from iolab.tune.space import DEFAULT, SearchSpace
from iolab.tune.stats import CONFIDENCE, Claim, compare

SEARCH_PHASES = ("search", "repeat")  # the budget's runs: exploration and re-measurements
MAX_PROPOSALS = 20  # asks of the sampler before an unmeasured point is drawn at random
DRIFT_NOTE = 1.5  # the winner's confirmation median this far from its search median: a note
CONTRAST_DRAWS = 32  # covering points drawn to find the one least like the run before
# A tune that measured nothing it could compare: no winner is reported (the error starts so).
INCONCLUSIVE = "inconclusive"


def key_of(params: Mapping[str, str]) -> Key:
    """Knobs left at DEFAULT do not count: the baseline is "{}" whatever the space."""
    return json.dumps({k: v for k, v in sorted(params.items()) if v != DEFAULT})


def mark_repeats(trials: Sequence[store.Trial]) -> list[store.Trial]:
    """Stored trials with each search run of a configuration measured before marked as a
    repeat (the database files both as search runs)."""
    seen: set[Key] = set()
    out = []
    for t in trials:
        if t.phase in SEARCH_PHASES:
            k = key_of(t.params)
            t = replace(t, phase="repeat" if k in seen else "search")
            seen.add(k)
        out.append(t)
    return out


@dataclass(frozen=True)
class Encoding:
    """How the sampler sees one knob. An ordinal knob (a size, a count) whose baseline value
    is known is an integer index over its values in numeric order, DEFAULT at the place of
    the value it stands for, so TPE's kernel carries evidence between neighbouring sizes
    (1 MiB did well: try 4 MiB before 64 KiB). Any other knob is categorical."""

    name: str
    choices: tuple[str, ...]
    ordinal: bool = False  # choices are in numeric order

    def distribution(self) -> Any:
        # deferred: optuna (~1 s to load) only when a search runs
        from optuna.distributions import CategoricalDistribution, IntDistribution

        if self.ordinal:
            return IntDistribution(0, len(self.choices) - 1)
        return CategoricalDistribution(self.choices)

    def decode(self, raw: Any) -> str:
        return self.choices[int(raw)] if self.ordinal else str(raw)

    def encode(self, value: str) -> Any:
        """The sampler's value for ``value``; None when the space does not hold it."""
        if value not in self.choices:
            return None
        return self.choices.index(value) if self.ordinal else value


def encodings(space: SearchSpace, in_effect: Mapping[str, str]) -> dict[str, Encoding]:
    out = {}
    for d in space.dimensions:
        current = in_effect.get(d.knob.name, "")
        numbers = [*d.values, current]
        if d.knob.value_type in ("size", "int") and all(
                v.lstrip("-").isdigit() for v in numbers):
            ordered = sorted([(int(v), v) for v in d.values] + [(int(current), DEFAULT)])
            out[d.knob.name] = Encoding(d.knob.name, tuple(v for _, v in ordered), True)
        else:
            out[d.knob.name] = Encoding(d.knob.name, d.choices)
    return out


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


def drop_inert(space: SearchSpace, inert: Callable[[Mapping[str, str]], Sequence[str]] | None
               ) -> tuple[SearchSpace, list[str]]:
    """Knobs that can act on no configuration of the space (the objective's ``inert``: ROMIO's
    collective buffering in a workload whose MPI-IO calls are all independent, when no knob
    of the space makes them collective), removed with one note each: a search would spend
    runs on noise, and a noisy run could make one of them the winner."""
    if inert is None:
        return space, []
    baseline = space.baseline()
    drop = [d.knob.name for d in space.dimensions
            if all(d.knob.name in inert({**baseline, **other, d.knob.name: d.values[0]})
                   for other in _switches(space))]
    notes = [f"{n}: not tuned, it acts inside collective MPI-IO calls only and the "
             "workload's calls are all independent (add --knob collective=true to try "
             "collective calls)" for n in drop]
    return space.without(drop), notes


def _switches(space: SearchSpace) -> list[dict[str, str]]:
    """The settings of the space's on/off engine knobs (collective calls among them) taken
    one at a time, and none: enough to see whether some configuration makes a knob act."""
    out: list[dict[str, str]] = [{}]
    for d in space.dimensions:
        if d.knob.kind == "engine" and d.knob.value_type == "bool":
            out += [{d.knob.name: v} for v in d.values]
    return out


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
    predictions: list[dict[str, Any]] = field(default_factory=list)  # --from-log, judged
    search_runs: int = 0  # runs of the budget spent so far (exploration and repeats)
    policy: dict[str, Any] = field(default_factory=dict)  # Policy.to_json()
    # knobs of the search's best left out of the winner -> why (not honoured, cannot act)
    left_out: dict[str, str] = field(default_factory=dict)
    # each configuration confirmed against the baseline (Confirmed.to_json): the winner,
    # and the runner-up when the winner's confirmation fell short of its search
    confirmed: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "implementation": self.implementation,
                "policy": self.policy,
                "predictions": self.predictions,
                "baseline_score": self.baseline_score, "winner": self.winner,
                "winner_score": self.winner_score,
                "claim": self.claim.to_json() if self.claim else None,
                "importances": self.importances, "left_out": self.left_out,
                "confirmed": self.confirmed, "notes": self.notes, "error": self.error}


@dataclass
class Confirmed:
    """A configuration run against the baseline in the confirmation."""

    params: dict[str, str]
    left_out: dict[str, str]  # knobs of the search's configuration that do not act
    searched: float  # its median in the search
    baseline_runs: list[float]  # the baseline's runs interleaved with its own
    runs: list[float]
    claim: Claim | None = None
    kept: bool = False  # the tune's winner

    def to_json(self) -> dict[str, Any]:
        return {"winner": {k: v for k, v in self.params.items() if v != DEFAULT},
                "search_score": self.searched, "score": median(self.runs),
                "baseline_score": median(self.baseline_runs),
                "claim": self.claim.to_json() if self.claim else None, "kept": self.kept}


class Tuner:
    """One tune over ``space`` for ``objective``; ``on_trial`` sees each finished trial."""

    def __init__(self, objective: Objective, space: SearchSpace, budget: int, confirm: int,
                 seed: int, conn: sqlite3.Connection, tune_id: int,
                 on_trial: Callable[[store.Trial, TuneResult], None] | None = None,
                 implementation: str | None = None, policy: Policy | None = None) -> None:
        self.objective = objective
        self.space = space
        self.budget = budget
        self.confirm = confirm
        self.seed = seed
        self.conn = conn
        self.tune_id = tune_id
        self.on_trial = on_trial
        self.policy = policy or Policy()
        self.done: list[store.Trial] = []
        self.progress = TuneResult("running", implementation, None,
                                   policy=self.policy.to_json())
        self.in_effect: dict[str, str] = {}  # knob -> the baseline's own value (read back)

    # -- measuring ---------------------------------------------------------------------
    def _measure(self, params: dict[str, str], phase: str) -> store.Trial:
        number = len(self.done)
        out: TrialOutcome = self.objective.evaluate(params, f"tune:{self.tune_id}:{number}")
        trial = store.Trial(number, phase, params, out.status, out.value, out.run_id,
                            out.error, out.ignored, out.wall_time_s, out.settings)
        store.add_trial(self.conn, self.tune_id, trial)
        self.done.append(trial)
        self.progress.search_runs = self._budget_used()
        if out.implementation and not self.progress.implementation:
            self.progress.implementation = out.implementation
        self._update_best()
        if self.on_trial:
            self.on_trial(trial, self.progress)
        return trial

    def _scores(self) -> dict[Key, list[float]]:
        scores: dict[Key, list[float]] = {}
        for t in self.done:
            if t.phase in SEARCH_PHASES and t.status == "ok" and t.value is not None:
                scores.setdefault(key_of(t.params), []).append(t.value)
        return scores

    def _budget_used(self) -> int:
        return sum(1 for t in self.done if t.phase in SEARCH_PHASES)

    def _best(self) -> tuple[Key, float] | None:
        return pick_winner(self._scores(), self.objective.maximize, self.policy.repeats,
                           self.policy.rank)

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
        self.done = mark_repeats(resumed or [])
        self._update_best()
        baseline = self.space.baseline()
        base_trials = [t for t in self.done
                       if t.phase == "search" and key_of(t.params) == key_of(baseline)]
        if not base_trials:
            base_trials = [self._measure(baseline, "search")]
        if all(t.status != "ok" for t in base_trials):
            if METRIC_MISSED in (base_trials[-1].error or ""):
                return self._finish("failed", error=f"{INCONCLUSIVE}: the metric was never "
                                    f"found: {base_trials[-1].error}; fix --metric")
            return self._finish("failed", error="the baseline (the defaults) failed: "
                                f"{base_trials[-1].error}; fix the workload first")
        kind = getattr(self.objective, "kind", "bench")
        self.space, notes = drop_for_implementation(self.space, self.progress.implementation,
                                                    kind)
        self.space, idle = drop_inert(self.space, getattr(self.objective, "inert", None))
        notes += idle
        self.in_effect = next((t.settings for t in base_trials if t.settings), {})
        asked = self.space
        self.space = self.space.without_values(self.in_effect)
        self.progress.notes = notes
        store.update_tune(self.conn, self.tune_id, implementation=self.progress.implementation,
                          space=self.space.to_json())
        if asked.dimensions and not self.space.dimensions:
            runs = ", ".join(f"{d.knob.name}={self.in_effect[d.knob.name]}"
                             for d in asked.dimensions)
            return self._finish("failed", error=f"the baseline already runs every value asked "
                                f"({runs}): nothing else to measure; give other values")
        if not self.space.dimensions:
            return self._finish("failed", error="no knob is left to tune for this workload "
                                "and MPI-IO implementation: " + "; ".join(notes))
        self._search()
        return self._confirm_and_claim()

    def _encodings(self) -> dict[str, Encoding]:
        return encodings(self.space, self.in_effect)

    def _study(self) -> Any:
        import optuna  # deferred: optuna (~1 s to load) only when a search runs

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.create_study(
            direction="maximize" if self.objective.maximize else "minimize",
            sampler=self._sampler())
        enc = self._encodings()
        dists = {n: e.distribution() for n, e in enc.items()}
        for t in self.done:  # replay what was measured (the baseline, a resumed tune)
            params = {n: t.params.get(n, DEFAULT) for n in enc}
            coded = {n: enc[n].encode(v) for n, v in params.items()}
            if t.phase != "search" or key_of(params) != key_of(t.params) or any(
                    c is None for c in coded.values()):
                continue  # measured on knobs or values the space no longer has
            state = (optuna.trial.TrialState.COMPLETE if t.status == "ok" and t.value is not None
                     else optuna.trial.TrialState.FAIL)
            study.add_trial(optuna.trial.create_trial(
                params=coded, distributions=dists, state=state,
                value=t.value if state == optuna.trial.TrialState.COMPLETE else None))
        return study

    def _sampler(self) -> Any:
        """Optuna's TPE with a joint density over the knobs, a random start of
        TPE_STARTUP_SHARE of the budget (at least 3 proposals)."""
        import optuna  # deferred: optuna (~1 s to load) only when a search runs

        return optuna.samplers.TPESampler(
            seed=self.seed, multivariate=True, group=False, n_ei_candidates=TPE_EI_CANDIDATES,
            n_startup_trials=max(3, int(self.budget * TPE_STARTUP_SHARE)))

    def _search(self) -> None:
        import optuna  # deferred: optuna (~1 s to load) only when a search runs

        study = self._study()
        enc = self._encodings()
        pol = self.policy
        explore = self.budget - pol.reserve(self.budget)
        rng = random.Random(self.seed)
        while self._budget_used() < self.budget:
            again = next_repeat(self._scores(), self.objective.maximize, pol.repeat_top,
                                pol.repeats, pol.rank)
            explored = sum(1 for t in self.done if t.phase == "search")
            proposal = None
            if again is None or explored < explore:
                proposal = self._propose(study, enc, rng)
            if proposal is not None:
                ot, params = proposal
                trial = self._measure(params, "search")
                if trial.status == "ok" and trial.value is not None:
                    study.tell(ot, trial.value)
                else:
                    study.tell(ot, state=optuna.trial.TrialState.FAIL)
            elif again is not None:
                self._measure({**self.space.baseline(), **json.loads(again)}, "repeat")
            else:
                break  # every point measured, the best ones repeated: nothing left to learn
        self.progress.importances = importances(study, self._honoured())

    def _honoured(self) -> list[str]:
        """The knobs whose asked values the library ran, in every run that set them (read
        back): what mattered is told of these only, since the runs of a knob the library
        did not honour measured other settings than its values say."""
        out = []
        for d in self.space.dimensions:
            ran = [t for t in self.done if t.status == "ok"
                   and t.params.get(d.knob.name, DEFAULT) != DEFAULT]
            if not any(d.knob.library_key in t.ignored for t in ran):
                out.append(d.knob.name)
        return out

    def _propose(self, study: Any, enc: dict[str, Encoding],
                 rng: random.Random) -> tuple[Any, dict[str, str]] | None:
        """A configuration not measured yet, from the sampler (a proposal measured before is
        told as failed, which the model ignores, and the sampler is asked again), else drawn
        at random among the unmeasured points; None when every point is measured."""
        import optuna  # deferred: optuna (~1 s to load) only when a search runs

        measured = {key_of(t.params) for t in self.done if t.phase in SEARCH_PHASES}
        dists = {n: e.distribution() for n, e in enc.items()}

        def decode(ot: Any) -> dict[str, str]:
            return {**self.space.baseline(),
                    **{n: enc[n].decode(v) for n, v in ot.params.items()}}

        cover = self._planned_point(measured, rng)
        if cover is not None and all(enc[n].encode(v) is not None for n, v in cover.items()
                                     if n in enc):
            study.enqueue_trial({n: enc[n].encode(cover[n]) for n in enc})
            ot = study.ask(dists)
            return ot, decode(ot)
        for _ in range(MAX_PROPOSALS):
            ot = study.ask(dists)
            params = decode(ot)
            if key_of(params) not in measured and self._feasible(params):
                return ot, params
            study.tell(ot, state=optuna.trial.TrialState.FAIL)
        point = self._unmeasured_point(measured, rng)
        if point is None:
            return None
        study.enqueue_trial({n: enc[n].encode(v) for n, v in point.items()})
        ot = study.ask(dists)
        return ot, decode(ot)

    def _planned_point(self, measured: set[Key],
                       rng: random.Random) -> dict[str, str] | None:
        """The exploration's own next point, before the sampler is asked: a covering point,
        else a recheck of the run right after the baseline (module docstring); None: none."""
        point = self._covering_point(measured, rng)
        return point if point is not None else self._recheck_point(measured, rng)

    def _runs_per_value(self) -> dict[tuple[str, str], int]:
        """(knob, value) -> how many successful search runs measured that value."""
        seen: dict[tuple[str, str], int] = {}
        for t in self.done:
            if t.phase in SEARCH_PHASES and t.status == "ok":
                for d in self.space.dimensions:
                    pair = (d.knob.name, t.params.get(d.knob.name, DEFAULT))
                    seen[pair] = seen.get(pair, 0) + 1
        return seen

    def _exploration_left(self) -> int:
        explore = self.budget - self.policy.reserve(self.budget)
        return explore - sum(1 for t in self.done if t.phase == "search")

    def _draw(self, choices: Mapping[str, Sequence[str]], measured: set[Key],
              rng: random.Random) -> dict[str, str] | None:
        """An unmeasured, feasible configuration drawn from each knob's ``choices``."""
        for _ in range(100):
            p = {name: rng.choice(values) for name, values in choices.items()}
            if key_of(p) not in measured and self._feasible(p):
                return p
        return None

    def _covering_point(self, measured: set[Key],
                        rng: random.Random) -> dict[str, str] | None:
        """An unmeasured, feasible configuration with a value not measured yet for every knob
        that has one (None when every value of every knob has been measured, when the
        exploration runs left cannot measure them all, or no such configuration is found)."""
        choices = self._covering_choices()
        if choices is None:
            return None
        if not self.done:
            return self._draw(choices, measured, rng)
        # the covering draw least like the run before (module docstring: a value first seen
        # right after a run that shares it is seen in the best light)
        last = self.done[-1].params
        draws = [p for p in (self._draw(choices, measured, rng)
                             for _ in range(CONTRAST_DRAWS)) if p]
        return max(draws, key=lambda p: sum(p[n] != last.get(n, DEFAULT) for n in p),
                   default=None)

    def _covering_choices(self) -> dict[str, list[str]] | None:
        """Each knob's values not measured yet (all of its values when it has none left);
        None when every value of every knob has been measured, or when the exploration runs
        left cannot measure them all (then the sampler's own start)."""
        seen = self._runs_per_value()
        unseen = {d.knob.name: [v for v in d.choices if (d.knob.name, v) not in seen]
                  for d in self.space.dimensions}
        if not any(unseen.values()) or \
                max(len(v) for v in unseen.values()) > self._exploration_left():
            return None
        return {d.knob.name: unseen[d.knob.name] or list(d.choices)
                for d in self.space.dimensions}

    def _recheck_point(self, measured: set[Key], rng: random.Random) -> dict[str, str] | None:
        """Once the space is covered, the values whose only run was the one right after the
        baseline, when that run was one of the slower half of the exploration runs, get one
        more run together, in another configuration (the run's other knobs drawn again): on
        a disk the run after a heavy baseline can pay for the baseline's writes (docs/tune.md,
        Limits), and no later run follows anything as heavy; one slow run would otherwise
        hide those values from the model for good. When each of its values is alone, the
        point keeping them all is itself, so the knob whose other values were measured least
        (the largest knob, each of whose values the covering start ran once) is drawn again:
        its value is no more hidden than its siblings are. None when no value is left so,
        or the exploration has no run left."""
        runs = self._ok_search_runs()
        if not runs or self._exploration_left() <= 0:
            return None
        base = key_of(self.space.baseline())
        first = next((t for t in runs if key_of(t.params) != base), None)
        if first is None or not self._slow(first, runs):
            return None
        seen = self._runs_per_value()
        mine = {d.knob.name: first.params.get(d.knob.name, DEFAULT) for d in self.space.dimensions}
        alone = {n for n, v in mine.items() if seen[(n, v)] == 1}
        if len(alone) == len(mine) > 1:
            alone.discard(self._thinnest_siblings(mine, seen))
        return self._redraw_around(mine, alone, measured, rng) if alone else None

    def _ok_search_runs(self) -> list[store.Trial]:
        return [t for t in self.done if t.phase == "search" and t.status == "ok"
                and t.value is not None]

    def _slow(self, trial: store.Trial, runs: Sequence[store.Trial]) -> bool:
        """``trial`` ran in the slower half of ``runs`` (below their median, strictly)."""
        mid = median(t.value for t in runs if t.value is not None)
        value = trial.value or 0.0
        return value < mid if self.objective.maximize else value > mid

    def _redraw_around(self, point: Mapping[str, str], keep: set[str], measured: set[Key],
                       rng: random.Random) -> dict[str, str] | None:
        """An unmeasured configuration with ``point``'s values of the knobs in ``keep``, the
        other knobs drawn again."""
        return self._draw({d.knob.name: [point[d.knob.name]] if d.knob.name in keep
                           else d.choices for d in self.space.dimensions}, measured, rng)

    def _thinnest_siblings(self, point: Mapping[str, str],
                           seen: Mapping[tuple[str, str], int]) -> str:
        """The knob whose other values (than ``point``'s) have the fewest runs on average."""
        def sibling_runs(d: Any) -> float:
            others = [v for v in d.choices if v != point[d.knob.name]]
            return sum(seen.get((d.knob.name, v), 0) for v in others) / len(others)
        return min(self.space.dimensions, key=sibling_runs).knob.name

    def _unmeasured_point(self, measured: set[Key],
                          rng: random.Random) -> dict[str, str] | None:
        dims = self.space.dimensions
        if self.space.size() <= 4096:
            points = [dict(zip(self.space.names, combo))
                      for combo in itertools.product(*(d.choices for d in dims))]
            fresh = [p for p in points if key_of(p) not in measured and self._feasible(p)]
            return rng.choice(fresh) if fresh else None
        for _ in range(1000):
            p = {d.knob.name: rng.choice(d.choices) for d in dims}
            if key_of(p) not in measured and self._feasible(p):
                return p
        return None

    def _feasible(self, params: dict[str, str]) -> bool:
        """A configuration the objective knows cannot run (e.g. a hint that hangs the
        workload) is not measured and costs no budget; the note says it was skipped."""
        check = getattr(self.objective, "infeasible", None)
        why = check(params) if check else None
        if why:
            note = f"not measured: {why}"
            if note not in self.progress.notes:
                self.progress.notes.append(note)
        return not why

    def _confirm_and_claim(self) -> TuneResult:
        best = self._best()
        baseline = self.space.baseline()
        if best is None:
            return self._finish("failed", error="no trial succeeded")
        if set(self._scores()) <= {key_of(baseline)}:
            return self._nothing_but_the_defaults()
        winner, left_out = self._acting(json.loads(best[0]))
        self._leave_out(winner, left_out)
        if key_of(winner) == key_of(baseline) or self.confirm < 2:
            if key_of(winner) != key_of(baseline):
                note = "confirmation skipped (--confirm below 2)"
            elif left_out:
                note = ("the search's best differs from the defaults only in knobs that do not "
                        "act here: keep the defaults")
            else:
                note = "no configuration beat the defaults in the search"
            self.progress.notes.append(note)
            return self._finish("done")
        first = self._confirm_pair(winner, batch=0)
        if first is None:
            return self._finish("failed", error="too many confirmation runs failed to judge")
        confirmed = [Confirmed(winner, left_out, best[1], *first)]
        runner = (self._runner_up(best[0], winner)
                  if self._fell_short(best[1], first[1]) else None)
        if runner is not None:
            second = self._confirm_pair(runner[0], batch=1)
            if second is not None:
                confirmed.append(Confirmed(runner[0], runner[1], runner[2], *second))
        # two candidates confirmed and the better kept: each claim at a corrected level
        level = 1 - (1 - CONFIDENCE) / len(confirmed)
        try:
            for c in confirmed:
                c.claim = compare(c.baseline_runs, c.runs, self.objective.maximize,
                                  seed=self.seed, confidence=level)
        except ValueError as exc:  # e.g. a --metric that can be zero or negative
            return self._finish("failed", error=f"cannot judge the winner: {exc}")
        kept = max(confirmed, key=lambda c: c.claim.speedup if c.claim else 0.0)
        kept.kept = True
        self._leave_out(kept.params, kept.left_out)
        self.progress.claim = kept.claim
        self.progress.baseline_score = median(kept.baseline_runs)
        self.progress.winner_score = median(kept.runs)
        self.progress.confirmed = [c.to_json() for c in confirmed]
        self._note_drift(confirmed)
        return self._finish("done")

    def _nothing_but_the_defaults(self) -> TuneResult:
        """Every trial of other settings failed, so nothing but the defaults has a score: no
        "what mattered" (it would be read from one configuration). A trial that crashed or ran
        past --time-limit says its settings are worse than the defaults: the defaults stay,
        said so. A trial whose metric was never found says nothing about its speed: the tune
        is inconclusive (no winner), with the regex's miss and the program's closest line."""
        failed = [t.error or t.status for t in self.done
                  if t.phase in SEARCH_PHASES and t.status != "ok"]
        self.progress.importances = {}
        missed = [e for e in failed if METRIC_MISSED in e]
        if not missed:
            why = max(set(failed), key=failed.count) if failed else "none was measured"
            self.progress.notes.append(f"every other configuration failed ({len(failed)} "
                                       f"trial(s)), keep the defaults: {why}")
            return self._finish("done")
        self.progress.winner, self.progress.winner_score = {}, None
        return self._finish("failed", error=f"{INCONCLUSIVE}: the metric was never found in "
                            f"a run of other settings ({len(missed)} of {len(failed)} failed "
                            f"trial(s)): {max(set(missed), key=missed.count)}")

    def _confirm_pair(self, candidate: dict[str, str],
                      batch: int) -> tuple[list[float], list[float]] | None:
        """``confirm`` runs each of the baseline and ``candidate`` in a balanced order
        (ABBA: drift and what a run leaves to the next hit both alike): the baseline's
        values and the candidate's, None when fewer than 2 of either succeeded. Batch 0 is
        the winner's, batch 1 the runner-up's; a resumed tune keeps the runs it has (a
        batch is the next 2 x ``confirm`` confirmation trials, in order)."""
        sides = {"baseline": self.space.baseline(), "candidate": candidate}
        n = 2 * self.confirm
        mine = [t for t in self.done if t.phase == "confirm"][n * batch:n * (batch + 1)]
        samples: dict[str, list[float]] = {"baseline": [], "candidate": []}
        counts = {"baseline": 0, "candidate": 0}

        def take(side: str, t: store.Trial) -> None:
            counts[side] += 1
            if t.status == "ok" and t.value is not None:
                samples[side].append(t.value)

        for t in mine:
            take("candidate" if key_of(t.params) == key_of(candidate) else "baseline", t)
        while min(counts.values()) < self.confirm:
            pair = min(counts.values())
            for side in ("baseline", "candidate") if pair % 2 == 0 else ("candidate", "baseline"):
                if counts[side] < self.confirm:
                    take(side, self._measure(sides[side], "confirm"))
        if len(samples["baseline"]) < 2 or len(samples["candidate"]) < 2:
            return None
        return samples["baseline"], samples["candidate"]

    def _fell_short(self, searched: float, confirmed: Sequence[float]) -> bool:
        """The winner's confirmation median DRIFT_NOTE times worse than its search median:
        the search saw it in a light that did not hold (a two-valued point seen fast twice,
        a run sped by the one before it), so the runner-up deserves a look."""
        ran = median(confirmed)
        if searched <= 0 or ran <= 0:
            return False
        worse = searched / ran if self.objective.maximize else ran / searched
        return worse >= DRIFT_NOTE

    def _runner_up(self, winner_key: Key, winner: dict[str, str]
                   ) -> tuple[dict[str, str], dict[str, str], float] | None:
        """The best of the search's other candidates that beat the defaults there (the winner
        rule, among the most measured), counted by the knobs that act: one that is the
        winner or the defaults once its idle knobs are left out is no alternative. With its
        left-out knobs and its search median."""
        scores = dict(self._scores())
        scores.pop(winner_key, None)
        base = scores.pop(key_of(self.space.baseline()), None)
        sign = 1.0 if self.objective.maximize else -1.0
        if base:  # one the defaults beat in the search is no alternative either
            scores = {k: v for k, v in scores.items() if sign * median(v) > sign * median(base)}
        skip = {key_of(winner), key_of(self.space.baseline())}
        while (pick := pick_winner(scores, self.objective.maximize, self.policy.repeats,
                                   self.policy.rank)) is not None:
            params, left_out = self._acting(json.loads(pick[0]))
            if key_of(params) not in skip:
                return params, left_out, pick[1]
            scores.pop(pick[0])
        return None

    def _note_drift(self, confirmed: Sequence[Confirmed]) -> None:
        """A winner that runs far from its search speed in the confirmation was picked on
        runs that do not hold: its speed depends on what ran before it (a search measures
        similar points one after another; the confirmation alternates with the defaults),
        or the machine drifted. The claim stands on the confirmation runs; the note says
        why it is smaller (or larger) than the search promised, and which runner-up was
        confirmed too."""
        first = confirmed[0]
        ran = median(first.runs)
        if first.searched <= 0 or ran <= 0:
            return
        ratio = ran / first.searched
        if 1 / DRIFT_NOTE < ratio < DRIFT_NOTE:
            return
        unit = getattr(self.objective, "unit", "")
        unit = f" {unit}" if unit else ""
        note = (f"the search's best ran {ran:.4g}{unit} (median) in the confirmation against "
                f"{first.searched:.4g}{unit} in the search ({ratio:.2f}x): its speed depends on "
                "what ran before it, or the machine drifted")
        if len(confirmed) > 1:
            other = confirmed[1]
            config = " ".join(f"{k}={v}" for k, v in other.params.items() if v != DEFAULT)
            kept = "it" if other.kept else "the search's best"
            note += (f"; so the runner-up ({config}) was confirmed too: "
                     f"{median(other.runs):.4g}{unit} against {other.searched:.4g}{unit} in "
                     f"the search. Kept: {kept}, the larger speed-up over the defaults; both "
                     f"claims at {other.claim.confidence * 100 if other.claim else 0:.3g}% "
                     "confidence, since two were confirmed")
        else:
            note += ("; the claim rests on the confirmation runs, and a re-run of the tune "
                     "(another --seed) may pick another configuration")
        self.progress.notes.append(note)

    def _acting(self, params: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """A configuration with the knobs that do not act left at their default, and those
        knobs -> why. A hint the library did not honour in the configuration's own runs is
        not part of it, nor is a knob that cannot act on its calls (the objective's
        ``inert``: ROMIO's collective buffering when every call is independent), whatever
        the search's noisy runs made of it: the fix files carry only what acts."""
        params = {**self.space.baseline(), **params}
        ignored = {i for t in self.done if key_of(t.params) == key_of(params) for i in t.ignored}
        inert = getattr(self.objective, "inert", None)
        idle = set(inert(params)) if inert else set()
        left_out: dict[str, str] = {}
        for d in self.space.dimensions:
            value = params.get(d.knob.name, DEFAULT)
            if value == DEFAULT:
                continue
            if d.knob.is_default(value):
                left_out[d.knob.name] = f"{value} is the library's own default"
            elif d.knob.library_key in ignored:
                left_out[d.knob.name] = "the library did not honour it (read back)"
            elif d.knob.name in idle:
                left_out[d.knob.name] = ("it acts inside collective MPI-IO calls only, and the "
                                         "winner's calls are independent")
        return {k: (DEFAULT if k in left_out else v) for k, v in params.items()}, left_out

    def _leave_out(self, winner: Mapping[str, str], left_out: Mapping[str, str]) -> None:
        """The winner and the knobs of the search's pick left out of it (_finish notes them:
        a second look may keep another configuration)."""
        self.progress.left_out = dict(left_out)
        self.progress.winner = {k: v for k, v in winner.items() if v != DEFAULT}

    def _finish(self, status: str, error: str | None = None) -> TuneResult:
        self.progress.status = status
        self.progress.error = error
        self.progress.space = self.space.to_json()
        self.progress.notes += [f"{k}: {why}, left out"
                                for k, why in self.progress.left_out.items()]
        if status == "done" and self.progress.claim is not None \
                and not self.progress.claim.significant:
            self.progress.notes.append("the winner is not significantly faster: "
                                       "keep the defaults")
        return self.progress


