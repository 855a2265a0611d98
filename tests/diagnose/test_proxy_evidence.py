"""``iolab diagnose LOG --proof PROXY_TUNE``: beside each fix that needs a code change, the
judgement of a proxy tune of the same log (``iolab tune --from-log LOG`` without a command),
labelled as evidence from a proxy, never as a proof on the application; settings keep the
verdict of the proof on the command (``--proof A --proof B``: one of each kind).

The proxy tune is real and small: the MPI-IO proxy of the collective-writes log (2 ranks,
256 KiB a rank, 3 trials, 2 confirmation runs a side), which tunes diagnose's code changes
(``file-view``, ``transfer``) with its settings. The proof on the command is the one of
tests/diagnose/test_proof_shown.py: a shell slowed by a ``cb_nodes`` hint, so ``cb_nodes=4``
is "slower — do not apply" by construction.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import corpus
import pytest
from one_host_mpi import one_host_open_mpi  # noqa: F401 (autouse: the proxy tune's bench runs start faster)

from iolab.diagnose.proof import PROXY_WORDS, ProxyEvidence
from iolab.tune.fromlog import judge

pytestmark = pytest.mark.usefixtures("darshan_available")
LOG = corpus.GENERATED_DIR / "mpiio_4ranks_strided4K_coll.darshan"
OTHER = corpus.GENERATED_DIR / "mpiio_4ranks_strided4K_indep.darshan"
SLOWED_BY_HINT = ["sh", "-c", 'grep -qs "cb_nodes" "$ROMIO_HINTS" && sleep 0.3; sleep 0.05']
SMALL_PROXY = ["--proxy-ranks", "2", "--proxy-bytes", "256k", "--trials", "3", "--confirm",
               "2", "--json"]
LABEL = "on a proxy of your I/O, not a proof on the application: "


def _iolab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _tune(db: Path, log: Path, *extra: str) -> dict[str, Any]:
    out = _iolab("tune", "--db", str(db), "--from-log", str(log), *extra, cwd=db.parent)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


@pytest.fixture(scope="module")
def tunes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int, dict[str, Any]]:
    """The results database, a proxy tune of LOG, a proof on the command of LOG, and the
    proxy tune's judged predictions by knob."""
    if not LOG.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    db = tmp_path_factory.mktemp("proxy") / "r.db"
    proxy = _tune(db, LOG, *SMALL_PROXY)
    proof = _tune(db, LOG, "--json", "--", *SLOWED_BY_HINT)
    return db, int(proxy["id"]), int(proof["id"]), {p["knob"]: p for p in proxy["predictions"]}


def _expected(judged: dict[str, Any]) -> str:
    """The proxy verdict a judged prediction must show as (the tune's own judgement)."""
    if judged["confirmed"]:
        return "confirmed"
    if judged["why"].startswith("not measured"):
        return "not-measured"
    return "no-gain" if "no significant gain" in judged["why"] else "other-value"


def _diagnose_json(db: Path, *ids: int, cwd: Path) -> dict[str, Any]:
    args = [a for i in ids for a in ("--proof", str(i))]
    out = _iolab("diagnose", str(LOG), "--db", str(db), *args, "--json", cwd=cwd)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def _items(doc: dict[str, Any], rule: str) -> dict[str, dict[str, Any]]:
    finding = next(f for f in doc["findings"] if f["rule_id"] == rule)
    return {p["setting"]: p for p in finding["proof"]}


