"""Two samples of one measure compared, the one way every verb does it: tune's claim over the
defaults, compare's B/A (runs, sweeps, tunes) and a study against another machine's.

The effect is the ratio of medians; its interval a percentile bootstrap over both samples;
and the decision is read from that interval alone: B differs from A exactly when the interval
excludes 1 (above: B better, below: A better). A second test beside it (tune and compare once
also asked a Mann-Whitney U test) could disagree with the interval it is printed next to
("B/A 2.73, 95% CI 2.36-3.21, no significant difference").

A bootstrap over a handful of values is too narrow to mean its level, so an interval is made
only from samples that could show a difference at that level at all (:func:`can_judge`):
fewer, and the ratio stands without an interval and without a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

CONFIDENCE = 0.95
RESAMPLES = 4999  # bootstrap resamples of an interval


def speedup(baseline: Sequence[float], winner: Sequence[float], maximize: bool) -> float:
    """median(winner) / median(baseline) when higher is better, else the inverse: above 1,
    the winner is better."""
    b, w = median(baseline), median(winner)
    if maximize:
        return w / b if b > 0 else float("inf")
    return b / w if w > 0 else float("inf")


def median_ratio_interval(num: Sequence[float], den: Sequence[float], paired: bool = False,
                          seed: int = 0, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The ``confidence`` interval of median(num) / median(den), by a percentile bootstrap
    (RESAMPLES resamples); paired: num[i] and den[i] come from the same round and are resampled
    together. Percentile rather than BCa: a median over a handful of runs has few distinct
    bootstrap values, and BCa's correction then fails."""
    import warnings

    import numpy as np  # deferred: numpy only when the numbers are computed
    from scipy import stats  # deferred: scipy (~0.3 s to load) only when statistics are computed

    def ratio(d: np.ndarray, n: np.ndarray, axis: int = -1) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.median(n, axis=axis) / np.median(d, axis=axis)

    with warnings.catch_warnings():  # a degenerate (all equal) sample is fine here
        warnings.simplefilter("ignore")
        boot = stats.bootstrap((np.asarray(den, dtype=float), np.asarray(num, dtype=float)),
                               ratio, paired=paired, vectorized=True,
                               confidence_level=confidence, n_resamples=RESAMPLES,
                               method="percentile", random_state=np.random.default_rng(seed))
    return float(boot.confidence_interval.low), float(boot.confidence_interval.high)


def can_judge(n_a: int, n_b: int, confidence: float = CONFIDENCE) -> bool:
    """Whether samples of n_a and n_b values can show a difference at ``confidence``.

    With no difference every order of the pooled values is equally likely, so even the most
    extreme one (every value of one side above every value of the other) happens by chance
    with probability 1 / C(n_a + n_b, n_a); unless that is below 1 - confidence no data of
    this size can make the claim (3 against 3: 1/20 = 0.05; 4 against 4: 1/70), and a
    bootstrap interval that excluded 1 would overstate what the samples show."""
    if n_a < 2 or n_b < 2:
        return False
    # 1 - 0.95 is 0.05000000000000004 in binary: 3 against 3 must not pass by rounding
    return 1 / math.comb(n_a + n_b, n_a) < (1 - confidence) * (1 - 1e-9)


def fewest_to_judge(confidence: float = CONFIDENCE) -> int:
    """The fewest values a side (both sides alike) for :func:`can_judge` (4 at 95%)."""
    n = 2
    while not can_judge(n, n, confidence):
        n += 1
    return n


@dataclass(frozen=True)
class Estimate:
    """B against A: ``ratio`` above 1 when B is better; ``low``/``high`` its interval, None
    when the samples are too few to judge (then ``direction`` is 0)."""

    ratio: float
    low: float | None
    high: float | None
    n_a: int
    n_b: int
    confidence: float = CONFIDENCE

    @property
    def direction(self) -> int:
        """+1: B better (the interval is above 1), -1: A better (below 1), 0: not shown to
        differ (the interval holds 1, or there is none)."""
        if self.low is None or self.high is None:
            return 0
        return 1 if self.low > 1.0 else -1 if self.high < 1.0 else 0


def estimate(a: Sequence[float], b: Sequence[float], maximize: bool, seed: int = 0,
             confidence: float = CONFIDENCE) -> Estimate:
    """B against A (at least 1 positive value each): the ratio of medians (B/A when higher is
    better, A/B otherwise, so above 1 is B better) and, when :func:`can_judge`, its interval."""
    if not a or not b:
        raise ValueError("need at least 1 sample of each side")
    if min(*a, *b) <= 0:
        raise ValueError("scores must be positive to be compared as a ratio")
    r = speedup(a, b, maximize)
    if not can_judge(len(a), len(b), confidence):
        return Estimate(r, None, None, len(a), len(b), confidence)
    better, worse = (b, a) if maximize else (a, b)
    low, high = median_ratio_interval(better, worse, seed=seed, confidence=confidence)
    return Estimate(r, low, high, len(a), len(b), confidence)
