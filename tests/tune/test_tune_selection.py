"""How the tuner spends its budget and picks its winner on a noisy machine.

Expected: exploration never measures a configuration twice; the last part of the budget
re-measures the best candidates until each has ``repeats`` samples; the winner is the best
median among those, so one lucky run cannot win. (Was: TPE's duplicate proposals were
measured again by chance, and the best median of any sample count won, often a single
lucky run.) The last test checks it on real engine runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from statistics import median
from typing import Any

import pytest
from tunelab.policy import ResearchPolicy, ResearchTuner

from iolab.results.tunes import Trial
from iolab.tune.search import Tuner, key_of, mark_repeats
from iolab.tune.selection import RULES, next_repeat, pick_winner, repeat_reserve


@pytest.mark.parametrize("rule", RULES)
def test_one_lucky_run_never_outranks_a_repeated_median(rule: str) -> None:
    scores = {"lucky": [120.0], "steady": [100.0, 104.0, 98.0], "slow": [50.0, 52.0, 49.0]}
    assert pick_winner(scores, maximize=True, repeats=3, rule=rule) == ("steady", 100.0)
    times = {"lucky": [1.0], "steady": [2.0, 2.2, 1.9], "slow": [4.0, 4.1, 3.9]}
    assert pick_winner(times, maximize=False, repeats=3, rule=rule) == ("steady", 2.0)
    assert pick_winner({}, maximize=True, repeats=3, rule=rule) is None


def test_without_repeats_the_median_rule_takes_the_lucky_run() -> None:
    """The behaviour the repeats correct: with repeats=1 every configuration is in the
    pool and a single fast run wins the plain median."""
    scores = {"lucky": [120.0], "steady": [100.0, 104.0, 98.0], "slow": [50.0, 52.0, 49.0]}
    assert pick_winner(scores, maximize=True, repeats=1, rule="median") == ("lucky", 120.0)


def test_while_nothing_is_repeated_the_best_single_run_leads() -> None:
    assert pick_winner({"a": [3.0], "b": [5.0]}, maximize=True, repeats=3) == ("b", 5.0)
    # a budget that ran out half-way: the most-measured candidates still decide
    assert pick_winner({"a": [9.0], "b": [5.0, 6.0], "c": [4.0, 4.5]}, True, 3) == ("b", 5.5)


def test_repeats_go_round_the_top_candidates_fewest_samples_first() -> None:
    scores = {"a": [10.0, 7.5], "b": [8.0], "c": [7.0], "d": [1.0]}
    assert next_repeat(scores, True, top=3, repeats=3) == "b"
    scores["b"].append(8.5)
    assert next_repeat(scores, True, top=3, repeats=3) == "c"
    scores["c"].append(7.5)
    assert next_repeat(scores, True, top=3, repeats=3) == "a"  # all at 2: the best first
    for k in ("a", "b", "c"):
        scores[k].append(scores[k][0])
    assert next_repeat(scores, True, top=3, repeats=3) is None  # "d" is not in the top 3


def test_no_repeats_while_the_leader_is_clearly_ahead() -> None:
    """Its worst run beats every other top candidate's best: noise cannot change the pick,
    so the budget goes back to exploring; an overlap brings the repeats back."""
    scores = {"a": [10.0, 9.5], "b": [8.0], "c": [7.0, 7.2]}
    assert next_repeat(scores, True, top=3, repeats=3) is None
    scores["b"].append(9.8)  # b's best run now beats a's worst
    assert next_repeat(scores, True, top=3, repeats=3) == "a"
    times = {"a": [1.0, 1.1], "b": [2.0]}
    assert next_repeat(times, False, top=3, repeats=3) is None
    assert next_repeat({"a": [10.0], "b": [8.0]}, True, 3, 3) == "a"  # one run proves nothing


def test_a_candidate_that_falls_out_of_the_top_is_replaced() -> None:
    scores = {"a": [10.0, 2.0, 2.5], "b": [8.0, 8.2, 7.9], "c": [8.1]}
    # a's median (2.5) is now below c's single run: c enters the top 2 and is measured
    assert next_repeat(scores, True, top=2, repeats=3) == "c"


@pytest.mark.parametrize(("budget", "top", "repeats", "reserve"), [
    (18, 3, 3, 6), (60, 3, 3, 6), (5, 3, 3, 1), (4, 3, 1, 0), (1, 3, 3, 0)])
def test_repeats_take_at_most_a_third_of_the_budget(budget: int, top: int, repeats: int,
                                                    reserve: int) -> None:
    assert repeat_reserve(budget, top, repeats) == reserve


def test_a_resumed_tune_knows_its_repeats_again() -> None:
    stored = [Trial(0, "search", {"t": "(default)"}, "ok", 1.0),
              Trial(1, "search", {"t": "1m"}, "ok", 3.0),
              Trial(2, "search", {"t": "1m"}, "ok", 2.8),
              Trial(3, "confirm", {"t": "1m"}, "ok", 2.9)]
    assert [t.phase for t in mark_repeats(stored)] == ["search", "search", "repeat", "confirm"]


@pytest.fixture
def engine_ok() -> None:
    from iolab.paths import engine_binary

    engine_binary("default")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")


@pytest.mark.parametrize("sampler", ["tpe", "random"])
def test_real_runs_explore_each_point_once_and_the_winner_is_a_repeated_median(
        tmp_path: Path, engine_ok: None, sampler: str) -> None:
    """Null backend with a per-call delay: bigger transfers are really faster, with the
    machine's own noise on every run."""
    from iolab.results import db
    from iolab.results import tunes as store
    from iolab.tune.objective import BenchObjective
    from iolab.tune.space import build_space
    from iolab.tune.workload import parse

    conn = db.connect(tmp_path / "r.db")
    sizes = "128k,192k,256k,384k,512k,768k,1m,1536k,2m,3m"  # 11 points with the default 64k
    space = build_space([], [f"transfer={sizes}"], None, "romio")
    objective = BenchObjective(parse(["-a", "null", "--null.delay-us", "300", "-t", "64k",
                                      "-b", "12m", "--np", "2", "-w"]),
                               db=str(tmp_path / "r.db"))
    tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 10, 0, 1)
    result = ResearchTuner(objective, space, 10, 0, 1, conn, tid,
                           policy=ResearchPolicy(sampler=sampler, repeat_top=2, repeats=3)).run()
    done = mark_repeats(store.trials(conn, tid))
    assert len(done) == 10 and all(t.status == "ok" for t in done), done
    explored = [key_of(t.params) for t in done if t.phase == "search"]
    # at least the exploration share; more when the leader pulled clearly ahead early
    assert len(explored) == len(set(explored)) >= 10 - repeat_reserve(10, 2, 3) == 7
    repeated = {key_of(t.params) for t in done if t.phase == "repeat"}
    assert repeated and repeated <= set(explored)
    scores: dict[str, list[float]] = {}
    for t in done:
        assert t.value is not None
        scores.setdefault(key_of(t.params), []).append(t.value)
    winner = key_of({**space.baseline(), **result.winner})
    most = max(len(v) for v in scores.values())
    assert len(scores[winner]) == most >= 2  # a repeated median, never a single run
    assert median(scores[winner]) == max(median(v) for v in scores.values() if len(v) == most)
    # 300 us a call: 2 MiB and 3 MiB calls are 16-48x faster than 64 KiB ones; whatever the
    # noise, the repeated winner is one of the big transfers TPE or chance found
    assert int(result.winner["transfer"]) >= 512 << 10


