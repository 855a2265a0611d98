"""Searches replayed from exhaustive runs: how good is a search policy, for no new run.

An exhaustive measurement (every configuration of a space, each run several times; written
by bench/tune_efficiency) holds what any search of that space could see. A replayed search is
the real :class:`~iolab.tune.search.Tuner` (the same proposals, repeats and winner rule as
``iolab tune``) whose objective draws each run's value from the recorded runs of the
configuration asked for, seeded. Its winner is scored by the exhaustive median of the
configuration it picked, as a share of the exhaustive best. Cheap (CPU only), so a policy is
judged over tens of seeds; bench/tune_efficiency and bench/tune_variants use it.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.tune import store
from iolab.tune.objective import TrialOutcome
from iolab.tune.search import Key, Policy, Tuner, key_of
from iolab.tune.space import DEFAULT, SearchSpace, build_space


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
    kind: str = "bench"
    unit: str = "MiB/s"
    maximize: bool = True

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.queues: dict[Key, list[float]] = {}
        self.last: Mapping[str, str] | None = None  # the run before this one

    def evaluate(self, params: Mapping[str, str], label: str) -> TrialOutcome:
        key = key_of(params)
        runs = self.samples.get(key)
        if not runs:
            return TrialOutcome("failed", None, 0.0, error="not measured in the exhaustive runs")
        queue = self.queues.setdefault(key, [])
        if not queue:
            queue.extend(self.rng.sample(list(runs), len(runs)))
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

    def to_json(self) -> dict[str, Any]:
        return {"kind": "replay"}


@dataclass(frozen=True)
class Exhaustive:
    """Every configuration's recorded runs, and the settings the defaults ran with."""

    samples: dict[Key, list[float]]
    settings: dict[str, str]

    @classmethod
    def load(cls, path: Path) -> Exhaustive:
        """bench/tune_efficiency's exhaustive.json ({"samples": {key: [runs]}, "settings"}),
        or an older plain {key: value} map (one run each, settings unknown)."""
        doc = json.loads(path.read_text())
        raw = doc["samples"] if "samples" in doc else doc
        samples = {k: [float(x) for x in (v if isinstance(v, list) else [v])]
                   for k, v in raw.items()}
        return cls(samples, dict(doc.get("settings", {})) if "samples" in doc else {})

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
class Replayed:
    pick: Key  # the winner
    measured: frozenset[Key]  # every configuration the search ran


def replay(ex: Exhaustive, policy: Policy, budget: int, seeds: Sequence[int], conn: Any,
           space: SearchSpace | None = None, transient: float = 0.0,
           carry_over: float = 1.0,
           after_same: tuple[str, str, float] | None = None) -> list[Replayed]:
    """Each seed's replayed search (confirmation off): what it picked, what it ran;
    ``transient``: the chance that a run is a transient at half its speed; ``carry_over``:
    the share of its speed the run right after the baseline keeps; ``after_same``: see
    :class:`ReplayObjective`."""
    space = space or ex.space()
    out = []
    for seed in seeds:
        objective = ReplayObjective(ex.samples, ex.settings, seed, transient, carry_over,
                                    after_same)
        tid = store.create_tune(conn, ["replay"], objective.to_json(), space.to_json(),
                                budget, 0, seed)
        result = Tuner(objective, space, budget, 0, seed, conn, tid, policy=policy).run()
        out.append(Replayed(key_of(result.winner),
                            frozenset(key_of(t.params) for t in store.trials(conn, tid))))
    return out
