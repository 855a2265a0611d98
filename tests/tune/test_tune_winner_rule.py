"""The winner statistics on heavy-tailed runs: iolab tune's (iolab.tune.selection) and those
bench/tune_variants replays beside it (bench/tunelab/rules.py).

Expected: a configuration measured once, fast by luck, on knob values that are slow
everywhere else in the search, is ranked below a repeated, steady configuration ("shrunk":
pulled toward its knobs' main effects); the same configuration measured fast again and
again keeps its rank (a real interaction is not argued away); a lower bound makes a single
run pay for its uncertainty. The plain median, shown alongside, is fooled by the lucky run,
which is what these rules correct."""

from __future__ import annotations

import math

import pytest
from tunelab.rules import ALL_RULES, loo_predictions, rank_scores, ranker, shrunk_scores

from iolab.tune.selection import RULES, goodness, pick_winner


def pick(scores: dict[str, list[float]], maximize: bool, repeats: int,
         rule: str) -> tuple[str, float] | None:
    """iolab tune's pick_winner with any rule of ALL_RULES (tunelab.rules.ranker)."""
    return pick_winner(scores, maximize, repeats, ranker(rule))


def k(**params: str) -> str:
    import json

    return json.dumps(dict(sorted(params.items())))


def search(lucky: list[float]) -> dict[str, list[float]]:
    """mode=x is ~3x slower than the default wherever it was measured; mode=y is a bit
    faster; size barely matters. (mode=x, size=c) is the suspect."""
    return {
        k(): [1000.0], k(size="a"): [1050.0], k(size="b"): [980.0], k(size="c"): [1020.0],
        k(mode="y"): [1100.0], k(mode="y", size="a"): [1150.0, 1120.0, 1140.0],
        k(mode="y", size="b"): [1090.0, 1130.0],
        k(mode="x"): [300.0], k(mode="x", size="a"): [310.0], k(mode="x", size="b"): [290.0],
        k(mode="x", size="c"): lucky,
    }


def test_a_lucky_single_run_on_slow_knobs_is_pulled_down() -> None:
    scores = search([1600.0])
    suspect, steady = k(mode="x", size="c"), k(mode="y", size="a")
    median_rank = rank_scores(scores, True, "median")
    assert median_rank[suspect] > median_rank[steady]  # the plain median is fooled
    for rule in ("shrunk", "shrunk-down", "cautious"):
        ranked = rank_scores(scores, True, rule)
        assert max(ranked, key=lambda c: ranked[c]) == steady, rule
    shrunk = rank_scores(scores, True, "shrunk")
    assert shrunk[suspect] < shrunk[steady]
    assert max(shrunk, key=lambda c: shrunk[c]) == steady
    # pulled toward what mode=x predicts (~300-350), far below its own 1600
    assert math.exp(shrunk[suspect]) < 1100
    # the steady, repeated configurations keep their own values within a few per cent
    assert abs(math.exp(shrunk[steady]) - 1140.0) / 1140.0 < 0.05
    # with every configuration in the pool (a budget without repeats) it still does not win
    assert pick(scores, True, repeats=1, rule="shrunk")[0] == steady
    assert pick(scores, True, repeats=1, rule="median")[0] == suspect


def test_a_genuinely_better_configuration_still_wins() -> None:
    """The same knobs measured fast three times over: an interaction the additive model
    cannot see, and the runs outweigh it."""
    scores = search([1600.0, 1580.0, 1630.0])
    best = k(mode="x", size="c")
    for rule in ALL_RULES:
        assert pick(scores, True, repeats=3, rule=rule) == (best, 1600.0), rule


def test_times_lower_is_better_mirror_bandwidths() -> None:
    times = {c: [1000.0 / v for v in runs] for c, runs in search([1600.0]).items()}
    shrunk = rank_scores(times, False, "shrunk")
    assert max(shrunk, key=lambda c: shrunk[c]) == k(mode="y", size="a")
    assert pick(times, False, repeats=1, rule="median")[0] == k(mode="x", size="c")


