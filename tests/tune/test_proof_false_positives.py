"""How often a proof calls a setting that changes nothing "proven faster": at most the
family-wise 5% that tune.proof's Bonferroni intervals promise.

Seeded null samples (the unchanged command and every candidate drawn from one distribution,
as a setting the command ignores gives), sized as a proof sizes them (iolab.stats.can_judge at
the family's level): deterministic, so a change that breaks the family-wise level (intervals
at 95% each: a false "faster" in 18 of these 120 proofs) fails here, not as a flake
of a test on a real command (tests/diagnose/test_proof_shown.py).
"""

from __future__ import annotations

import random

from iolab.stats import can_judge, estimate
from iolab.tune.proof import family_confidence


def _fewest_rounds(confidence: float) -> int:
    return next(n for n in range(2, 50) if can_judge(n, n, confidence))


def test_settings_that_change_nothing_are_rarely_proven_faster() -> None:
    """Expected: at most 5% of null proofs (4 candidates) show a false "proven faster"
    (the family-wise level); with 95% intervals each, 18 of 120."""
    rng = random.Random(20261128)
    candidates, proofs = 4, 120
    confidence = family_confidence(candidates)
    n = _fewest_rounds(confidence)
    with_false_claim = 0
    for s in range(proofs):
        def runs() -> list[float]:  # a 50 ms command with skewed noise
            return [0.05 + rng.lognormvariate(-5, 0.8) for _ in range(n)]
        baseline = runs()
        claims = [estimate(baseline, runs(), maximize=False, seed=s * 10 + c,
                           confidence=confidence) for c in range(candidates)]
        with_false_claim += any(e.low is not None and e.low > 1 for e in claims)
    assert with_false_claim <= 0.05 * proofs, f"{with_false_claim} of {proofs} null proofs"
