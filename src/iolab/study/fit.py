"""Bandwidth against CPU frequency: a least-squares line with r² and intercept (CUG'17: an
intercept well above 0 means the page cache, not the core, sets the write speed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LineFit:
    slope: float
    intercept: float
    r2: float
    n: int


def linear_fit(x: Sequence[float], y: Sequence[float]) -> LineFit | None:
    """None with fewer than 3 points or one x value (no line to speak of)."""
    if len(x) != len(y) or len(x) < 3 or len(set(x)) < 2:
        return None
    from scipy import stats  # deferred: scipy (~0.3 s to load) only when statistics are computed

    r = stats.linregress(list(map(float, x)), list(map(float, y)))
    return LineFit(float(r.slope), float(r.intercept), float(r.rvalue) ** 2, len(x))
