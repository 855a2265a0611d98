"""The winner statistics iolab tune does not use, kept for bench/tune_variants to replay
beside its own (iolab.tune.selection: "moderated", and "median" for tunes stored before).

- lower bound: the median of the log values minus one standard error, sigma2 the pooled
  within-configuration variance of the repeated ones (with a weak prior), for every
  configuration;
- shrunk: the median g pulled toward what the configuration's knobs predict (empirical
  Bayes). The knobs' *main effects* are fitted by median polish over every measured
  configuration, each configuration's prediction leaving it out (its own lucky run cannot
  vouch for itself); the weights are n / sigma2 for its runs and 1 / tau2 for the
  prediction, tau2 how far configurations stray from the additive model (robust estimate,
  at least 10%). "shrunk-down" only ever lowers; "cautious" lowers, then takes the
  standard error off.

By replay (bench/tune_variants) the lower bound did at least as well as the plain median on
every set, the knob-model rules no better than the lower bound, and the moderated lower bound
as well as the lower bound (session 13, six sets, 60 seeds each); on the stored searches of a
real O_DIRECT run the moderated one passed over two of the three two-valued picks, so iolab
tune uses it. The model is a statistic to rank measured configurations, never a proposer.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from statistics import median

from iolab.tune.selection import (
    DEFAULT,
    RULES,
    Key,
    Ranker,
    goodness,
    pooled_variance,
)
from iolab.tune.selection import rank_scores as product_rank_scores

TAU2_FLOOR = 0.10 ** 2  # the additive model is never taken as closer than 10%
CHI2_1_MEDIAN = 0.455  # the median of a squared standard normal
POLISH_ROUNDS = 6  # median polish sweeps (it settles in a few)

# iolab tune's rules first (its own is ALL_RULES[0]), then the ones only replays use
RESEARCH_RULES = ("lower", "shrunk", "shrunk-down", "cautious")
ALL_RULES = (RULES[0], RESEARCH_RULES[0], *RULES[1:], *RESEARCH_RULES[1:])


def additive_fit(params: Sequence[Mapping[str, str]],
                 centre: Sequence[float]) -> tuple[float, dict[tuple[str, str], float]]:
    """The knobs' main effects by median polish (Tukey's, over as many knobs as there are):
    each knob value's effect is the median, over the configurations with that value, of
    what the other effects leave, and the common level is taken out of each knob's effects.
    Medians, not least squares: one lucky run cannot drag its knobs' effects with it."""
    names = sorted({n for p in params for n in p})
    level = statistics.median(centre)
    effect: dict[tuple[str, str], float] = {}

    def rest(i: int, skip: str) -> float:
        return centre[i] - level - sum(effect.get((n, params[i].get(n, DEFAULT)), 0.0)
                                       for n in names if n != skip)

    for _ in range(POLISH_ROUNDS):
        for name in names:
            values = {p.get(name, DEFAULT) for p in params}
            for v in values:
                effect[(name, v)] = statistics.median(
                    rest(i, name) for i, p in enumerate(params) if p.get(name, DEFAULT) == v)
            shift = statistics.median(effect[(name, v)] for v in values)
            level += shift
            for v in values:
                effect[(name, v)] -= shift
    return level, effect


def _params(key: Key) -> dict[str, str]:
    """The knobs of a configuration key; a key that is no JSON object (a caller's own
    label) is a knob value of its own, which nothing else shares."""
    try:
        doc = json.loads(key)
    except ValueError:
        doc = None
    return doc if isinstance(doc, dict) else {"(configuration)": key}


def loo_predictions(keys: Sequence[Key], centre: Sequence[float]) -> list[float | None]:
    """Each configuration's g as the others' main effects predict it (left out: its own
    runs cannot vouch for it); None when one of its knob values is seen nowhere else."""
    params = [_params(k) for k in keys]
    out: list[float | None] = []
    for i, p in enumerate(params):
        others = [q for j, q in enumerate(params) if j != i]
        seen = {(n, q.get(n, DEFAULT)) for q in others for n in {*q, *p}}
        names = {*p, *(n for q in others for n in q)}
        if len(others) < 3 or any((n, p.get(n, DEFAULT)) not in seen for n in names):
            out.append(None)
            continue
        level, effect = additive_fit(others, [c for j, c in enumerate(centre) if j != i])
        out.append(level + sum(effect.get((n, p.get(n, DEFAULT)), 0.0) for n in names))
    return out


