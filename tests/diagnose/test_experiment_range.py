"""Experiments' gains as a range of seconds from the job's own numbers (issue #27 item 2).

Expected / was: "stripe the shared file" on a 512-rank job whose one-OST checkpoint a lone
aggregator writes: "may save 90.0 s to ..." with the worst case the seconds no waste finding
explains, in text, JSON and HTML, ranking nothing / was: one "may save up to 90.0 s", as if
the single writer's fix would not take the same seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from darshan_writer import Lustre, write_log
from test_cross_layer_rules import _one_writer_records, _rmw_records

from iolab.cli import main
from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
MiB = 1 << 20


def _log(tmp_path: Path) -> Path:
    return write_log(tmp_path / "prod.darshan", nprocs=512, run_time_s=200.0, exe="./sim",
                     records=_one_writer_records(512) + _rmw_records(512),
                     lustre=[Lustre("/scratch/run/ckpt.dat", 4 * MiB, 1),
                             Lustre("/scratch/run/field.dat", 4 * MiB, 16)])


def test_experiment_gain_is_a_range_net_of_the_waste(tmp_path: Path, capsys) -> None:
    log = _log(tmp_path)
    rep = diagnose(build_model([load_darshan_log(log)], nodes=16), Thresholds())
    writer = next(f for f in rep.findings if f.rule.id == "single-posix-writer")
    stripe = next(f for f in rep.findings if f.rule.id == "stripe-shared-file")
    low, high = stripe.estimate_range_s or (None, None)
    assert high == stripe.estimate_s and low is not None and 0 <= low < high
    # the writer owns most of the checkpoint's write time: what is left is the worst case
    owned = sum(s for p, k, s in writer.owned if p == "/scratch/run/ckpt.dat")
    assert owned > 0 and low <= high - owned * 0.5
    assert stripe.cost_s is None  # still owns nothing
    # ranking unchanged: experiments by their estimate, after the waste of their severity
    exps = [f for f in rep.findings if f.rule.experiment]
    assert [f.estimate_s for f in exps] == sorted((f.estimate_s or 0.0 for f in exps),
                                                  reverse=True)
    text = stripe.cost_text()
    assert text.startswith("may save ") and " to " in text and "to be proven" in text
    assert main(["diagnose", "--json", "--nodes", "16", str(log)]) == 0
    doc = json.loads(capsys.readouterr().out)
    js = next(f for f in doc["findings"] if f["rule_id"] == "stripe-shared-file")
    assert js["estimated_gain_range_s"] == [pytest.approx(low, abs=1e-5),
                                            pytest.approx(high, abs=1e-5)]
    assert all(f["estimated_gain_range_s"] is None for f in doc["findings"]
               if f["kind"] == "waste")
    html = tmp_path / "r.html"
    assert main(["diagnose", "--html", str(html), "--nodes", "16", str(log)]) == 0
    capsys.readouterr()
    assert " ".join(text.split()[:5]) in " ".join(html.read_text().split())
