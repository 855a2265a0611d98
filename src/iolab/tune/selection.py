"""Which measured configuration is best, on a machine whose runs are heavy-tailed.

A page-cache write can run at 1700 MiB/s once and at 450 MiB/s the next four times. With a
small budget most configurations are measured once, so the best single run is mostly the
luckiest one, and even the median of three runs is fooled by one outlier in three. Values
are compared as logarithms ("goodness" g: log of a bandwidth, minus the log of a time), so
a difference is a factor, the same on a fast and a slow configuration. The scores:

- moderated lower bound (iolab tune's): the median g minus one standard error,
  sqrt(s2 / n), s2 the configuration's own run-to-run variance pooled with the search's
  (two degrees of freedom of the search's): a configuration ahead on one run must be ahead
  by more than the noise, and one whose runs disagree pays for it. On this VM's disk O_DSYNC
  4 MiB writes are two-valued (about 500 or 1500 MiB/s, the share of fast runs changing
  over the day); a search that saw one fast, fast, slow ranked it first by its median;
- lower bound: the same with sigma2, the pooled within-configuration variance of the
  repeated ones (with a weak prior), for every configuration;
- shrunk: the median g pulled toward what the configuration's knobs predict (empirical
  Bayes). The knobs' *main effects* are fitted by median polish over every measured
  configuration, each configuration's prediction leaving it out (its own lucky run cannot
  vouch for itself); the weights are n / sigma2 for its runs and 1 / tau2 for the
  prediction, tau2 how far configurations stray from the additive model (robust estimate,
  at least 10%). "shrunk-down" only ever lowers; "cautious" lowers, then takes the
  standard error off.

bench/tune_variants replays each rule on kept exhaustive measurements and on a synthetic
additive set: the lower bound did at least as well as the plain median on every set, and
the knob-model rules no better than the lower bound; the moderated lower bound as well as
the lower bound (session 13, six sets, 60 seeds each), and on the stored searches of a real
O_DIRECT run it passed over two of the three two-valued picks, so iolab tune uses it.
The model is a statistic to rank measured configurations, never a proposer: Optuna
proposes. The last functions turn a score into the tuner's choices: its winner
(pick_winner), the candidate to measure again (next_repeat), the runs kept for that
(repeat_reserve). Values that are not all positive (a --metric that can be zero or negative) have
no logarithm: every score is then the plain median.
"""

from __future__ import annotations

import json
import math
import statistics
import warnings
from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any

DEFAULT = "(default)"  # iolab.tune.space.DEFAULT: a knob left as the workload has it
Key = str  # a configuration as canonical JSON, DEFAULT knobs left out (search.key_of)

SIGMA2_PRIOR = 0.15 ** 2  # within-configuration variance of log values before any repeat
SIGMA2_PRIOR_WEIGHT = 2.0  # ... counted as this many degrees of freedom
TAU2_FLOOR = 0.10 ** 2  # the additive model is never taken as closer than 10%
CHI2_1_MEDIAN = 0.455  # the median of a squared standard normal
POLISH_ROUNDS = 6  # median polish sweeps (it settles in a few)


def goodness(scores: Mapping[Key, Sequence[float]],
             maximize: bool) -> dict[Key, list[float]] | None:
    """log values (negated when lower is better); None when a value is not positive."""
    if any(v <= 0 or not math.isfinite(v) for runs in scores.values() for v in runs):
        return None
    sign = 1.0 if maximize else -1.0
    return {k: [sign * math.log(v) for v in runs] for k, runs in scores.items() if runs}


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


def pooled_variance(runs: Sequence[Sequence[float]]) -> float:
    """Within-configuration variance of the repeated ones, with a weak prior (before any
    repeat, 15% run-to-run noise)."""
    total, dof = SIGMA2_PRIOR * SIGMA2_PRIOR_WEIGHT, SIGMA2_PRIOR_WEIGHT
    for r in runs:
        if len(r) >= 2:
            mean = sum(r) / len(r)
            total += sum((v - mean) ** 2 for v in r)
            dof += len(r) - 1
    return total / dof


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


def moderated_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                     z: float = 1.0, prior_dof: float = 2.0) -> dict[Key, float]:
    """median g minus z standard errors of the configuration's *own* noise, moderated: its
    runs' variance pooled with the search's (``prior_dof`` degrees of freedom), so a
    configuration whose runs disagree (two-valued: fast or three times slower) pays for it,
    while two runs alike do not make one look noiseless."""
    g = goodness(scores, maximize)
    if g is None:
        return lower_bound_scores(scores, maximize)
    sigma2 = pooled_variance(list(g.values()))
    out = {}
    for k, v in g.items():
        own = statistics.variance(v) * (len(v) - 1) if len(v) >= 2 else 0.0
        s2 = (prior_dof * sigma2 + own) / (prior_dof + max(0, len(v) - 1))
        out[k] = median(v) - z * math.sqrt(s2 / len(v))
    return out


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