def test_sizes_and_counts_are_ordered_around_the_baseline_value() -> None:
    """TPE sees an ordinal knob as an index in numeric order, DEFAULT where the baseline's
    own value lies; enums, and knobs whose baseline value was not read back, stay
    categorical."""
    from iolab.tune.search import encodings
    from iolab.tune.space import DEFAULT, build_space

    space = build_space([], ["transfer=256k,1m,4m", "threads=2,4", "posix.mode=direct"],
                        None, "romio")
    enc = encodings(space, {"transfer": "2097152", "threads": "1", "posix.mode": "sync"})
    assert enc["transfer"].ordinal
    assert enc["transfer"].choices == ("262144", "1048576", DEFAULT, "4194304")
    assert enc["threads"].choices == (DEFAULT, "2", "4") and enc["threads"].ordinal
    assert not enc["posix.mode"].ordinal
    assert enc["posix.mode"].choices == (DEFAULT, "direct")
    for e in enc.values():  # what the sampler is told decodes back to the same value
        assert all(e.decode(e.encode(v)) == v for v in e.choices)
    assert enc["transfer"].encode("8388608") is None  # a value the space does not hold
    unknown = encodings(space, {})
    assert not unknown["transfer"].ordinal and unknown["transfer"].choices[0] == DEFAULT