def test_a_single_run_pays_for_its_uncertainty_under_the_lower_bound() -> None:
    scores = {k(size="a"): [1040.0], k(size="b"): [1000.0, 1010.0, 995.0, 1005.0]}
    lower = rank_scores(scores, True, "lower")
    assert lower[k(size="b")] > lower[k(size="a")]  # 4% ahead on one run is not enough
    assert pick(scores, True, repeats=1, rule="median")[0] == k(size="a")
    scores[k(size="a")] = [1400.0]  # 40% ahead is more than the noise seen: it leads
    lower = rank_scores(scores, True, "lower")
    assert lower[k(size="a")] > lower[k(size="b")]


def test_a_two_valued_candidate_pays_for_its_own_spread_under_the_moderated_bound() -> None:
    """The stored runs of a real O_DIRECT search (session 13): an O_DSYNC 4 MiB point ran
    1331, 1300 and 646 MiB/s (two-valued: fast or a third of the best), a 1 MiB point 1506,
    1262 and 1212, the other candidates steady. By the search's pooled noise the two-valued
    point leads on its median; charged its own spread it does not. Two runs alike do not
    make a candidate look noiseless: with the same median it still pays the pooled noise."""
    scores = {k(t="4m", mode="sync"): [1331.0, 1300.0, 646.0],
              k(t="1m"): [1506.0, 1262.0, 1212.0],
              k(t="1m", threads="8"): [1180.0, 1210.0, 1150.0],
              k(): [100.0, 96.0, 104.0]}
    assert pick(scores, True, repeats=3, rule="lower")[0] == k(t="4m", mode="sync")
    assert pick(scores, True, repeats=3, rule="moderated")[0] == k(t="1m")
    assert RULES[0] == "moderated"  # iolab tune's
    alike = rank_scores({**scores, k(t="64k"): [1262.0, 1262.0, 1262.0]}, True, "moderated")
    assert math.exp(alike[k(t="64k")]) < 1262.0
    times = {key: [1.0 / v for v in runs] for key, runs in scores.items()}
    assert pick(times, False, repeats=3, rule="moderated")[0] == k(t="1m")


def test_values_without_a_logarithm_fall_back_to_the_median() -> None:
    """A --metric that can be zero or negative: no log-scale model, the plain median."""
    scores = {k(size="a"): [0.0, 1.0, 2.0], k(size="b"): [-1.0, 5.0, 4.0], k(): [3.0]}
    assert goodness(scores, True) is None
    for rule in ALL_RULES:
        assert pick(scores, True, repeats=3, rule=rule) == (k(size="b"), 4.0)
    assert shrunk_scores(scores, False)[k(size="a")] == -1.0


def test_the_prediction_of_a_configuration_leaves_it_out() -> None:
    """Leave-one-out: a configuration's own value does not move its prediction; one whose
    knob value nothing else has gets no prediction (and keeps its own value)."""
    keys = [k(), k(size="a"), k(mode="y"), k(mode="y", size="a"), k(size="b"),
            k(mode="y", size="b")]
    centre = [0.0, 0.1, 0.5, 0.6, 0.05, 0.55]
    base = loo_predictions(keys, centre)
    moved = loo_predictions(keys, [*centre[:3], 3.0, *centre[4:]])
    assert base[3] == pytest.approx(0.6, abs=0.06)  # additive data: predicted right
    assert moved[3] == pytest.approx(base[3])
    alone = loo_predictions([*keys, k(size="z")], [*centre, 9.0])
    assert alone[-1] is None
    assert shrunk_scores({**{c: [math.exp(v)] for c, v in zip(keys, centre)},
                          k(size="z"): [math.exp(9.0)]}, True)[k(size="z")] == \
        pytest.approx(9.0)
