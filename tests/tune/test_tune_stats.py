"""The claim: a real difference is claimed with its interval; noise is "no significant gain".

Samples come from seeded generators shaped like this machine's noise (+-20-50%)."""

from __future__ import annotations

import numpy as np
import pytest

from iolab.tune.stats import compare


def _noisy(rng: np.random.Generator, centre: float, n: int, spread: float = 0.3) -> list[float]:
    return list(centre * rng.uniform(1 - spread, 1 + spread, n))


@pytest.mark.parametrize("seed", range(5))
def test_a_real_twofold_gain_is_claimed_with_an_interval_around_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    base, win = _noisy(rng, 100, 7), _noisy(rng, 200, 7)
    claim = compare(base, win, maximize=True)
    assert claim.significant
    assert 1.0 < claim.ci_low <= claim.speedup <= claim.ci_high
    assert 1.4 < claim.speedup < 2.9
    assert "faster than the defaults" in claim.statement()


@pytest.mark.parametrize("seed", range(5))
def test_a_winner_equal_to_the_baseline_is_no_gain(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    claim = compare(_noisy(rng, 100, 5), _noisy(rng, 100, 5), maximize=True)
    assert not claim.significant
    assert claim.ci_low <= 1.0 <= claim.ci_high
    assert "no significant gain" in claim.statement()


def test_times_are_better_when_smaller() -> None:
    rng = np.random.default_rng(7)
    claim = compare(_noisy(rng, 10.0, 6, 0.1), _noisy(rng, 5.0, 6, 0.1), maximize=False)
    assert claim.significant and 1.6 < claim.speedup < 2.5
    worse = compare(_noisy(rng, 5.0, 6, 0.1), _noisy(rng, 10.0, 6, 0.1), maximize=False)
    assert not worse.significant and worse.speedup < 1


def test_too_few_samples_cannot_be_judged() -> None:
    with pytest.raises(ValueError):
        compare([1.0], [2.0, 3.0], maximize=True)
