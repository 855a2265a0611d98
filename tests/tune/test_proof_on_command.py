"""``iolab tune --from-log LOG -- COMMAND``: diagnose's fixes proven on a real command.

The command is progs/proof_app.c, a real MPI-IO program compiled here whose run time depends
by construction on the settings it receives (it reads its hints back and waits): a cb_nodes
hint that ROMIO takes makes it faster, ``romio_cb_write enable`` and an OMPIO aggregator
count make it slower. The logs are the generated Darshan logs whose diagnosis predicts those
settings (an Open MPI/OMPIO job and an independent MPI-IO job).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from statistics import median

import corpus
import pytest

from iolab.stats import fewest_to_judge
from iolab.tune.fromlog import Prediction
from iolab.tune.proof import ROMIO_SWITCH, family_confidence, plan, verdict

pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
LOGS = corpus.GENERATED_DIR
COLL_LOG = LOGS / "mpiio_4ranks_strided4K_coll.darshan"  # OMPIO; predicts cb_nodes, OMPIO aggs
INDEP_LOG = LOGS / "mpiio_4ranks_strided4K_indep.darshan"  # independent: no cb hint
PROG = Path(__file__).resolve().parent / "progs" / "proof_app.c"


def _compile(cc: str, runner: str, out: Path) -> Path:
    if shutil.which(cc) is None or shutil.which(runner) is None:
        pytest.skip(f"{cc} / {runner} are not installed")
    if not COLL_LOG.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    subprocess.run([cc, "-O2", "-Wall", "-o", str(out), str(PROG)], check=True)
    return out


def _tune(tmp: Path, log: Path, command: list[str], *extra: str
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iolab", "tune", "--db", str(tmp / "r.db"), "--from-log",
         str(log), *extra, "--json", "--", *command],
        cwd=tmp, capture_output=True, text=True, timeout=300)


def _never_proven_when_slower(doc: dict) -> None:
    """The promise: a fix whose runs were slower than the unchanged command's is never
    labelled proven faster (lower is better: wall time)."""
    base = median(doc["baseline"]["values"])
    for f in doc["fixes"]:
        if f["values"] and median(f["values"]) >= base:
            assert f["verdict"] != "faster", f


def test_openmpi_ompio_fixes_proven_on_the_command(tmp_path: Path) -> None:
    """Under Open MPI (OMPIO) the OMPIO aggregator count diagnose predicts makes the program
    slower: labelled "slower — do not apply"; the ROMIO hint beside it runs with the ROMIO
    switch (as the fix files pair them) and is never labelled slower; the settings that are
    code changes stay predictions with the reason; every verdict is in diagnose --proof."""
    exe = _compile("mpicc.openmpi", "mpirun.openmpi", tmp_path / "app")
    cmd = ["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root", "-np", "2", str(exe),
           str(tmp_path / "out.dat")]
    out = _tune(tmp_path, COLL_LOG, cmd)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert (doc["schema_version"], doc["kind"], doc["implementation"]) == (1, "proof", "ompio")
    fixes = {f["label"]: f for f in doc["fixes"]}
    ompio = fixes["ompio.num_aggregators=4"]
    assert ompio["verdict"] == "slower" and ompio["text"].startswith("slower — do not apply")
    assert ompio["env"] == {} and ompio["ci_high"] < 1
    romio = next(f for f in doc["fixes"] if f["params"] == {"cb_nodes": "4"})
    assert romio["env"] == ROMIO_SWITCH and romio["verdict"] in ("faster", "no-effect")
    assert romio["speedup"] > 1
    assert all(len(f["values"]) == 4 for f in doc["fixes"]) and len(doc["baseline"]["values"]) == 4
    _never_proven_when_slower(doc)
    unproven = {u["knob"]: u for u in doc["not_proven"]}
    assert {"file-view", "transfer"} <= set(unproven)
    assert "code change" in unproven["transfer"]["reason"]
    # stored like any tune: the runs and the result
    with sqlite3.connect(tmp_path / "r.db") as db:
        status, result = db.execute("SELECT status, result FROM tunes WHERE id = ?",
                                    (doc["id"],)).fetchone()
        runs = db.execute("SELECT COUNT(*) FROM trials WHERE tune_id = ?",
                          (doc["id"],)).fetchone()[0]
    assert status == "done" and json.loads(result)["kind"] == "proof" and runs == 12
    # diagnose shows the verdict next to the fix
    shown = subprocess.run(
        [sys.executable, "-m", "iolab", "diagnose", str(COLL_LOG), "--db", str(tmp_path / "r.db"),
         "--proof", str(doc["id"]), "--json"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["proof_tune_id"] == doc["id"]
    spw = next(f for f in report["findings"] if f["rule_id"] == "single-posix-writer")
    got = {p["setting"]: p["verdict"] for p in spw["proof"]}
    assert got["ompio.num_aggregators=4"] == "slower"


def test_mpich_hint_reaches_the_program_alone_and_no_cb_hint_for_independent_calls(
        tmp_path: Path) -> None:
    """Under MPICH the hints file alone carries ROMIO's hints (no switch): cb_nodes=4,
    predicted for the collective log, reaches the program, which is faster with it by
    construction (never labelled slower). expected: the independent-writes log predicts no
    romio_cb_write (it cannot act on independent calls) / was: romio_cb_write enable."""
    exe = _compile("mpicc.mpich", "mpirun.mpich", tmp_path / "app")
    out = _tune(tmp_path, COLL_LOG, ["mpirun.mpich", "-np", "2", str(exe),
                                     str(tmp_path / "out.dat")])
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["implementation"] == "romio"
    hint = next(f for f in doc["fixes"] if f["params"] == {"cb_nodes": "4"})
    assert hint["env"] == {} and hint["verdict"] != "slower", hint
    _never_proven_when_slower(doc)
    (tmp_path / "i").mkdir()
    indep = _tune(tmp_path / "i", INDEP_LOG, ["true"])
    assert indep.returncode == 0, indep.stderr
    assert "romio_cb_write" not in indep.stdout


def test_a_command_that_fails_unchanged_stores_nothing(tmp_path: Path) -> None:
    """expected: the program's own error line and its exit code, no database / was: (new)."""
    if not COLL_LOG.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    cmd = ["sh", "-c", "echo 'cannot open /nonexistent/in.dat: No such file or directory' >&2;"
           " exit 3"]
    out = _tune(tmp_path, COLL_LOG, cmd)
    assert out.returncode == 3, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot open /nonexistent/in.dat" in lines[0]
    assert out.stdout == "" and not (tmp_path / "r.db").exists()