LAYOUT_SETTINGS = {"transfer": "65536", "layout": "strided", "collective": "false"}


def layout_space() -> tuple[Any, dict[str, list[float]]]:
    """transfer (4 values) x layout (3) x collective (2), where file per process is twice as
    fast, and three recorded runs of each configuration."""
    import itertools
    import json

    from iolab.tune.space import build_space

    space = build_space([], ["transfer=256k,1m,4m", "layout=fpp,segmented", "collective=true"],
                        None, "romio")
    samples = {}
    for combo in itertools.product(*(d.choices for d in space.dimensions)):
        p = dict(zip(space.names, combo))
        value = (2000.0 if p["layout"] == "fpp" else 1000.0) + 10 * len(json.dumps(p))
        samples[key_of(p)] = [value, value * 0.9, value * 1.1]
    return space, samples


def covering_trials(tmp_path: Path, cover: bool, seed: int,
                    contrast: bool = True) -> list[dict[str, str]]:
    """The first four search trials (the baseline and three more) of a replayed tune over
    layout_space()."""
    from tunelab.replay import ReplayObjective

    from iolab.results import db
    from iolab.results import tunes as store

    space, samples = layout_space()
    objective = ReplayObjective(samples, LAYOUT_SETTINGS, seed)
    conn = db.connect(tmp_path / f"r{seed}{cover}{contrast}.db")
    tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 12, 0, seed)
    ResearchTuner(objective, space, 12, 0, seed, conn, tid,
                  policy=ResearchPolicy(cover=cover, contrast=contrast)).run()
    return [t.params for t in store.trials(conn, tid) if t.phase == "search"][:4]


def test_the_covering_start_measures_every_value_of_every_knob_first(tmp_path: Path) -> None:
    """Before the model narrows, every value of every knob has been measured once (the
    largest knob has 4 values: the baseline and three trials). TPE's random start left one
    layout of three out of all 8 exploration runs in a real tune, which then picked a
    layout at half the best's speed."""
    from iolab.tune.space import DEFAULT

    values = {"transfer": {DEFAULT, "262144", "1048576", "4194304"},
              "layout": {DEFAULT, "fpp", "segmented"}, "collective": {DEFAULT, "true"}}
    for seed in range(8):
        first = covering_trials(tmp_path, True, seed)
        assert len({key_of(p) for p in first}) == 4
        for name, want in values.items():
            assert {p[name] for p in first} == want, (seed, name, first)
    # without it (the random start), some seed leaves a value out of those four runs
    missed = 0
    for seed in range(8):
        first = covering_trials(tmp_path, False, seed)
        missed += any({p[name] for p in first} != want for name, want in values.items())
    assert missed > 0


def test_no_covering_start_when_the_exploration_cannot_finish_it(tmp_path: Path) -> None:
    """A budget whose exploration runs cannot measure every value keeps the sampler's own
    start: the same trials as without the covering start (budget 3: the baseline and one
    exploration run for a knob with three unseen values)."""
    from tunelab.replay import ReplayObjective

    from iolab.results import db
    from iolab.results import tunes as store
    from iolab.tune.space import build_space

    space = build_space([], ["transfer=256k,1m,4m"], None, "romio")
    samples = {key_of({"transfer": v}): [100.0 + i, 90.0 + i]
               for i, v in enumerate(space.dimensions[0].choices)}
    picks = []
    for cover in (True, False):
        objective = ReplayObjective(samples, {"transfer": "65536"}, 3)
        conn = db.connect(tmp_path / f"r{cover}.db")
        tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 3, 0, 3)
        ResearchTuner(objective, space, 3, 0, 3, conn, tid,
                      policy=ResearchPolicy(cover=cover)).run()
        picks.append([key_of(t.params) for t in store.trials(conn, tid)])
    assert picks[0] == picks[1] and len(picks[0]) == 3


