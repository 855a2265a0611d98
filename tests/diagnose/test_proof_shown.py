"""``iolab diagnose LOG --proof TUNE_ID``: the verdict measured on the command next to each
fix (text, JSON, HTML); without a proof each fix is "predicted, not proven here".

The proof is made here by ``iolab tune --from-log`` on a real command that reacts to the
hints file it is given: a shell that waits 0.3 s when the ROMIO_HINTS file sets ``cb_nodes``
(the hint diagnose predicts for the collective-writes log's single POSIX writer), so the
answer is known by construction: slower, do not apply. (The independent-writes log got
``romio_cb_write enable`` before: a hint that cannot act on independent calls, no longer
predicted.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import corpus
import pytest

pytestmark = pytest.mark.usefixtures("darshan_available")
LOG = corpus.GENERATED_DIR / "mpiio_4ranks_strided4K_coll.darshan"
OTHER = corpus.GENERATED_DIR / "mpiio_4ranks_strided4K_indep.darshan"
SLOWED_BY_HINT = ["sh", "-c", 'grep -qs "cb_nodes" "$ROMIO_HINTS" && sleep 0.3; sleep 0.05']


def _iolab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def proof(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    if not LOG.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    tmp = tmp_path_factory.mktemp("proof")
    out = _iolab("tune", "--db", str(tmp / "r.db"), "--from-log", str(LOG), "--json", "--",
                 *SLOWED_BY_HINT, cwd=tmp)
    assert out.returncode == 0, out.stderr
    return tmp / "r.db", int(json.loads(out.stdout)["id"])


def test_the_verdict_is_shown_next_to_the_fix(proof: tuple[Path, int], tmp_path: Path
                                              ) -> None:
    db, tune_id = proof
    html = tmp_path / "page.html"
    text = _iolab("diagnose", str(LOG), "--db", str(db), "--proof", str(tune_id), "--html",
                  str(html), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "cb_nodes=4: slower — do not apply" in text.stdout
    assert f"(proof {tune_id})" in text.stdout
    # the settings that are code changes stay predictions, with the reason
    assert "transfer=4194304: predicted, not proven here: a change in the program's own" \
        in " ".join(text.stdout.split())
    page = html.read_text()
    assert "<b>Proof:</b> cb_nodes=4: slower — do not apply" in page
    doc = json.loads(_iolab("diagnose", str(LOG), "--db", str(db), "--proof", str(tune_id),
                            "--json", cwd=tmp_path).stdout)
    writer = next(f for f in doc["findings"] if f["rule_id"] == "single-posix-writer")
    assert {p["setting"]: p["verdict"] for p in writer["proof"]}["cb_nodes=4"] == "slower"
    small = next(f for f in doc["findings"] if f["rule_id"] == "small-requests")
    assert {p["setting"]: p["verdict"] for p in small["proof"]}["transfer=4194304"] \
        == "predicted"
    # every setting with cb_nodes is slower (0.3 s against 0.05: certain at any noise); the
    # others change nothing, and a proof calls such a setting "proven faster" at most 5% of the
    # time family-wise (tune.proof's Bonferroni intervals; the rate is checked on seeded null
    # samples in tests/tune/test_proof_false_positives.py), so one run cannot assert none is
    with_hint = [p for f in doc["findings"] for p in f["proof"] if "cb_nodes" in p["setting"]]
    assert with_hint and all(p["verdict"] == "slower" for p in with_hint), with_hint


def test_without_a_proof_every_fix_is_a_prediction(tmp_path: Path) -> None:
    if not LOG.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    html = tmp_path / "page.html"
    out = _iolab("diagnose", str(LOG), "--html", str(html), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "proof: predicted, not proven here" in out.stdout
    assert "<b>Proof:</b> predicted, not proven here" in html.read_text()
    doc = json.loads(_iolab("diagnose", str(LOG), "--json", cwd=tmp_path).stdout)
    assert doc["proof_tune_id"] is None
    fixed = [f for f in doc["findings"] if f["proof"]]
    assert fixed and all(f["proof"] == [{"setting": None, "verdict": "predicted",
                                         "text": "predicted, not proven here"}] for f in fixed)


def test_a_proof_of_another_log_is_refused(proof: tuple[Path, int], tmp_path: Path) -> None:
    """expected: one line, exit 2, no file written / was: (new)."""
    db, tune_id = proof
    html = tmp_path / "page.html"
    out = _iolab("diagnose", str(OTHER), "--db", str(db), "--proof", str(tune_id), "--html",
                 str(html), cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "another job than this log's" in out.stderr
    assert not html.exists()


def test_a_copy_of_the_log_under_another_name_takes_its_proof(proof: tuple[Path, int],
                                                              tmp_path: Path) -> None:
    db, tune_id = proof
    copy = tmp_path / "renamed.darshan"
    copy.write_bytes(LOG.read_bytes())
    out = _iolab("diagnose", str(copy), "--db", str(db), "--proof", str(tune_id),
                 cwd=tmp_path)
    assert out.returncode == 0 and "slower — do not apply" in out.stdout


@pytest.mark.parametrize("tune_id", ["999"])
def test_a_proof_id_that_does_not_exist_is_refused(proof: tuple[Path, int], tmp_path: Path,
                                                   tune_id: str) -> None:
    db, _ = proof
    out = _iolab("diagnose", str(LOG), "--db", str(db), "--proof", tune_id, cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and f"no tune {tune_id}" in out.stderr
