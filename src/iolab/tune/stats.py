"""The claim a tune makes: is the winner faster than the baseline, by how much, how sure.

Both configurations are run again, interleaved (baseline, winner, baseline, ...), so drift
on a shared machine hits both alike; the search's own samples are not reused (the best of
many noisy trials is biased upwards). The speed-up is the ratio of medians, its 95%
confidence interval a bootstrap over both samples, and a one-sided Mann-Whitney U test says
whether the winner's samples are larger. A gain is claimed only when the interval's lower
end is above 1 and the test agrees; otherwise "no significant gain". When a tune confirms two
candidates and keeps the better (iolab.tune.search: the runner-up's second look), each claim is
made at a level corrected for the choice (Bonferroni: 97.5%, p < 0.025).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

CONFIDENCE = 0.95
RESAMPLES = 4999  # bootstrap resamples of an interval


@dataclass(frozen=True)
class Claim:
    speedup: float  # > 1: the winner is better (faster, more bandwidth)
    ci_low: float
    ci_high: float
    p_value: float
    n_baseline: int
    n_winner: int
    significant: bool
    confidence: float = CONFIDENCE  # of the interval; the test's level is 1 - confidence

    def statement(self) -> str:
        ci = f"{self.confidence * 100:.3g}% CI {self.ci_low:.2f}-{self.ci_high:.2f}"
        runs = f"{self.n_winner} vs {self.n_baseline} interleaved runs"
        if self.significant:
            return (f"{self.speedup:.2f}x faster than the defaults ({ci}, Mann-Whitney "
                    f"p={self.p_value:.3g}, {runs})")
        return (f"no significant gain ({self.speedup:.2f}x, {ci}, p={self.p_value:.3g}, "
                f"{runs}): keep the defaults")

    def to_json(self) -> dict[str, float | int | bool]:
        return {"speedup": self.speedup, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "confidence": self.confidence, "p_value": self.p_value,
                "n_baseline": self.n_baseline, "n_winner": self.n_winner,
                "significant": self.significant}


def speedup(baseline: Sequence[float], winner: Sequence[float], maximize: bool) -> float:
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

    import numpy as np
    from scipy import stats

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


def compare(baseline: Sequence[float], winner: Sequence[float], maximize: bool,
            seed: int = 0, confidence: float = CONFIDENCE) -> Claim:
    """The claim for two samples of the objective (at least 2 values each), its interval at
    ``confidence`` and its test at 1 - ``confidence``."""
    if len(baseline) < 2 or len(winner) < 2:
        raise ValueError("need at least 2 samples of each configuration")
    if min(*baseline, *winner) <= 0:
        raise ValueError("scores must be positive to be compared as a ratio")
    from scipy import stats

    better, worse = (winner, baseline) if maximize else (baseline, winner)
    low, high = median_ratio_interval(better, worse, seed=seed, confidence=confidence)
    alternative = "greater" if maximize else "less"
    p = float(stats.mannwhitneyu(winner, baseline, alternative=alternative).pvalue)
    s = speedup(baseline, winner, maximize)
    return Claim(s, low, high, p, len(baseline), len(winner),
                 bool(low > 1.0 and p < 1.0 - confidence), confidence)
