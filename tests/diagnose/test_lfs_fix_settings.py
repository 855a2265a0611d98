"""diagnose's Lustre fixes carry their layouts as data: the catalogue's ``lfs`` rows.

Expected / was: a striping finding's ``fix.settings`` (JSON) lists each file's stripe count
and stripe size as ``lfs.stripe_count`` / ``lfs.stripe_size`` settings, the ``lfs setstripe``
lines of its script are written from them (iolab.settings.apply.lfs_words_of) and
``iolab tune --from-log`` predicts the lfs knobs from them / was: the layout existed only as
the rendered script, ``fix.settings`` was empty and tune predicted no lfs knob.

The three are checked against each other by running the emitted script on a simulated file
system (artifact_check.lfs_run: the ``lfs`` calls it makes), on logs written with
libdarshan-util (Lustre records) and on the corpus logs that get a striping finding.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import corpus
import pytest
import test_stripe_count as stripe_cases
from artifact_check import lfs_run
from darshan_writer import Lustre, Rec, write_log
from diagnose_logs import ALL_LOGS

import iolab
from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import Report, diagnose, to_dict
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log
from iolab.tune.fromlog import predictions
from iolab.units import parse_size

pytestmark = pytest.mark.usefixtures("darshan_available")
MiB = 1 << 20
RESTRIPE = ".iolab-restripe"


def _mismatch_log(tmp_path: Path) -> Path:
    """768 KiB requests on a 4 x 1 MiB file: stripe-size-mismatch (the count is kept)."""
    path, n, req = "/scratch/run/mis.dat", 4000, 768 * 1024
    recs = [Rec("POSIX", path, -1, {
        "POSIX_OPENS": 4, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * req,
        "POSIX_MAX_BYTE_WRITTEN": n * req - 1, "POSIX_ACCESS1_ACCESS": req,
        "POSIX_ACCESS1_COUNT": n, "POSIX_F_WRITE_TIME": 40.0,
        "POSIX_F_SLOWEST_RANK_TIME": 12.0})]
    return write_log(tmp_path / "mismatch.darshan", nprocs=4, run_time_s=60.0,
                     exe="/home/u/sim", records=recs, lustre=[Lustre(path, MiB, 4)])


def _lfs_findings(rep: Report) -> list:
    return [f for f in rep.findings if any(a.kind == "lfs" for a in f.fix.artifacts)]


def _layouts(settings) -> dict[str, dict[str, str]]:
    """path -> {lfs row: value} of the lfs settings."""
    out: dict[str, dict[str, str]] = {}
    for s in settings:
        if s.library == "lfs":
            for p in s.paths:
                out.setdefault(p, {})[s.name] = s.value
    return out


def _check_agree(rep: Report) -> int:
    """Script, JSON and tune's predictions agree for every lfs fix; the number of files."""
    docs = to_dict(rep)["findings"]
    assert [d["rule_id"] for d in docs] == [f.rule.id for f in rep.findings]
    checked = 0
    for f, fdoc in zip(rep.findings, docs):
        if f not in _lfs_findings(rep):
            continue
        layouts = _layouts(f.fix.settings)
        assert layouts, f"{f.rule.id}: an lfs script and no lfs settings"
        # the JSON lists the same settings
        got = fdoc["fix"]["settings"]
        assert {(s["setting"], s["value"], tuple(s["paths"])) for s in got
                if s["library"] == "lfs"} == {(s.name, s.value, s.paths)
                                              for s in f.fix.settings if s.library == "lfs"}
        for art in (a for a in f.fix.artifacts if a.kind == "lfs"):
            calls, err, rc = lfs_run(art, 2000)  # every planned count fits: "$c" is it
            assert rc == 0, err
            ran = [c for c in calls if c[:2] == ["lfs", "setstripe"]]
            # every layout is run, but the next run's directory (a comment to follow)
            assert {c[-1].removesuffix(RESTRIPE) for c in ran} == {
                p for p in _layouts(art.settings) if not p.endswith("/iolab-striped")}
            for cmd in ran:
                target = cmd[-1].removesuffix(RESTRIPE)
                opts = dict(zip(cmd[2:-1:2], cmd[3:-1:2]))
                want = layouts[target]
                assert opts["-c"] == want["lfs.stripe_count"], (target, cmd, want)
                assert parse_size(opts["-S"]) == int(want["lfs.stripe_size"]), (cmd, want)
                checked += 1
    # tune --from-log predicts what the costliest lfs fix sets for its first file
    preds = {p.knob: p for p in predictions(rep)}
    first = next((f for f in rep.findings if _layouts(f.fix.settings)), None)
    if first is not None:
        layout = next(iter(_layouts(first.fix.settings).values()))
        for knob in ("lfs.stripe_count", "lfs.stripe_size"):
            assert preds[knob].value == layout[knob], (knob, preds[knob], layout)
    return checked


