"""Replayed searches (bench/tunelab/replay.py): the objective bench/tune_efficiency and
bench/tune_variants score policies with."""

from __future__ import annotations

import json
from pathlib import Path

from tunelab.policy import ResearchPolicy
from tunelab.replay import Exhaustive, ReplayObjective, order_effect, replay

from iolab.tune.search import key_of


def test_a_repeated_point_draws_each_recorded_run_once_before_any_again() -> None:
    """A real re-measurement is a new run: the replay never hands the same lucky run twice
    while the point has others left."""
    runs = [100.0, 200.0, 300.0, 400.0, 500.0]
    obj = ReplayObjective({key_of({"t": "1m"}): runs}, {"t": "65536"}, seed=3)
    drawn = [obj.evaluate({"t": "1m"}, "x").value for _ in range(7)]
    assert sorted(drawn[:5]) == runs and all(v in runs for v in drawn[5:])
    base = obj.evaluate({"t": "(default)"}, "x")
    assert base.status == "failed"  # not in the exhaustive runs: failed, never invented
    assert ReplayObjective({"{}": [1.0]}, {"t": "65536"}).evaluate(
        {"t": "(default)"}, "x").settings == {"t": "65536"}


def test_only_the_run_right_after_the_baseline_carries_its_aftermath() -> None:
    """carry_over: the run after a baseline keeps that share of its recorded speed (a disk
    still busy with the baseline's writes); the runs after it, and a run after any other
    point, keep all of it."""
    samples = {"{}": [10.0], key_of({"t": "1m"}): [100.0], key_of({"t": "4m"}): [200.0]}
    obj = ReplayObjective(samples, {"t": "65536"}, seed=1, carry_over=0.5)
    got = [obj.evaluate(p, "x").value for p in (
        {"t": "(default)"}, {"t": "1m"}, {"t": "4m"}, {"t": "1m"}, {"t": "(default)"},
        {"t": "4m"})]
    assert got == [10.0, 50.0, 200.0, 100.0, 10.0, 100.0]


def test_a_run_after_a_run_of_the_same_value_gets_the_order_effect() -> None:
    """after_same: a file-view run right after another file-view run runs at factor x its
    recorded speed; after a run without a view, or as the first, it keeps its own."""
    fv1, fv4 = key_of({"v": "true", "t": "1m"}), key_of({"v": "true", "t": "4m"})
    samples = {"{}": [10.0], fv1: [100.0], fv4: [200.0], key_of({"t": "1m"}): [50.0]}
    obj = ReplayObjective(samples, {}, seed=1, after_same=("v", "true", 3.0))
    got = [obj.evaluate(p, "x").value for p in (
        {"v": "true", "t": "1m"}, {"v": "true", "t": "4m"}, {"v": "(default)", "t": "1m"},
        {"v": "true", "t": "4m"}, {"v": "true", "t": "1m"}, {"v": "(default)", "t": "(default)"})]
    assert got == [100.0, 600.0, 50.0, 200.0, 300.0, 10.0]


def ordered_set(fast_after_same: float) -> Exhaustive:
    """Points over knobs v (view) and t; each point's runs alternate between following a
    view point and following a point without one. A view run after another view run runs
    ``fast_after_same`` x the others (1.0: no order effect)."""
    keys = [key_of({"v": v, "t": t}) for v in ("(default)", "true") for t in ("(default)", "1m")]
    samples: dict[str, list[float]] = {}
    before: dict[str, list[str | None]] = {}
    for i, k in enumerate(keys):
        view = "true" in k
        runs, prev = [], []
        for r in range(12):
            p = keys[(i + 1 + 2 * (r % 2)) % 4]  # alternately a view point and one without
            factor = fast_after_same if view and "true" in p else 1.0
            runs.append((100.0 + 10 * i + r % 3) * factor)
            prev.append(p)
        samples[k], before[k] = runs, prev
    return Exhaustive(samples, {}, before)


def test_the_order_effect_of_a_set_and_a_replay_in_recorded_order() -> None:
    """order_effect finds the knob and value whose runs are faster right after a run of the
    same value, from the recorded runs; the replay in recorded order then draws a view run
    after a view run from the fast runs only, and after a run without a view from the slow
    ones; a set without order, or without an effect, has none."""
    ex = ordered_set(3.0)
    effect = order_effect(ex)
    assert effect is not None and (effect.knob, effect.value) == ("v", "true")
    assert 2.5 < effect.ratio < 3.5 and effect.p_value < 0.01
    assert order_effect(ordered_set(1.0)) is None
    assert order_effect(Exhaustive(ex.samples, {})) is None
    obj = ReplayObjective(ex.samples, {}, seed=2, in_order=(effect.knob, effect.same))
    view, plain = {"v": "true", "t": "1m"}, {"v": "(default)", "t": "1m"}
    after_view, after_plain = [], []
    for _ in range(8):
        obj.evaluate({"v": "true", "t": "(default)"}, "x")
        after_view.append(obj.evaluate(view, "x").value or 0.0)
        obj.evaluate(plain, "x")
        after_plain.append(obj.evaluate(view, "x").value or 0.0)
    assert min(after_view) > 250 and max(after_plain) < 150
    # without the recorded order the same draws mix both
    mixed = ReplayObjective(ex.samples, {}, seed=2)
    drawn = [mixed.evaluate(view, "x").value or 0.0 for _ in range(12)]
    assert min(drawn) < 150 < 250 < max(drawn)


def test_old_and_new_exhaustive_files_load_and_span_their_space(tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    samples = {key_of({"transfer": t, "threads": n}): [float(i + 1), float(i + 2)]
               for i, (t, n) in enumerate((a, b) for a in ("(default)", "1048576")
                                          for b in ("(default)", "2"))}
    new.write_text(json.dumps({"samples": samples, "settings": {"transfer": "65536",
                                                                "threads": "1"}}))
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v[0] for k, v in samples.items()}))
    a, b = Exhaustive.load(new), Exhaustive.load(old)
    assert a.settings["threads"] == "1" and b.settings == {}
    assert a.before == {} == b.before  # written before the run order was kept
    ordered = tmp_path / "ordered.json"
    first = next(iter(samples))
    ordered.write_text(json.dumps({"samples": samples, "settings": {}, "before": {
        k: [None if k == first else first, first] for k in samples}}))
    assert Exhaustive.load(ordered).before[first] == [None, first]
    assert all(len(v) == 1 for v in b.samples.values())
    assert a.space().names == b.space().names == ("threads", "transfer")
    assert a.space().size() == 4
    assert max(a.medians(), key=lambda k: a.medians()[k]) == key_of(
        {"transfer": "1048576", "threads": "2"})


def test_a_replayed_search_runs_the_tuner_and_picks_a_measured_point(tmp_path: Path) -> None:
    from iolab.results import db

    samples = {key_of({"transfer": t, "threads": n}): [v, v * 1.1, v * 0.9]
               for t, n, v in (("(default)", "(default)", 100.0), ("(default)", "2", 150.0),
                               ("1048576", "(default)", 300.0), ("1048576", "2", 450.0))}
    ex = Exhaustive(samples, {"transfer": "65536", "threads": "1"})
    got = replay(ex, ResearchPolicy(), budget=4, seeds=[0, 1], conn=db.connect(tmp_path / "r.db"))
    for r in got:
        assert r.pick in r.measured and len(r.measured) <= 4
    # every point measured (budget = space): the clear best wins, whatever the seed
    assert all(r.pick == key_of({"transfer": "1048576", "threads": "2"}) for r in got)
