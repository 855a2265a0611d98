"""iolab tune's research switches: every alternative bench/tune_variants replays, outside the
product. :class:`ResearchPolicy` is iolab tune's :class:`~iolab.tune.policy.Policy` with the
switches; :class:`ResearchTuner` is its :class:`~iolab.tune.search.Tuner` obeying them. At
their defaults both run exactly as ``iolab tune`` does (tests/tune/test_tunelab.py checks it
trial by trial).

The switches, and what replay found (iolab.tune.search's docstring tells the defaults):
- ``sampler="random"``: random search, the baseline of bench/tune_efficiency (no covering
  start: random stays random), the budget spent and the winner picked the same way;
- ``startup_share``, ``multivariate``, ``group``, ``ei_candidates``: Optuna TPE's settings;
- ``repeat_share``: the most of the budget kept for repeats;
- ``cover`` (on): the covering start; ``contrast`` (on): each covering run differs from the
  run before it where it can;
- ``recheck_first`` (on): the values seen only in the slow run right after the baseline run
  again; ``recheck`` (off: by replay it guards the worst seed against a transient but costs
  the mean): so for every slow run;
- ``second_look`` (on): the runner-up confirmed too when the winner's speed did not hold;
- ``rule``: any winner statistic of :data:`tunelab.rules.ALL_RULES`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from iolab.tune.policy import REPEAT_SHARE, TPE_EI_CANDIDATES, TPE_STARTUP_SHARE, Policy
from iolab.tune.search import Key, Tuner
from iolab.tune.selection import repeat_reserve
from iolab.tune.space import DEFAULT
from tunelab.rules import ALL_RULES, rank_scores


@dataclass(frozen=True)
class ResearchPolicy(Policy):
    """A policy with every switch (module docstring); its defaults are iolab tune's."""

    RULES: ClassVar[tuple[str, ...]] = ALL_RULES
    sampler: str = "tpe"  # or "random"
    repeat_share: float = REPEAT_SHARE
    startup_share: float = TPE_STARTUP_SHARE
    multivariate: bool = True
    group: bool = False
    ei_candidates: int = TPE_EI_CANDIDATES
    cover: bool = True
    recheck: bool = False
    recheck_first: bool = True
    contrast: bool = True
    second_look: bool = True

    def reserve(self, budget: int) -> int:
        return repeat_reserve(budget, self.repeat_top, self.repeats, self.repeat_share)

    def rank(self, scores: Mapping[Key, Sequence[float]], maximize: bool) -> dict[Key, float]:
        return rank_scores(scores, maximize, self.rule)

    def to_json(self) -> dict[str, Any]:
        """The same keys, in the same order, as iolab tune stores."""
        return {k: getattr(self, k) for k in Policy().to_json()}


class ResearchTuner(Tuner):
    """iolab tune's Tuner, obeying a :class:`ResearchPolicy`'s switches."""

    policy: ResearchPolicy

    def __init__(self, *args: Any, policy: ResearchPolicy | None = None, **kwargs: Any) -> None:
        super().__init__(*args, policy=policy or ResearchPolicy(), **kwargs)

    def _sampler(self) -> Any:
        import optuna  # deferred: optuna (~1 s to load) only when a search runs

        pol = self.policy
        if pol.sampler == "random":
            return optuna.samplers.RandomSampler(seed=self.seed)
        return optuna.samplers.TPESampler(
            seed=self.seed, multivariate=pol.multivariate, group=pol.group,
            n_ei_candidates=pol.ei_candidates,
            n_startup_trials=max(3, int(self.budget * pol.startup_share)))

    def _planned_point(self, measured: set[Key],
                       rng: random.Random) -> dict[str, str] | None:
        pol = self.policy
        if not pol.cover or pol.sampler != "tpe":  # random stays random
            return None
        point = self._covering_point(measured, rng)
        if point is None and pol.recheck:
            return self._recheck_any(measured, rng)
        if point is None and pol.recheck_first:
            return self._recheck_point(measured, rng)
        return point

    def _covering_point(self, measured: set[Key],
                        rng: random.Random) -> dict[str, str] | None:
        if self.policy.contrast:
            return super()._covering_point(measured, rng)
        choices = self._covering_choices()
        return None if choices is None else self._draw(choices, measured, rng)

    def _recheck_any(self, measured: set[Key], rng: random.Random) -> dict[str, str] | None:
        """``recheck``: the values whose only run was any run of the slower half of the
        exploration runs get one more run together, in another configuration."""
        runs = self._ok_search_runs()
        if not runs or self._exploration_left() <= 0:
            return None
        seen = self._runs_per_value()
        for t in runs:
            if not self._slow(t, runs):
                continue
            mine = {d.knob.name: t.params.get(d.knob.name, DEFAULT)
                    for d in self.space.dimensions}
            alone = {n for n, v in mine.items() if seen[(n, v)] == 1}
            point = self._redraw_around(mine, alone, measured, rng) if alone else None
            if point is not None:
                return point
        return None

    def _fell_short(self, searched: float, confirmed: Sequence[float]) -> bool:
        return self.policy.second_look and super()._fell_short(searched, confirmed)

