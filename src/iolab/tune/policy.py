"""How iolab tune picks its winner and spends its budget (:class:`Policy`), stored with each
tune; the search itself is :mod:`iolab.tune.search`, the winner statistics
:mod:`iolab.tune.selection`. bench/tunelab's ResearchPolicy extends it with the switches
bench/tune_variants replays (other samplers, TPE settings, budget splits, rules)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from iolab.tune.selection import RULES, Key, rank_scores, repeat_reserve

REPEAT_SHARE = 1 / 3  # most of the budget kept for repeats
TPE_STARTUP_SHARE = 0.25  # TPE: random proposals first, as a share of the budget
TPE_EI_CANDIDATES = 24  # TPE: draws scored per proposal


@dataclass(frozen=True)
class Policy:
    """How a tune picks its winner and how many runs its top candidates get. Stored with
    the tune, so that ``--resume`` continues with the same one. The rest of how it spends
    its budget is iolab tune's own (TPE, multivariate, the covering start with contrast, the
    recheck of the run after the baseline, the second look): :meth:`to_json` records it too.
    bench/tunelab's ResearchPolicy varies all of it for bench/tune_variants."""

    RULES: ClassVar[tuple[str, ...]] = RULES  # the winner statistics this policy knows
    repeats: int = 3  # samples each top candidate gets (1: no repeats)
    repeat_top: int = 3  # how many of the best candidates are repeated
    rule: str = RULES[0]  # the winner statistic (iolab.tune.selection.rank_scores)

    def __post_init__(self) -> None:
        if self.rule not in self.RULES:
            raise ValueError(f"winner rule {self.rule!r}: one of {', '.join(self.RULES)}")
        object.__setattr__(self, "repeats", max(1, self.repeats))
        object.__setattr__(self, "repeat_top", max(1, self.repeat_top))

    def reserve(self, budget: int) -> int:
        return repeat_reserve(budget, self.repeat_top, self.repeats, REPEAT_SHARE)

    def rank(self, scores: Mapping[Key, Sequence[float]], maximize: bool) -> dict[Key, float]:
        """Each configuration's score by this policy's winner statistic, higher is better."""
        return rank_scores(scores, maximize, self.rule)

    def to_json(self) -> dict[str, Any]:
        """The policy as stored with a tune: its settings and how iolab tune searched (the
        keys a tune has stored since policies were, so a stored default is unchanged)."""
        return {"sampler": "tpe", "repeats": self.repeats, "repeat_top": self.repeat_top,
                "rule": self.rule, "repeat_share": REPEAT_SHARE,
                "startup_share": TPE_STARTUP_SHARE, "multivariate": True, "group": False,
                "ei_candidates": TPE_EI_CANDIDATES, "cover": True, "recheck": False,
                "recheck_first": True, "contrast": True, "second_look": True}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Policy:
        """A stored policy; fields a newer version added keep their defaults, and how iolab
        tune searches is its own (the stored record of it is not read back)."""
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in doc.items() if k in names})
