"""Searches replayed from exhaustive runs: how good is a search policy, for no new run.

An exhaustive measurement (every configuration of a space, each run several times; written
by bench/tune_efficiency) holds what any search of that space could see. A replayed search is
the real :class:`~iolab.tune.search.Tuner` (the same proposals, repeats and winner rule as
``iolab tune``; :class:`~tunelab.policy.ResearchTuner` with a policy's switches) whose
objective draws each run's value from the recorded runs of the configuration asked for,
seeded. Its winner is scored by the exhaustive median of the
configuration it picked, as a share of the exhaustive best. Cheap (CPU only), so a policy is
judged over tens of seeds; bench/tune_efficiency and bench/tune_variants use it.

A run's speed can depend on the run before it (on tmpfs at 1 GiB a rank a file-view run ran
up to 4x its median right after another file-view run, and down to 0.13x after a run
without a view). An exhaustive set measured in shuffled rounds records the run before each
of its runs; :func:`order_effect` finds the knob whose value in the run before matters
most, and a replay in recorded order (``in_order``) draws each run from the recorded runs
whose run before agreed with the replayed one on that knob, so a policy is judged with
the order effects the machine really had.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab.results import tunes as store
from iolab.tune.objective import TrialOutcome
from iolab.tune.search import Key, key_of
from iolab.tune.space import DEFAULT, SearchSpace, build_space
from tunelab.policy import ResearchPolicy, ResearchTuner


def is_baseline(params: Mapping[str, str]) -> bool:
    return all(v == DEFAULT for v in params.values())


@dataclass
class ReplayObjective:
    """Each run's value drawn from the recorded runs of the point asked for, without
    replacement (a seeded order per point, starting again when all were drawn): a real
    re-measurement is a new run, never the same lucky one twice. The baseline returns the
    settings the real baseline ran with, so the tuner sees the same space (and the same
    ordinal knobs) as in a real tune."""

    samples: Mapping[Key, Sequence[float]]
    settings: Mapping[str, str]
    seed: int = 0
    transient: float = 0.0  # the chance that a run is a transient at half its speed
    carry_over: float = 1.0  # the run right after the baseline runs at this share of its speed
    # (knob, value, factor): a run with knob=value right after another such run runs at
    # factor x its speed (on tmpfs at 1 GiB a rank, a file-view run after a file-view run:
    # up to 3.8x), so a policy is also judged on the order it measures things in
    after_same: tuple[str, str, float] | None = None
    # (knob, key -> per recorded run: did the run before it have the same value of knob):
    # each run is drawn among the recorded runs whose run before agreed in the same way
    in_order: tuple[str, Mapping[Key, Sequence[bool]]] | None = None
    kind: str = "bench"
    unit: str = "MiB/s"
    maximize: bool = True

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.queues: dict[tuple[Key, bool | None], list[float]] = {}
        self.last: Mapping[str, str] | None = None  # the run before this one

    def evaluate(self, params: Mapping[str, str], label: str) -> TrialOutcome:
        key = key_of(params)
        runs = self.samples.get(key)
        if not runs:
            return TrialOutcome("failed", None, 0.0, error="not measured in the exhaustive runs")
        queue = self._queue(key, params, runs)
        base = is_baseline(params)
        speed = 1.0  # this run's speed as a share of the recorded run's
        if self.transient and self.rng.random() < self.transient:
            speed *= 0.5
        if self.last is not None and is_baseline(self.last):  # a disk still busy with it
            speed *= self.carry_over
        if self.after_same and self.last is not None:
            knob, same, factor = self.after_same
            if params.get(knob) == same and self.last.get(knob) == same:
                speed *= factor
        self.last = dict(params)
        value = queue.pop()
        value = value * speed if self.maximize else value / speed
        return TrialOutcome("ok", value, 0.0, settings=dict(self.settings) if base else {})

    def _queue(self, key: Key, params: Mapping[str, str],
               runs: Sequence[float]) -> list[float]:
        """The runs of ``key`` still to draw, refilled in a seeded order when empty: in
        recorded order, only those whose run before agreed with this run's run before on
        the order knob (all of them when the point has none such)."""
        context: bool | None = None
        if self.in_order is not None and self.last is not None:
            knob, same = self.in_order
            want = self.last.get(knob, DEFAULT) == params.get(knob, DEFAULT)
            flags = same.get(key, ())
            if len(flags) == len(runs) and want in flags:
                context = want
                runs = [v for v, f in zip(runs, flags) if f == want]
        queue = self.queues.setdefault((key, context), [])
        if not queue:
            queue.extend(self.rng.sample(list(runs), len(runs)))
        return queue

    def to_json(self) -> dict[str, Any]:
        return {"kind": "replay"}


@dataclass(frozen=True)
class Exhaustive:
    """Every configuration's recorded runs, the settings the defaults ran with, and (sets
    written since session 11) the configuration run right before each recorded run (None:
    the first run)."""

    samples: dict[Key, list[float]]
    settings: dict[str, str]
    before: dict[Key, list[Key | None]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Exhaustive:
        """bench/tune_efficiency's exhaustive.json ({"samples": {key: [runs]}, "settings",
        "before": {key: [the key run before each run]}}), or an older plain {key: value}
        map (one run each, settings unknown)."""
        doc = json.loads(path.read_text())
        raw = doc["samples"] if "samples" in doc else doc
        samples = {k: [float(x) for x in (v if isinstance(v, list) else [v])]
                   for k, v in raw.items()}
        if "samples" not in doc:
            return cls(samples, {})
        before = {k: list(v) for k, v in doc.get("before", {}).items()
                  if len(v) == len(samples.get(k, ()))}
        return cls(samples, dict(doc.get("settings", {})), before)

    def medians(self) -> dict[Key, float]:
        return {k: statistics.median(v) for k, v in self.samples.items() if v}

    def space(self) -> SearchSpace:
        """The space the keys span: each knob with the values seen away from its default."""
        values: dict[str, set[str]] = {}
        for k in self.samples:
            for name, v in json.loads(k).items():
                values.setdefault(name, set()).add(v)
        specs = [f"{n}={','.join(sorted(v))}" for n, v in sorted(values.items())]
        return build_space([], specs, None, "romio")


@dataclass(frozen=True)
class OrderEffect:
    """The strongest order effect of a set: a run with ``knob`` = ``value`` right after
    another run with that value runs ``ratio`` x as fast (median of each run's share of its
    point's median) as after a run with another value."""

    knob: str
    value: str
    ratio: float
    p_value: float  # Mann-Whitney, times the number of comparisons made (Bonferroni)
    same: dict[Key, list[bool]]  # per recorded run: the run before had the same value of knob


def order_effect(ex: Exhaustive, alpha: float = 0.01) -> OrderEffect | None:
    """The strongest order effect of a set whose runs know the run before them: for each
    knob and each of its values, the runs of points with that value after a run with the
    same value against those after a run with another (each run as a share of its point's
    median). None when no comparison is significant at ``alpha`` or the set has no order."""
    # deferred: scipy (~0.3 s to load) only when statistics are computed
    from scipy.stats import mannwhitneyu

    if not ex.before:
        return None
    med = ex.medians()
    found: list[tuple[float, float, str, str, dict[Key, list[bool]]]] = []
    for knob in sorted({n for k in ex.samples for n in json.loads(k)}):
        same: dict[Key, list[bool]] = {}
        split: dict[tuple[str, bool], list[float]] = {}
        for key, runs in ex.samples.items():
            mine = json.loads(key).get(knob, DEFAULT)
            flags = same.setdefault(key, [])
            for v, prev in zip(runs, ex.before.get(key, [])):
                flags.append(prev is not None and json.loads(prev).get(knob, DEFAULT) == mine)
                if prev is not None and med.get(key):
                    split.setdefault((mine, flags[-1]), []).append(v / med[key])
        for value in sorted({m for m, _ in split}):
            after_same, after_other = split.get((value, True), []), split.get((value, False), [])
            if min(len(after_same), len(after_other)) >= 5:
                p = float(mannwhitneyu(after_same, after_other).pvalue)
                ratio = statistics.median(after_same) / statistics.median(after_other)
                found.append((p, ratio, knob, value, same))
    tests = len(found)
    sig = [f for f in found if f[0] * tests < alpha]
    if not sig:
        return None
    p, ratio, knob, value, same = max(sig, key=lambda f: abs(math.log(f[1])))
    return OrderEffect(knob, value, ratio, min(1.0, p * tests), same)


@dataclass(frozen=True)
class Replayed:
    pick: Key  # the winner
    measured: frozenset[Key]  # every configuration the search ran


def replay(ex: Exhaustive, policy: ResearchPolicy, budget: int, seeds: Sequence[int], conn: Any,
           space: SearchSpace | None = None, transient: float = 0.0,
           carry_over: float = 1.0,
           after_same: tuple[str, str, float] | None = None,
           in_order: bool = False, confirm: int = 0) -> list[Replayed]:
    """Each seed's replayed search (``confirm`` runs a side in the confirmation; 0: off,
    the search's pick): what it picked, what it ran;
    ``transient``: the chance that a run is a transient at half its speed; ``carry_over``:
    the share of its speed the run right after the baseline keeps; ``after_same``: see
    :class:`ReplayObjective`; ``in_order``: with the set's own order effect, if it has
    one (:func:`order_effect`)."""
    space = space or ex.space()
    effect = order_effect(ex) if in_order else None
    order = (effect.knob, effect.same) if effect else None
    out = []
    for seed in seeds:
        objective = ReplayObjective(ex.samples, ex.settings, seed, transient, carry_over,
                                    after_same, order)
        tid = store.create_tune(conn, ["replay"], objective.to_json(), space.to_json(),
                                budget, confirm, seed)
        result = ResearchTuner(objective, space, budget, confirm, seed, conn, tid,
                               policy=policy).run()
        out.append(Replayed(key_of(result.winner),
                            frozenset(key_of(t.params) for t in store.trials(conn, tid))))
    return out