@pytest.mark.parametrize("case", sorted(stripe_cases.CASES))
def test_lfs_fix_settings_agree_with_script_and_tune(tmp_path: Path, case: str) -> None:
    """expected: fix.settings holds each file's lfs layout, the script runs it, tune predicts
    it / was: no lfs settings, no lfs prediction."""
    _, rep = stripe_cases._diagnose(tmp_path, case)
    assert _check_agree(rep) >= 1


def test_stripe_size_fix_keeps_count_as_data(tmp_path: Path) -> None:
    """expected: the stripe-size fix's layout is 4 x 768K as settings (count kept, size
    changed) and its line is unchanged / was: only the rendered line."""
    rep = diagnose(build_model([load_darshan_log(_mismatch_log(tmp_path))]), Thresholds())
    (f,) = [f for f in rep.findings if f.rule.id == "stripe-size-mismatch"]
    assert _layouts(f.fix.settings)["/scratch/run/mis.dat"] == {
        "lfs.stripe_count": "4", "lfs.stripe_size": str(768 * 1024)}
    (art,) = [a for a in f.fix.artifacts if a.kind == "lfs"]
    assert ("lfs setstripe -c 4 -S 768K /scratch/run/mis.dat.iolab-restripe && cp -p "
            "/scratch/run/mis.dat /scratch/run/mis.dat.iolab-restripe" in art.content)
    assert _check_agree(rep) == 1


def test_new_directories_for_many_files_carry_their_layout(tmp_path: Path) -> None:
    """expected: files-per-directory's small_files_dirs.lfs.sh (a new directory with one 1 MiB
    stripe) is data too: lfs.stripe_count 1 and lfs.stripe_size 1 MiB for that directory,
    which its mkdir + lfs setstripe line runs / was: the line only."""
    many = "/scratch/run/many"
    recs = [Rec("POSIX", f"{many}/f{i}.dat", i % 16, {
        "POSIX_OPENS": 1, "POSIX_WRITES": 1, "POSIX_BYTES_WRITTEN": 4096,
        "POSIX_MAX_BYTE_WRITTEN": 4095, "POSIX_F_META_TIME": 0.05,
        "POSIX_F_WRITE_TIME": 0.001}) for i in range(1200)]
    log = write_log(tmp_path / "many.darshan", nprocs=16, run_time_s=100.0, exe="/home/u/sim",
                    records=recs, lustre=[Lustre(f"{many}/f{i}.dat", MiB, 1) for i in range(1200)])
    rep = diagnose(build_model([load_darshan_log(log)]), Thresholds())
    (f,) = [f for f in rep.findings if f.rule.id == "files-per-directory"]
    assert _layouts(f.fix.settings) == {f"{many}/iolab-c1": {
        "lfs.stripe_count": "1", "lfs.stripe_size": str(MiB)}}
    (art,) = [a for a in f.fix.artifacts if a.kind == "lfs"]
    assert f"mkdir {many}/iolab-c1 && lfs setstripe -c 1 -S 1M {many}/iolab-c1" in art.content
    assert _check_agree(rep) == 1