def test_search_options_are_refused_with_a_proof(tmp_path: Path) -> None:
    if not INDEP_LOG.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    out = _tune(tmp_path, INDEP_LOG, ["true"], "--knob", "cb_nodes=2")
    assert out.returncode == 2 and "--knob is for a search" in out.stderr
    assert not (tmp_path / "r.db").exists()


def _pred(rule: str, knob: str, value: str) -> Prediction:
    return Prediction(rule, rule, knob, value)


PREDS = [_pred("single-posix-writer", "cb_nodes", "4"),
         _pred("single-posix-writer", "ompio.num_aggregators", "4"),
         _pred("small-requests", "romio_cb_write", "enable"),
         _pred("small-requests", "transfer", "4194304")]


def test_plan_under_ompio_never_sends_a_romio_hint_without_the_switch() -> None:
    cands, unproven = plan(PREDS, "ompio", ["mpirun", "./app"], None)
    for c in cands:
        romio = {"cb_nodes", "romio_cb_write"} & set(c.params)
        assert not romio or c.env == ROMIO_SWITCH, c
        assert not (romio and "ompio.num_aggregators" in c.params), c  # two ways, not mixed
    labels = [c.label for c in cands]
    assert len(set(labels)) == len(labels) and len({c.key() for c in cands}) == len(cands)
    # every finding's settings here are one per way, so its group is a setting alone; all
    # the ROMIO hints together is a run of its own
    every = next(c for c in cands if c.group == "all")
    assert every.params == {"cb_nodes": "4", "romio_cb_write": "enable"}
    assert every.env == ROMIO_SWITCH and set(every.rules) == {"single-posix-writer",
                                                                "small-requests"}
    assert [u.knob for u in unproven] == ["transfer"]


def test_plan_under_romio_leaves_ompio_parameters_predicted() -> None:
    cands, unproven = plan(PREDS, "romio", ["mpirun", "./app"], None)
    assert all(c.env == {} and "ompio.num_aggregators" not in c.params for c in cands)
    why = {u.knob: u.reason for u in unproven}
    assert "runs ROMIO" in why["ompio.num_aggregators"] and "code change" in why["transfer"]
    every = next(c for c in cands if c.group == "all")
    assert every.params == {"cb_nodes": "4", "romio_cb_write": "enable"}


def test_verdicts_read_the_interval() -> None:
    fast, slow = [1.0, 1.02, 0.98, 1.01], [2.0, 2.1, 1.9, 2.05]
    assert verdict(fast, slow, [], maximize=False)["verdict"] == "slower"
    assert verdict(slow, fast, [], maximize=False)["verdict"] == "faster"
    few = verdict(fast[:3], slow[:3], [], maximize=False)
    assert few["verdict"] == "no-effect" and "too few runs" in few["text"]
    failed = verdict(fast, slow[:2], ["exit code 3: boom"], maximize=False)
    assert failed["verdict"] == "failed" and "do not apply" in failed["text"]


def test_many_candidates_are_judged_family_wise() -> None:
    """expected: with 8 candidates each interval is a 1 - 0.05/8 one, so 4 runs a side (a
    1-in-70 chance of a clean split) cannot prove a setting and 5 can / was: each at 95%,
    a 1-in-3 chance that one of 8 settings that change nothing was "proven faster"."""
    level = family_confidence(8)
    assert level == pytest.approx(1 - 0.05 / 8)
    base, lucky = [2.0, 2.1, 1.9, 2.05], [1.0, 1.02, 0.98, 1.01]
    assert verdict(base, lucky, [], maximize=False)["verdict"] == "faster"
    four = verdict(base, lucky, [], maximize=False, confidence=level)
    assert four["verdict"] == "no-effect" and "5 a side are needed" in four["text"]
    five = verdict([*base, 2.02], [*lucky, 0.99], [], maximize=False, confidence=level)
    assert five["verdict"] == "faster" and "99.4% CI" in five["text"]
    assert fewest_to_judge(level) == 5 and fewest_to_judge(family_confidence(1)) == 4
