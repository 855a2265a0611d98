"""The claim a tune makes: is the winner faster than the baseline, by how much, how sure.

Both configurations are run again, interleaved (baseline, winner, baseline, ...), so drift
on a shared machine hits both alike; the search's own samples are not reused (the best of
many noisy trials is biased upwards). The speed-up is the ratio of medians with its 95%
bootstrap interval, and a gain is claimed exactly when that interval is above 1: the one
decision of :mod:`iolab.stats`, which compare and study use too. Fewer confirmation runs than
can show a gain at that level (4 a side at 95%) are not judged. When a tune confirms two
candidates and keeps the better (iolab.tune.search: the runner-up's second look), each claim is
made at a level corrected for the choice (Bonferroni: 97.5%).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.stats import CONFIDENCE, RESAMPLES, estimate, fewest_to_judge, median_ratio_interval
from iolab.stats import speedup as speedup

__all__ = ["CONFIDENCE", "RESAMPLES", "Claim", "compare", "median_ratio_interval", "speedup"]


@dataclass(frozen=True)
class Claim:
    speedup: float  # > 1: the winner is better (faster, more bandwidth)
    ci_low: float | None  # None: too few runs for an interval (not judged)
    ci_high: float | None
    n_baseline: int
    n_winner: int
    significant: bool  # exactly when the interval is above 1
    confidence: float = CONFIDENCE  # of the interval

    def statement(self) -> str:
        runs = f"{self.n_winner} vs {self.n_baseline} interleaved runs"
        if self.ci_low is None or self.ci_high is None:
            return (f"not judged ({self.speedup:.2f}x, {runs}: too few for a "
                    f"{self.confidence * 100:.3g}% claim, {fewest_to_judge(self.confidence)} "
                    "a side are enough): keep the defaults")
        ci = f"{self.confidence * 100:.3g}% CI {self.ci_low:.2f}-{self.ci_high:.2f}"
        if self.significant:
            return f"{self.speedup:.2f}x faster than the defaults ({ci}, {runs})"
        return f"no significant gain ({self.speedup:.2f}x, {ci}, {runs}): keep the defaults"

    def to_json(self) -> dict[str, float | int | bool | None]:
        return {"speedup": self.speedup, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "confidence": self.confidence, "n_baseline": self.n_baseline,
                "n_winner": self.n_winner, "significant": self.significant}


def compare(baseline: Sequence[float], winner: Sequence[float], maximize: bool,
            seed: int = 0, confidence: float = CONFIDENCE) -> Claim:
    """The claim for two samples of the objective (at least 2 values each), its interval at
    ``confidence``; significant exactly when the interval is above 1."""
    if len(baseline) < 2 or len(winner) < 2:
        raise ValueError("need at least 2 samples of each configuration")
    est = estimate(baseline, winner, maximize, seed=seed, confidence=confidence)
    return Claim(est.ratio, est.low, est.high, est.n_a, est.n_b, est.direction > 0,
                 confidence)