def test_each_covering_run_differs_from_the_run_before_in_every_knob(tmp_path: Path) -> None:
    """ResearchPolicy.contrast (bench/tunelab; iolab tune's own: on): a run's speed can depend
    on the run before it (a file-view run after another file-view run, on tmpfs at 1 GiB a rank:
    up to 4x), so each covering run takes, for a knob already covered, a value other than the
    run before's: here every covering run differs from the one before it in every knob. In any
    order some seed repeats a value back to back (the covering start still covers: the test
    above)."""
    def back_to_back(runs: list[dict[str, str]]) -> int:
        return sum(a[k] == b[k] for a, b in zip(runs[1:], runs[2:]) for k in a)

    assert all(back_to_back(covering_trials(tmp_path, True, seed)) == 0 for seed in range(8))
    assert any(back_to_back(covering_trials(tmp_path, True, seed, contrast=False)) > 0
               for seed in range(8))


def test_a_value_seen_in_one_slow_run_runs_again_before_the_model_narrows(
        tmp_path: Path) -> None:
    """ResearchPolicy.recheck (bench/tunelab; off in iolab tune): the first file-per-process run
    is a transient at a quarter of its speed (as a real tmpfs run was, right after long runs).
    Once the space is covered, the value seen only in that slow run gets one more run, in
    another configuration, so the model sees file per process at its real speed; with the
    recheck every seed then picks file per process, the layout twice as fast."""
    from tunelab.replay import ReplayObjective

    from iolab.results import db
    from iolab.results import tunes as store

    space, samples = layout_space()

    class FirstFppRunSlow(ReplayObjective):
        def evaluate(self, params, label):  # type: ignore[no-untyped-def]
            out = super().evaluate(params, label)
            if params.get("layout") == "fpp" and not getattr(self, "slowed", False):
                self.slowed = True
                out.value = (out.value or 0.0) / 4
            return out

    for seed in range(6):
        objective = FirstFppRunSlow(samples, LAYOUT_SETTINGS, seed)
        conn = db.connect(tmp_path / f"r{seed}.db")
        tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 12, 0,
                                seed)
        result = ResearchTuner(objective, space, 12, 0, seed, conn, tid,
                               policy=ResearchPolicy(recheck=True)).run()
        search = [t.params for t in store.trials(conn, tid) if t.phase == "search"]
        # the covering start (the baseline and three runs), then the rechecks, the earliest
        # slow run's alone values first: file per process runs again within two runs
        assert [p["layout"] for p in search[:6]].count("fpp") >= 2, (seed, search)
        assert result.winner["layout"] == "fpp", (seed, result.winner)


def test_a_value_hidden_by_the_run_after_the_baseline_runs_again(tmp_path: Path) -> None:
    """ResearchPolicy.recheck_first (bench/tunelab; iolab tune's own: on): on a disk the run
    right after a heavy baseline can run at a fraction of its speed (a real MPI-IO tune on ext4:
    17 of 20 such runs below their point's slowest exhaustive run). When that run was the only
    file-per-process run of the covering start, the model never goes back to file per process
    without the recheck (some seeds pick a shared file at half the best's speed); with it, every
    such seed picks file per process, even when each of that run's values was alone (the largest
    knob is the one drawn again)."""
    from tunelab.replay import ReplayObjective

    from iolab.results import db
    from iolab.results import tunes as store

    space, samples = layout_space()
    hidden, alone_too = {}, 0
    policies = {"without": ResearchPolicy(recheck_first=False), "with": ResearchPolicy(),
                # covering runs in any order: the run after the baseline can then have every
                # value alone (in contrast, the third covering run shares values with it)
                "with, any order": ResearchPolicy(contrast=False)}
    for name, policy in policies.items():
        lone, wrong = 0, 0
        for seed in range(24):
            objective = ReplayObjective(samples, LAYOUT_SETTINGS, seed, carry_over=0.25)
            conn = db.connect(tmp_path / f"r{seed}{name}.db")
            tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 12,
                                    0, seed)
            result = ResearchTuner(objective, space, 12, 0, seed, conn, tid, policy=policy).run()
            search = [t.params for t in store.trials(conn, tid) if t.phase == "search"]
            assert search[0] == space.baseline()
            if search[1]["layout"] == "fpp" and \
                    [p["layout"] for p in search[:4]].count("fpp") == 1:
                lone += 1
                wrong += result.winner.get("layout") != "fpp"
                every_value_alone = all(sum(p[k] == search[1][k] for p in search[:4]) == 1
                                        for k in search[1])
                if policy.recheck_first and every_value_alone:  # all but the transfer kept
                    alone_too += 1
                    assert search[4]["transfer"] != search[1]["transfer"], (seed, search)
                    assert {**search[4], "transfer": ""} == {**search[1], "transfer": ""}
        hidden[name] = (lone, wrong)
    assert hidden["with"][0] >= 3 and hidden["with"][1] == 0, hidden
    assert hidden["with, any order"][0] >= 3 and hidden["with, any order"][1] == 0, hidden
    assert alone_too > 0
    assert hidden["without"][1] > 0, hidden