def test_a_code_change_shows_the_proxy_judgement(tunes: tuple[Path, int, int, dict[str, Any]],
                                                 tmp_path: Path) -> None:
    """expected: the code change transfer=4194304 carries the proxy tune's judgement, labelled
    as a proxy's evidence / was: "predicted, not proven here" alone, a proxy tune refused as
    "a search, not a proof"."""
    db, proxy_id, _, judged = tunes
    html = tmp_path / "page.html"
    text = _iolab("diagnose", str(LOG), "--db", str(db), "--proof", str(proxy_id), "--html",
                  str(html), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    flat = " ".join(text.stdout.split())
    verdict = _expected(judged["transfer"])
    assert (f"proxy: transfer=4194304: {LABEL}{PROXY_WORDS[verdict]} "
            f"({judged['transfer']['why']}") in flat
    assert f"(proxy tune {proxy_id})" in flat and "proven faster" not in flat
    assert f"<b>Proxy:</b> transfer=4194304: {LABEL}{PROXY_WORDS[verdict]}" in html.read_text()
    doc = _diagnose_json(db, proxy_id, cwd=tmp_path)
    assert doc["proxy_tune_id"] == proxy_id and doc["proof_tune_id"] is None
    small = _items(doc, "small-requests")["transfer=4194304"]
    assert small["verdict"] == "predicted"  # a proxy never proves a fix on the application
    assert small["proxy"]["verdict"] == verdict and small["proxy"]["tune_id"] == proxy_id
    assert small["proxy"]["winner"] == judged["transfer"]["winner"]
    view = _items(doc, "tiny-collective-calls")["file-view=true"]
    assert view["proxy"]["verdict"] == _expected(judged["file-view"])
    # settings get no proxy part: without a proof on the command they stay predictions
    writer = _items(doc, "single-posix-writer")
    assert list(writer) == [None] and "proxy" not in writer[None]


@pytest.mark.parametrize("order", ["proof first", "proxy first"])
def test_proof_and_proxy_together(tunes: tuple[Path, int, int, dict[str, Any]], tmp_path: Path,
                                  order: str) -> None:
    """Settings keep the command proof's verdict; code changes keep "predicted, not proven
    here" from the proof and gain the proxy's judgement."""
    db, proxy_id, proof_id, judged = tunes
    ids = (proof_id, proxy_id) if order == "proof first" else (proxy_id, proof_id)
    doc = _diagnose_json(db, *ids, cwd=tmp_path)
    assert (doc["proof_tune_id"], doc["proxy_tune_id"]) == (proof_id, proxy_id)
    writer = _items(doc, "single-posix-writer")
    assert writer["cb_nodes=4"]["verdict"] == "slower" and "proxy" not in writer["cb_nodes=4"]
    small = _items(doc, "small-requests")["transfer=4194304"]
    assert small["verdict"] == "predicted" and "a change in the program's own" in small["text"]
    assert small["proxy"]["verdict"] == _expected(judged["transfer"])
    text = _iolab("diagnose", str(LOG), "--db", str(db), *[a for i in ids
                  for a in ("--proof", str(i))], cwd=tmp_path).stdout
    flat = " ".join(text.split())
    assert "cb_nodes=4: slower — do not apply" in flat and f"(proof {proof_id})" in flat
    assert f"proxy: transfer=4194304: {LABEL}" in flat


def test_a_proxy_tune_of_another_log_is_refused(tunes: tuple[Path, int, int, dict[str, Any]],
                                                tmp_path: Path) -> None:
    """expected: one line, exit 2, no file written / was: (new)."""
    db, _, proof_id, _ = tunes
    if not OTHER.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    other = _tune(db, OTHER, "--proxy-ranks", "2", "--proxy-bytes", "128k", "--trials", "2",
                  "--confirm", "2", "--json")
    html = tmp_path / "page.html"
    out = _iolab("diagnose", str(LOG), "--db", str(db), "--proof", str(proof_id), "--proof",
                 str(other["id"]), "--html", str(html), cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == "" and not html.exists()
    assert out.stderr.count("\n") == 1 and "is a proxy of" in out.stderr
    assert "another job than this log's" in out.stderr


@pytest.mark.parametrize("kind", ["two proxies", "two proofs", "three tunes"])
def test_two_tunes_of_one_kind_are_refused(tunes: tuple[Path, int, int, dict[str, Any]],
                                           tmp_path: Path, kind: str) -> None:
    """expected: one line, exit 2, no file written / was: (new: --proof took one id)."""
    db, proxy_id, proof_id, _ = tunes
    ids = {"two proxies": [proxy_id, proxy_id], "two proofs": [proof_id, proof_id],
           "three tunes": [proof_id, proxy_id, proxy_id]}[kind]
    html = tmp_path / "page.html"
    out = _iolab("diagnose", str(LOG), "--db", str(db), *[a for i in ids
                 for a in ("--proof", str(i))], "--html", str(html), cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == "" and not html.exists()
    assert out.stderr.count("\n") == 1
    assert "one proof on the command and" in out.stderr


def test_a_copy_of_the_log_takes_its_proxy_tune(tunes: tuple[Path, int, int, dict[str, Any]],
                                                tmp_path: Path) -> None:
    """expected: the proxy tune records the job its log recorded, so a renamed copy of the
    log takes it / was: the tune kept only the log's path."""
    db, proxy_id, _, _ = tunes
    copy = tmp_path / "renamed.darshan"
    copy.write_bytes(LOG.read_bytes())
    out = _iolab("diagnose", str(copy), "--db", str(db), "--proof", str(proxy_id),
                 cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"(proxy tune {proxy_id})" in out.stdout


def test_each_judgement_of_the_tune_has_its_words() -> None:
    """The four kinds of a proxy's judgement (from iolab.tune.fromlog.judge itself), and a
    knob the proxy tune never had."""
    preds = [{"rule": "r", "title": "t", "knob": k, "value": v}
             for k, v in (("collective", "true"), ("transfer", "4194304"),
                          ("file-view", "true"))]
    judged = judge(preds, {"collective": "true", "transfer": "1048576"}, True,
                   {"collective", "transfer"}, ["file-view: not tuned, for this test"])
    claim = {"speedup": 1.8, "ci_low": 1.4, "ci_high": 2.2}
    ev = ProxyEvidence(5, "proxy of x", judged, claim)
    coll = ev.for_knob("collective", "true")
    assert coll["verdict"] == "confirmed" and "1.80x (95% CI 1.40-2.20)" in coll["text"]
    transfer = ev.for_knob("transfer", "4M")
    assert transfer["verdict"] == "other-value" and transfer["value"] == "4194304"
    assert "sets 1048576 instead" in transfer["text"] and "1.80x" not in transfer["text"]
    view = ev.for_knob("file-view", "true")
    assert view["verdict"] == "not-measured" and "not tuned, for this test" in view["text"]
    absent = ev.for_knob("hdf5.coll-metadata", "true")
    assert absent["verdict"] == "not-measured" and "did not include it" in absent["why"]
    flat = ProxyEvidence(5, "proxy of x", judge(preds[:1], {}, False, {"collective"}, []))
    assert flat.for_knob("collective", "true")["verdict"] == "no-gain"
    assert all(ev.for_knob(k, "v")["text"].startswith(LABEL)
               for k in ("collective", "transfer", "file-view"))
