"""Which measured configuration is best, on a machine whose runs are heavy-tailed.

A page-cache write can run at 1700 MiB/s once and at 450 MiB/s the next four times. With a
small budget most configurations are measured once, so the best single run is mostly the
luckiest one, and even the median of three runs is fooled by one outlier in three. Values
are compared as logarithms ("goodness" g: log of a bandwidth, minus the log of a time), so
a difference is a factor, the same on a fast and a slow configuration. The score (iolab
tune's): the median g minus one standard error, sqrt(s2 / n), s2 the configuration's own
run-to-run variance pooled with the search's (two degrees of freedom of the search's): a
configuration ahead on one run must be ahead by more than the noise, and one whose runs
disagree pays for it. On this VM's disk O_DSYNC 4 MiB writes are two-valued (about 500 or
1500 MiB/s, the share of fast runs changing over the day); a search that saw one fast, fast,
slow ranked it first by its median. "median" (the plain median) is the rule of tunes stored
before policies were, which a --resume continues with.

bench/tune_variants replays this rule beside others (the lower bound, knob-model shrinkage:
bench/tunelab/rules.py) on kept exhaustive measurements: it did as well as the best of them
(session 13, six sets, 60 seeds each), and on the stored searches of a real O_DIRECT run it
passed over two of the three two-valued picks. Optuna proposes; the score only ranks
measured configurations. The last functions turn a score into the tuner's choices: its
winner (pick_winner), the candidate to measure again (next_repeat), the runs kept for that
(repeat_reserve). Values that are not all positive (a --metric that can be zero or
negative) have no logarithm: every score is then the plain median.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable, Mapping, Sequence
from statistics import median
from typing import Any

DEFAULT = "(default)"  # iolab.tune.space.DEFAULT: a knob left as the workload has it
Key = str  # a configuration as canonical JSON, DEFAULT knobs left out (search.key_of)

SIGMA2_PRIOR = 0.15 ** 2  # within-configuration variance of log values before any repeat
SIGMA2_PRIOR_WEIGHT = 2.0  # ... counted as this many degrees of freedom


def goodness(scores: Mapping[Key, Sequence[float]],
             maximize: bool) -> dict[Key, list[float]] | None:
    """log values (negated when lower is better); None when a value is not positive."""
    if any(v <= 0 or not math.isfinite(v) for runs in scores.values() for v in runs):
        return None
    sign = 1.0 if maximize else -1.0
    return {k: [sign * math.log(v) for v in runs] for k, runs in scores.items() if runs}


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


def moderated_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                     z: float = 1.0, prior_dof: float = 2.0) -> dict[Key, float]:
    """median g minus z standard errors of the configuration's *own* noise, moderated: its
    runs' variance pooled with the search's (``prior_dof`` degrees of freedom), so a
    configuration whose runs disagree (two-valued: fast or three times slower) pays for it,
    while two runs alike do not make one look noiseless."""
    g = goodness(scores, maximize)
    if g is None:
        return median_scores(scores, maximize)
    sigma2 = pooled_variance(list(g.values()))
    out = {}
    for k, v in g.items():
        own = statistics.variance(v) * (len(v) - 1) if len(v) >= 2 else 0.0
        s2 = (prior_dof * sigma2 + own) / (prior_dof + max(0, len(v) - 1))
        out[k] = median(v) - z * math.sqrt(s2 / len(v))
    return out


def median_scores(scores: Mapping[Key, Sequence[float]], maximize: bool) -> dict[Key, float]:
    """Each configuration's plain median, negated when lower is better."""
    sign = 1.0 if maximize else -1.0
    return {k: sign * median(v) for k, v in scores.items() if v}


# Winner statistics; the first is iolab tune's, "median" that of tunes stored before
# policies were (a --resume continues with it). bench/tunelab/rules.py holds the others
# bench/tune_variants replays.
RULES = ("moderated", "median")
# A winner statistic: each configuration's score from its runs, higher is better.
Ranker = Callable[[Mapping[Key, Sequence[float]], bool], dict[Key, float]]


def rank_scores(scores: Mapping[Key, Sequence[float]], maximize: bool,
                rule: str = RULES[0]) -> dict[Key, float]:
    """Each configuration's score, higher is better: "moderated", the median of its log
    values minus one standard error of its own runs' noise pooled with the search's (few
    runs, and runs that disagree, pay for their uncertainty); "median", its plain median."""
    if rule == "moderated":
        return moderated_scores(scores, maximize)
    if rule == "median":
        return median_scores(scores, maximize)
    raise ValueError(f"winner rule {rule!r}: one of {', '.join(RULES)}")


def _ranker(rule: str | Ranker) -> Ranker:
    """A rule by name (RULES), or a ranking function of the caller's (bench/tunelab's)."""
    if callable(rule):
        return rule
    return lambda scores, maximize: rank_scores(scores, maximize, rule)


def pick_winner(scores: Mapping[Key, Sequence[float]], maximize: bool,
                repeats: int, rule: str | Ranker = RULES[0]) -> tuple[Key, float] | None:
    """The best score among the configurations measured the most times, up to
    ``repeats`` (once the top candidates are repeated, one lucky run never outranks a
    repeated one), with its median."""
    if not scores:
        return None
    need = min(repeats, max(len(v) for v in scores.values()))
    rank = _ranker(rule)(scores, maximize)
    best = max((k for k, v in scores.items() if len(v) >= need), key=lambda k: rank[k])
    return best, median(scores[best])


def next_repeat(scores: Mapping[Key, Sequence[float]], maximize: bool, top: int,
                repeats: int, rule: str | Ranker = RULES[0]) -> Key | None:
    """The candidate to measure again: among the ``top`` best scores, the one with the
    fewest samples below ``repeats`` (rounds go across candidates, so drift hits them
    alike); None when the top candidates all have ``repeats`` samples, or when the leader
    is clearly ahead: measured at least twice, its worst run beats every other top
    candidate's best run (noise cannot change the pick, so the runs go to exploring)."""
    rank = _ranker(rule)(scores, maximize)
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