# Winner statistics; the first is iolab tune's (bench/tune_variants: the lower bound did at
# least as well as the median on every replayed set, and the knob-model rules no better;
# the moderated lower bound as well as the lower bound by replay, and on the real O_DIRECT
# searches of session 13 it passed over the two-valued points the lower bound picked)
RULES = ("moderated", "lower", "median", "shrunk", "shrunk-down", "cautious")


def rank_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                rule: str = RULES[0]) -> dict[Key, float]:
    """Each configuration's score, higher is better (the functions above):
    "moderated", the median of its log values minus one standard error of its own runs'
    noise pooled with the search's (few runs, and runs that disagree, pay for their
    uncertainty); "lower", the same with the search's noise alone; "median", its plain
    median; "shrunk", its median pulled toward what its knobs' main effects predict from
    the other runs ("shrunk-down": only ever lowered; "cautious": lowered, then minus one
    standard error)."""
    if rule in ("shrunk", "shrunk-down"):
        return shrunk_scores(scores, maximize, down_only=rule == "shrunk-down")
    if rule == "lower":
        return lower_bound_scores(scores, maximize)
    if rule == "cautious":
        return cautious_scores(scores, maximize)
    if rule == "moderated":
        return moderated_scores(scores, maximize)
    sign = 1.0 if maximize else -1.0
    return {k: sign * median(v) for k, v in scores.items() if v}


def pick_winner(scores: Mapping[Key, Sequence[float]], maximize: bool,
                repeats: int, rule: str = RULES[0]) -> tuple[Key, float] | None:
    """The best score among the configurations measured the most times, up to
    ``repeats`` (once the top candidates are repeated, one lucky run never outranks a
    repeated one), with its median."""
    if not scores:
        return None
    need = min(repeats, max(len(v) for v in scores.values()))
    rank = rank_scores(scores, maximize, rule)
    best = max((k for k, v in scores.items() if len(v) >= need), key=lambda k: rank[k])
    return best, median(scores[best])


def next_repeat(scores: Mapping[Key, Sequence[float]], maximize: bool, top: int,
                repeats: int, rule: str = RULES[0]) -> Key | None:
    """The candidate to measure again: among the ``top`` best scores, the one with the
    fewest samples below ``repeats`` (rounds go across candidates, so drift hits them
    alike); None when the top candidates all have ``repeats`` samples, or when the leader
    is clearly ahead: measured at least twice, its worst run beats every other top
    candidate's best run (noise cannot change the pick, so the runs go to exploring)."""
    rank = rank_scores(scores, maximize, rule)
    ranked = sorted(scores, key=lambda k: rank[k], reverse=True)[:top]
    lead = pick_winner(scores, maximize, repeats, rule)
    if lead is not None and len(scores[lead[0]]) >= 2:
        runs = scores[lead[0]]
        worst = min(runs) if maximize else max(runs)
        rivals = [v for k in ranked if k != lead[0] for v in scores[k]]
        if all((worst > v) if maximize else (worst < v) for v in rivals):
            return None
    short = [k for k in ranked if len(scores[k]) < repeats]
    return min(short, key=lambda k: len(scores[k])) if short else None


def repeat_reserve(budget: int, top: int, repeats: int, share: float = 1 / 3) -> int:
    """Runs kept from the budget for re-measuring the top candidates: enough for ``top``
    candidates to reach ``repeats`` samples, at most ``share`` of the budget."""
    return max(0, min(top * (repeats - 1), int(budget * share + 1e-9)))


def importances(study: Any, knobs: Sequence[str]) -> dict[str, float]:
    """Which of ``knobs`` mattered (Optuna's fANOVA); empty when the study cannot say."""
    import optuna  # deferred: optuna (~1 s to load) only when a search runs

    if not knobs:
        return {}
    try:
        with warnings.catch_warnings():  # "too few trials": the empty answer says it
            warnings.simplefilter("ignore")
            imp = optuna.importance.get_param_importances(study, params=list(knobs))
    except (RuntimeError, ValueError, ZeroDivisionError):
        return {}
    return {k: round(float(v), 3) for k, v in imp.items()}
