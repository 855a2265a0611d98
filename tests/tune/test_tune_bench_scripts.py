"""bench/tune_efficiency and bench/tune_btio still run: a tiny real space, a replay of its
exhaustive runs, the plan of the BTIO tune. Only that the scripts work and write their
section: their numbers come from the lead's runs on an idle machine."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / name), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def test_efficiency_small_space_then_its_replay(tmp_path: Path) -> None:
    from iolab.paths import engine_binary

    engine_binary("default")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n<!-- other:begin -->\nkept\n<!-- other:end -->\n")
    run = script("tune_efficiency", "--space", "small", "--repeat", "1", "--seeds", "1",
                 "--head-to-head", "1", "--confirm", "2", "--block", "1m", "--dir",
                 str(tmp_path), "--output", str(doc), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "8 configurations x 1 rounds = 8 exhaustive runs" in run.stdout
    text = doc.read_text()
    assert "kept" in text and text.count("<!-- tune_efficiency:begin -->") == 1
    rows = re.findall(r"^\| (iolab tune \(TPE, repeats\)|random search \(same repeats\)) \| 1 "
                      r"\| ([\d.]+)% \|", text, re.M)
    assert len(rows) == 2 and all(0 < float(share) <= 100 for _, share in rows)
    # each search's pick ran again against the exhaustive best: a share, not a copy of the
    # exhaustive one (1.0 exactly only when it picked the best)
    fresh = re.findall(r"^\| (?:iolab tune|random search).* \| ([\d.]+)% \(([\d.]+)%\) \| "
                       r"([\d.]+)% \|$", text, re.M)
    assert len(fresh) == 4 and all(0 < float(mean) for mean, _, _ in fresh), text
    # each pick counted at 100% at most: never above the plain mean, never above 100
    assert all(float(capped) <= min(100.0, float(mean)) for mean, _, capped in fresh), text
    # each search ends with iolab tune's confirmation; its pick before a second look is a
    # row of its own
    assert "Then iolab tune's confirmation: 2 runs each" in text
    assert text.count(": the search's pick (before the second look) | 1 |") == 2
    assert "and 8 confirmation runs (x2 for each second look)" in run.stdout
    assert "winner's curse" in text and "own pick, chosen on all but two" not in text
    (saved,) = tmp_path.glob("iolab-tune-eff-*/exhaustive.json")
    exhaustive = json.loads(saved.read_text())
    assert len(exhaustive["samples"]) == 8 and exhaustive["settings"]["posix.mode"] == "sync"
    # the point run right before each run: one round, so every point but the first
    # follows another one, and each point is some run's predecessor but the last
    before = [b for runs in exhaustive["before"].values() for b in runs]
    assert before.count(None) == 1 and len(set(before) - {None}) == 7
    assert set(before) - {None} <= set(exhaustive["samples"])
    # the run's picks, a row per search and seed, for --pool
    picks = json.loads((saved.parent / "picks.json").read_text())
    assert picks["space"] == "small" and not picks["replayed"]
    (tpe_pick,) = picks["searches"]["iolab tune (TPE, repeats)"]
    assert tpe_pick["pick"] in exhaustive["samples"] and 0 < tpe_pick["share"] <= 1
    assert tpe_pick["head_to_head"] > 0
    replay = script("tune_efficiency", "--space", "small", "--seeds", "5", "--replay",
                    str(saved), "--output", str(doc), "--dir", str(tmp_path), cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert "0 exhaustive runs" in replay.stdout and "(replayed, not run)" in replay.stdout
    text = doc.read_text()
    assert "Searches replayed from those runs" in text
    # five seeds: each mean with its interval over the seeds, and the goal's verdict
    means = re.findall(r"^\| random search \(same repeats\) \| 5 \| ([\d.]+)% "
                       r"\[([\d.]+)%-([\d.]+)%\] \|", text, re.M)
    assert len(means) == 1 and float(means[0][1]) <= float(means[0][0]) <= float(means[0][2])
    assert re.search(r"^Goal \(95% of the best on average\), iolab tune \(TPE, repeats\): "
                     r"by the exhaustive medians [\d.]+% \[.*\]: (met|not met|not told apart "
                     r"from 95% by these seeds)\.$", text, re.M), text
    assert "head to head" not in text  # a replay runs nothing new
    # --pool: the real run's seeds pooled by space and in all; a replay is no real run
    pooled = script("tune_efficiency", "--pool", str(saved.parent), cwd=tmp_path)
    assert pooled.returncode == 0, pooled.stderr
    assert re.search(r"^\| small \| iolab tune \(TPE, repeats\) \| 1 \| 1 \| [\d.]+% \| "
                     r"[\d.]+% \|$", pooled.stdout, re.M), pooled.stdout
    assert "| all | random search (same repeats) | 1 | 1 |" in pooled.stdout
    replayed = [d for d in tmp_path.glob("iolab-tune-eff-*") if d != saved.parent]
    for bad in (*replayed, tmp_path):
        refused = script("tune_efficiency", "--pool", str(saved.parent), str(bad), cwd=tmp_path)
        assert refused.returncode == 2 and "--pool" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr


def test_btio_tune_plan(tmp_path: Path) -> None:
    run = script("tune_btio", "--dry-run", "--trials", "12", "--confirm", "5", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    plan, command = run.stdout.strip().splitlines()
    assert plan.startswith("2 tune(s) x (12 search + 2 x 5 confirmation runs) = 44 BTIO runs")
    for word in ("--time-limit", "--knob=romio_no_indep_rw=true", "--workload btio",
                 "--mpi mpich", "--confirm 5"):
        assert word in command


def test_btio_rows_say_what_the_tune_left_out_and_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A winner only in knobs that do not act on independent calls is no winner: the row
    gives the tune's own reason and the knobs left out, not "no configuration beat the
    defaults" (one did, in the search, by noise)."""
    import importlib.machinery
    import importlib.util

    monkeypatch.syspath_prepend(str(BENCH))
    loader = importlib.machinery.SourceFileLoader("tune_btio", str(BENCH / "tune_btio"))
    spec = importlib.util.spec_from_loader("tune_btio", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    notes = ["cb_config_list: it acts inside collective MPI-IO calls only, and the winner's "
             "calls are independent, left out",
             "the search's best differs from the defaults only in knobs that do not act here: "
             "keep the defaults"]
    doc = {"status": "done", "winner": {}, "claim": None, "baseline_score": 285.0,
           "notes": notes, "left_out": {"cb_config_list": "it acts inside collective MPI-IO "
                                        "calls only, and the winner's calls are independent"}}
    assert module.row("independent", doc) == (
        "| MPI independent | 285 | – | – | – | the search's best differs from the defaults "
        "only in knobs that do not act here: keep the defaults | (defaults) (left out: "
        "cb_config_list) | – |")
    doc["notes"], doc["left_out"] = [], {}
    assert "no configuration beat the defaults in the search | (defaults) |" in \
        module.row("independent", doc)


def test_efficiency_direct_space_plan(tmp_path: Path) -> None:
    """The second space: O_DIRECT / O_DSYNC writes only, at least 48 points, its own
    section of docs/benchmarks.md."""
    run = script("tune_efficiency", "--space", "direct", "--dry-run", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("64 configurations x 5 rounds = 320 exhaustive runs; "
                                 "2 searches x 5 seeds x 16 runs"), run.stdout
    assert "each 2 x 16m" in run.stdout


def test_efficiency_mpiio_space_plan(tmp_path: Path) -> None:
    """The third space: MPI-IO on tmpfs, transfer x layout x collective x file view (48
    points), its own section."""
    run = script("tune_efficiency", "--space", "mpiio", "--dry-run", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("48 configurations x 5 rounds = 240 exhaustive runs; "
                                 "2 searches x 5 seeds x 12 runs"), run.stdout
    assert "each 2 x 256m" in run.stdout


def test_variants_replay_a_synthetic_set(tmp_path: Path) -> None:
    """bench/tune_variants writes a synthetic exhaustive set (72 points x 5 runs, heavy
    tails) and replays policies on it: one row per policy, shares that make sense."""
    synth = tmp_path / "synth.json"
    made = script("tune_variants", "--make-synthetic", str(synth), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    doc = json.loads(synth.read_text())
    assert len(doc["samples"]) == 72 and all(len(v) == 5 for v in doc["samples"].values())
    run = script("tune_variants", "--seeds", "2", "--only", "(s4)", "--in-order",
                 "--only", "random, lower", str(synth), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    # a synthetic set has no run order: said once, and the replays run without one
    assert run.stdout.startswith("synth.json: no order effect recorded"), run.stdout
    rows = re.findall(r"^\| (.+?) \| ([\d.]+)% / (\d+)% / (\d) / ([\d.]+)% \|$", run.stdout,
                      re.M)
    assert [r[0] for r in rows] == ["median winner (s4)", "random, lower-bound winner"], run.stdout
    for _, mean, worst, hits, ceiling in rows:
        # a pick is never better than the best configuration its search measured
        assert 0 < int(worst) <= float(mean) <= float(ceiling) <= 100
        assert int(hits) <= 2
    # replayed by tune_efficiency (the synthetic set is its full space), the table shows
    # beside the searches what the exhaustive search's own pick is worth on held-out runs
    doc = tmp_path / "benchmarks.md"
    eff = script("tune_efficiency", "--space", "full", "--seeds", "1", "--replay", str(synth),
                 "--output", str(doc), "--dir", str(tmp_path), cwd=tmp_path)
    assert eff.returncode == 0, eff.stderr
    own = re.search(r"^\| exhaustive search's own pick .* \| 2000 splits \| ([\d.]+)% \| "
                    r"([\d.]+)% \(10th percentile\) \| (\d+)% of splits \| – \|$",
                    doc.read_text(), re.M)
    assert own, doc.read_text()
    mean, p10, hits = (float(g) for g in own.groups())
    assert 0 < p10 <= mean < 120 and 0 <= hits <= 100
    assert f"is worth {mean:.0f}% of the best median" in doc.read_text()


def test_held_out_picks_measure_the_winners_curse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exhaustive pick valued on runs it was not chosen on: about the best median when
    one point stands clear of the noise; well below it on a plateau of equal points whose
    runs spread (the largest median of many is the luckiest)."""
    import importlib.machinery
    import importlib.util
    import random

    monkeypatch.syspath_prepend(str(BENCH))  # the script imports benchdoc from bench/
    loader = importlib.machinery.SourceFileLoader("tune_efficiency", str(BENCH / "tune_efficiency"))
    spec = importlib.util.spec_from_loader("tune_efficiency", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "tune_efficiency", module)  # for its dataclasses
    loader.exec_module(module)
    rng = random.Random(3)
    plateau = {f"p{i}": [rng.uniform(700, 1300) for _ in range(5)] for i in range(40)}
    clear = {**plateau, "top": [rng.uniform(3900, 4100) for _ in range(5)]}
    def mean(samples: dict[str, list[float]]) -> float:
        picks = module.held_out_picks(samples, draws=200)
        assert len(picks) == 200
        return float(sum(picks) / len(picks))

    assert mean(clear) > 0.97
    assert mean(plateau) < 0.9
    assert module.held_out_picks({"a": [1.0, 2.0]}) is None  # too few runs to split
    # one value a split: a split's two held-out runs can beat the best median, or fall short
    picks = module.held_out_picks(plateau, draws=200)
    assert max(picks) > 1.0 > min(picks)