def test_lfs_line_unchanged_with_lfs_df(tmp_path: Path) -> None:
    """expected: the line whose count `lfs df` may lower still writes "$c" (the planned count
    is the setting's value) / was: the same line, from a builder that took no data."""
    _, rep = stripe_cases._diagnose(tmp_path, "200GB-4-ranks")
    (f,) = _lfs_findings(rep)
    (art,) = f.fix.artifacts
    assert ('lfs setstripe -c "$c" -S 1M /scratch/run/out.dat.iolab-restripe'
            in art.content)
    assert _layouts(f.fix.settings)["/scratch/run/out.dat"]["lfs.stripe_count"] == "72"
    json.dumps(to_dict(rep))


# the corpus logs whose golden findings include a striping rule
_GOLDEN = json.loads((Path(__file__).parent / "golden" / "findings.json").read_text())
STRIPED_CORPUS = [p for p in ALL_LOGS if any(
    "stripe-" in f for k, fs in _GOLDEN.items() if k.endswith("/" + p.name) for f in fs)]


@pytest.mark.parametrize("path", STRIPED_CORPUS, ids=lambda p: p.name[:40])
def test_corpus_lfs_fixes_agree(path: Path) -> None:
    """expected: on the corpus logs with a striping finding, script, JSON and predictions
    agree / was: fix.settings empty for lfs fixes."""
    rep = diagnose(build_model([load_darshan_log(path)]), Thresholds())
    assert _check_agree(rep) >= 1


def test_corpus_has_striped_logs() -> None:
    """expected: the corpus test above runs on logs (an empty selection must not pass)."""
    if not corpus.REAL_LOGS:
        pytest.skip(corpus.REAL_MISSING)
    assert len(STRIPED_CORPUS) >= 8


def test_tune_from_log_predicts_the_lfs_layout(tmp_path: Path) -> None:
    """expected: `iolab tune --from-log LOG` runs (exit 0) and lists diagnose's lfs layout as
    predictions, the values `iolab diagnose --json` carries; without `lfs` here they are
    judged "not measured here" / was: no lfs prediction (and once predicted, a tune without
    `lfs` on PATH would have refused its own predicted knob)."""
    size, ranks, coll, *_ = stripe_cases.CASES["4GB-64-independent"]
    log = write_log(tmp_path / "shared.darshan", nprocs=ranks, run_time_s=600.0,
                    exe="/home/u/sim -i in.nml",
                    records=stripe_cases._shared_file(size, ranks, coll),
                    lustre=[Lustre(stripe_cases.OUT, MiB, 1)])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(Path(iolab.__file__).parents[1]), os.environ.get("PYTHONPATH")]))}
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("OMPI_MCA_btl", "self,vader")
    diag = subprocess.run([sys.executable, "-m", "iolab", "diagnose", "--json", str(log)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert diag.returncode == 0, diag.stderr
    (stripe,) = [f for f in json.loads(diag.stdout)["findings"]
                 if f["rule_id"] == "stripe-shared-file"]
    want = {s["setting"]: s["value"] for s in stripe["fix"]["settings"]
            if s["paths"] == [stripe_cases.OUT]}
    assert want == {"lfs.stripe_count": "8", "lfs.stripe_size": str(MiB)}
    tune = subprocess.run(
        [sys.executable, "-m", "iolab", "tune", "--db", str(tmp_path / "r.db"), "--from-log",
         str(log), "--proxy-ranks", "2", "--proxy-bytes", "256k", "--trials", "3",
         "--confirm", "2", "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert tune.returncode == 0, tune.stderr
    preds = {p["knob"]: p for p in json.loads(tune.stdout)["predictions"]}
    assert {k: preds[k]["value"] for k in want} == want
    assert all(preds[k]["rule"] == "stripe-shared-file" for k in want)
    if shutil.which("lfs") is None:
        assert all("'lfs' command is not on PATH" in preds[k]["why"] for k in want)
