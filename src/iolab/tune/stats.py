"""The claim a tune makes: is the winner faster than the baseline, by how much, how sure.

Both configurations are run again, interleaved (baseline, winner, baseline, ...), so drift
on a shared machine hits both alike; the search's own samples are not reused (the best of
many noisy trials is biased upwards). The speed-up is the ratio of medians, its 95%
confidence interval a bootstrap over both samples, and a one-sided Mann-Whitney U test says
whether the winner's samples are larger. A gain is claimed only when the interval's lower
end is above 1 and the test agrees; otherwise "no significant gain".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

CONFIDENCE = 0.95
ALPHA = 0.05


@dataclass(frozen=True)
class Claim:
    speedup: float  # > 1: the winner is better (faster, more bandwidth)
    ci_low: float
    ci_high: float
    p_value: float
    n_baseline: int
    n_winner: int
    significant: bool

    def statement(self) -> str:
        ci = f"{CONFIDENCE:.0%} CI {self.ci_low:.2f}-{self.ci_high:.2f}"
        runs = f"{self.n_winner} vs {self.n_baseline} interleaved runs"
        if self.significant:
            return (f"{self.speedup:.2f}x faster than the defaults ({ci}, Mann-Whitney "
                    f"p={self.p_value:.3g}, {runs})")
        return (f"no significant gain ({self.speedup:.2f}x, {ci}, p={self.p_value:.3g}, "
                f"{runs}): keep the defaults")

    def to_json(self) -> dict[str, float | int | bool]:
        return {"speedup": self.speedup, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "confidence": CONFIDENCE, "p_value": self.p_value,
                "n_baseline": self.n_baseline, "n_winner": self.n_winner,
                "significant": self.significant}


def speedup(baseline: Sequence[float], winner: Sequence[float], maximize: bool) -> float:
    b, w = median(baseline), median(winner)
    if maximize:
        return w / b if b > 0 else float("inf")
    return b / w if w > 0 else float("inf")


def compare(baseline: Sequence[float], winner: Sequence[float], maximize: bool,
            seed: int = 0) -> Claim:
    """The claim for two samples of the objective (at least 2 values each)."""
    if len(baseline) < 2 or len(winner) < 2:
        raise ValueError("need at least 2 samples of each configuration")
    if min(*baseline, *winner) <= 0:
        raise ValueError("scores must be positive to be compared as a ratio")
    import numpy as np
    from scipy import stats

    b = np.asarray(baseline, dtype=float)
    w = np.asarray(winner, dtype=float)

    def ratio(bs: np.ndarray, ws: np.ndarray, axis: int = -1) -> np.ndarray:
        mb, mw = np.median(bs, axis=axis), np.median(ws, axis=axis)
        with np.errstate(divide="ignore", invalid="ignore"):
            return mw / mb if maximize else mb / mw

    boot = stats.bootstrap((b, w), ratio, paired=False, vectorized=True,
                           confidence_level=CONFIDENCE, n_resamples=4999, method="percentile",
                           random_state=np.random.default_rng(seed))
    alternative = "greater" if maximize else "less"
    p = float(stats.mannwhitneyu(w, b, alternative=alternative).pvalue)
    low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    s = speedup(baseline, winner, maximize)
    return Claim(s, low, high, p, len(b), len(w), bool(low > 1.0 and p < ALPHA))
