"""iolab tune's research switches live in bench/tunelab, outside the product (issue 30):
the product's Policy keeps only what ``iolab tune`` runs, the stored policy of a tune is
unchanged, and bench/tunelab's ResearchTuner at its defaults runs exactly as iolab tune."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from tunelab.policy import ResearchPolicy, ResearchTuner
from tunelab.replay import ReplayObjective

from iolab.results import db
from iolab.results import tunes as store
from iolab.tune.policy import Policy
from iolab.tune.search import Tuner, key_of
from iolab.tune.space import build_space

# What a tune stored as its "policy" before the switches moved (iolab tune's defaults).
STORED_DEFAULT = {"sampler": "tpe", "repeats": 3, "repeat_top": 3, "rule": "moderated",
                  "repeat_share": 1 / 3, "startup_share": 0.25, "multivariate": True,
                  "group": False, "ei_candidates": 24, "cover": True, "recheck": False,
                  "recheck_first": True, "contrast": True, "second_look": True}


def test_the_stored_policy_of_a_default_tune_is_unchanged() -> None:
    """Expected: the default policy's JSON (stored with every tune) has the same keys, values
    and order as before the research switches moved to bench/ / was: a 14-field dataclass
    dumped whole."""
    assert list(Policy().to_json().items()) == list(STORED_DEFAULT.items())
    assert json.dumps(ResearchPolicy().to_json()) == json.dumps(STORED_DEFAULT)
    stored = Policy(repeats=2, repeat_top=4).to_json()
    assert Policy.from_json({**stored, "added_later": 1}) == Policy(repeats=2, repeat_top=4)


def test_the_product_policy_knows_only_iolab_tunes_rules() -> None:
    """A research winner rule is bench/tunelab's: the product's Policy refuses it, with the
    rules it knows; ResearchPolicy takes it."""
    with pytest.raises(ValueError, match="one of moderated, median"):
        Policy(rule="shrunk")
    assert ResearchPolicy(rule="shrunk").rank({"a": [2.0], "b": [1.0]}, True)["a"] > 0
    assert not hasattr(Policy(), "sampler") and ResearchPolicy(sampler="random").sampler


def layout_samples() -> tuple[object, dict[str, list[float]]]:
    space = build_space([], ["transfer=256k,1m,4m", "layout=fpp,segmented",
                             "collective=true"], None, "romio")
    samples = {}
    for combo in itertools.product(*(d.choices for d in space.dimensions)):
        p = dict(zip(space.names, combo))
        value = (2000.0 if p["layout"] == "fpp" else 1000.0) + 10 * len(json.dumps(p))
        samples[key_of(p)] = [value, value * 0.8, value * 1.3]
    return space, samples


@pytest.mark.parametrize("seed", range(4))
def test_the_research_tuner_at_its_defaults_runs_as_iolab_tune(tmp_path: Path,
                                                                seed: int) -> None:
    """Replays judge iolab tune through ResearchTuner: at ResearchPolicy's defaults it must
    propose, repeat, confirm and pick exactly what iolab tune's Tuner does (a run after the
    baseline slowed, so the recheck and the second look are exercised too)."""
    space, samples = layout_samples()
    got = []
    for name, make in (("product", Tuner), ("research", ResearchTuner)):
        objective = ReplayObjective(samples, {"transfer": "65536", "layout": "strided",
                                              "collective": "false"}, seed, carry_over=0.3,
                                    transient=0.2)
        conn = db.connect(tmp_path / f"{name}.db")
        tid = store.create_tune(conn, ["test"], objective.to_json(), space.to_json(), 12, 3,
                                seed)
        result = make(objective, space, 12, 3, seed, conn, tid).run()  # type: ignore[arg-type]
        trials = [(t.phase, key_of(t.params), t.value) for t in store.trials(conn, tid)]
        got.append((trials, result.to_json()))
    assert got[0] == got[1]
    assert len(got[0][0]) > 12  # the search's budget, then the confirmation
