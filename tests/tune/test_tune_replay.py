"""Replayed searches (iolab.tune.replay): the objective bench/tune_efficiency and
bench/tune_variants score policies with."""

from __future__ import annotations

import json
from pathlib import Path

from iolab.tune.replay import Exhaustive, ReplayObjective, replay
from iolab.tune.search import Policy, key_of


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
    got = replay(ex, Policy(), budget=4, seeds=[0, 1], conn=db.connect(tmp_path / "r.db"))
    for r in got:
        assert r.pick in r.measured and len(r.measured) <= 4
    # every point measured (budget = space): the clear best wins, whatever the seed
    assert all(r.pick == key_of({"transfer": "1048576", "threads": "2"}) for r in got)