def test_the_confirmation_alternates_which_side_goes_first(tmp_path: Path) -> None:
    """The confirmation runs baseline, winner, winner, baseline, ...: a run can be slowed by
    the one before it (ReplayObjective.carry_over: the run after a baseline run at half its
    speed). In plain alternation every winner run follows a baseline run, and a winner
    twice as fast measures as fast as the baseline (1.0x); balanced, half of each side's
    runs follow the other side and the estimate keeps most of the gain."""
    from tunelab.replay import ReplayObjective

    from iolab.results import db
    from iolab.results import tunes as store
    from iolab.tune.space import build_space

    space = build_space([], ["layout=fpp,segmented"], None, "romio")
    samples = {"{}": [950.0, 1000.0, 1050.0],
               key_of({"layout": "fpp"}): [1900.0, 2000.0, 2100.0],
               key_of({"layout": "segmented"}): [450.0, 500.0, 550.0]}
    objective = ReplayObjective(samples, {"layout": "strided"}, 0, carry_over=0.5)
    conn = db.connect(tmp_path / "c.db")
    tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 6, 6, 0)
    result = Tuner(objective, space, 6, 6, 0, conn, tid).run()
    assert result.winner == {"layout": "fpp"}
    confirm = [t for t in store.trials(conn, tid) if t.phase == "confirm"]
    sides = "".join("W" if t.params["layout"] == "fpp" else "B" for t in confirm)
    assert sides == "BWWBBWWBBWWB"
    assert result.claim is not None and result.claim.speedup > 1.3, result.claim


def test_a_winner_far_slower_in_the_confirmation_than_in_the_search_is_noted(
        tmp_path: Path) -> None:
    """A winner picked on runs that do not hold (here it runs at 0.4 of its speed once the
    search is over, as a two-valued point does after another kind of run) gets a note: the
    confirmation against the search, and that the claim rests on the confirmation. A winner
    that holds its speed gets none."""
    from tunelab.replay import ReplayObjective

    from iolab.results import db
    from iolab.results import tunes as store
    from iolab.tune.space import build_space

    space = build_space([], ["layout=fpp,segmented"], None, "romio")
    samples = {"{}": [950.0, 1000.0, 1050.0],
               key_of({"layout": "fpp"}): [1900.0, 2000.0, 2100.0],
               key_of({"layout": "segmented"}): [450.0, 500.0, 550.0]}

    class SlowAfterTheSearch(ReplayObjective):
        budget = 3

        def evaluate(self, params, label):  # type: ignore[no-untyped-def]
            self.calls = getattr(self, "calls", 0) + 1
            out = super().evaluate(params, label)
            if self.calls > self.budget and params.get("layout") == "fpp":
                out.value = (out.value or 0.0) * 0.4
            return out

    notes = {}
    for name, cls in (("holds", ReplayObjective), ("slows", SlowAfterTheSearch)):
        objective = cls(samples, {"layout": "strided"}, 0)
        conn = db.connect(tmp_path / f"{name}.db")
        tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 3, 5, 0)
        result = Tuner(objective, space, 3, 5, 0, conn, tid).run()
        assert result.winner == {"layout": "fpp"}, name
        notes[name] = [n for n in result.notes if "in the confirmation against" in n]
    assert notes["holds"] == []
    (note,) = notes["slows"]
    assert "800 MiB/s (median) in the confirmation against 2000 MiB/s in the search (0.40x)" \
        in note, note