def shrunk_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                  down_only: bool = False) -> dict[Key, float]:
    """Each configuration's score, higher is better: its median g pulled toward the
    main-effects prediction (module docstring); the plain median (negated when lower is
    better) when the values have no logarithm."""
    g = goodness(scores, maximize)
    if g is None:
        sign = 1.0 if maximize else -1.0
        return {k: sign * median(v) for k, v in scores.items() if v}
    keys = sorted(g)
    n = [len(g[k]) for k in keys]
    centre = [median(g[k]) for k in keys]
    sigma2 = pooled_variance(list(g.values()))
    pred = loo_predictions(keys, centre)
    # how far configurations stray from the model beyond their own noise (robust: a
    # median, so the lucky run being judged does not widen its own prior)
    excess = [(c - p) ** 2 - sigma2 / m for c, p, m in zip(centre, pred, n) if p is not None]
    tau2 = max(TAU2_FLOOR, statistics.median(excess) / CHI2_1_MEDIAN) if excess else 0.0
    out = {}
    for k, c, p, m in zip(keys, centre, pred, n):
        if p is None:
            out[k] = c
            continue
        out[k] = (m / sigma2 * c + p / tau2) / (m / sigma2 + 1.0 / tau2)
        if down_only:
            out[k] = min(out[k], c)
    return out


def lower_bound_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                       z: float = 1.0) -> dict[Key, float]:
    """median g minus z standard errors (pooled noise over the configuration's runs): a
    configuration measured once pays for it."""
    g = goodness(scores, maximize)
    if g is None:
        sign = 1.0 if maximize else -1.0
        return {k: sign * median(v) for k, v in scores.items() if v}
    sigma2 = pooled_variance(list(g.values()))
    return {k: median(v) - z * math.sqrt(sigma2 / len(v)) for k, v in g.items()}


def cautious_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                    z: float = 1.0) -> dict[Key, float]:
    """Both penalties: lowered toward the knobs' prediction (never raised), then z standard
    errors off for few runs."""
    g = goodness(scores, maximize)
    if g is None:
        return lower_bound_scores(scores, maximize)
    down = shrunk_scores(scores, maximize, down_only=True)
    sigma2 = pooled_variance(list(g.values()))
    return {k: down[k] - z * math.sqrt(sigma2 / len(v)) for k, v in g.items()}


def rank_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                rule: str = ALL_RULES[0]) -> dict[Key, float]:
    """Each configuration's score, higher is better, by any rule of ALL_RULES: "lower", the
    median of its log values minus one standard error of the search's noise; "shrunk", its
    median pulled toward what its knobs' main effects predict from the other runs
    ("shrunk-down": only ever lowered; "cautious": lowered, then minus one standard error);
    iolab tune's own rules as iolab.tune.selection computes them."""
    if rule in ("shrunk", "shrunk-down"):
        return shrunk_scores(scores, maximize, down_only=rule == "shrunk-down")
    if rule == "lower":
        return lower_bound_scores(scores, maximize)
    if rule == "cautious":
        return cautious_scores(scores, maximize)
    return product_rank_scores(scores, maximize, rule)


def ranker(rule: str) -> Ranker:
    """``rule`` as the ranking function iolab.tune.selection's pick_winner takes."""
    if rule not in ALL_RULES:
        raise ValueError(f"winner rule {rule!r}: one of {', '.join(ALL_RULES)}")

    def rank(scores: Mapping[Key, Sequence[float]], maximize: bool) -> dict[Key, float]:
        return rank_scores(scores, maximize, rule)
    return rank
