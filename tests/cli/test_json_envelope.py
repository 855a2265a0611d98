"""The JSON envelope: every document iolab prints with ``--json`` starts with
``schema_version`` (an integer) and ``kind`` (what the document is), as docs/cli.md says.

Expected: both keys in every verb's ``--json`` form, walked on a small real database and the
repository's own Darshan log. Was: ``tune --list --json`` printed the text table; ``hints
--json`` and ``diagnose --json`` had no ``kind``; ``sweep`` and ``study`` had no ``--json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import OWN_LOG, iolab
from test_vocabulary import vocabulary

# every --json form: (id, argv with {db} / {log} / {dir}, the kind it prints)
FORMS = [
    ("bench", ["bench", "-q", "--api", "null", "--np", "2", "--reps", "1", "--transfer", "1k",
               "--block", "4k", "--db", "{scratch_db}"], "summary"),
    ("results", ["results", "--db", "{db}"], "runs"),
    ("results show", ["results", "show", "1", "--db", "{db}"], "run"),
    ("results tunes", ["results", "tunes", "--db", "{db}"], "tunes"),
    ("tune --list", ["tune", "--list", "--db", "{db}"], "tunes"),
    ("tune", ["tune", "-q", "--db", "{scratch_db}", "--knob", "transfer=1k,2k", "--trials",
              "2", "--confirm", "2", "--", "iolab", "bench", "-a", "null", "--np", "2", "-t",
              "1k", "-b", "4k", "-w"], "tune"),
    ("compare", ["compare", "run:1", "run:2", "--db", "{db}"], "compare"),
    ("compare logs", ["compare", "{log}", "{log}"], "compare-logs"),
    ("diagnose", ["diagnose", "{log}"], "diagnosis"),
    ("diagnose --each", ["diagnose", "--each", "{log}", "{log2}"], "diagnoses"),
    ("hints", ["hints", "{dir}"], "hints"),
    ("sweep", ["sweep", "-q", "--db", "{scratch_db}", "--param", "transfer=1k,2k", "--reps",
               "1", "--", "--api", "null", "--np", "2", "--block", "4k"], "sweep"),
    ("sweep --list", ["sweep", "--list", "--db", "{db}"], "sweeps"),
    ("study --list", ["study", "--list", "--db", "{db}"], "studies"),
    ("triage", ["triage", "-q", "-j", "1", "--store", "{store}", "{log}"], "triage"),
]


# Verbs whose only --json form is a run too long to repeat here: the test that checks their
# envelope (schema_version and kind first) on that run.
ELSEWHERE = {"io500": "tests/io500/test_io500.py::test_quick_run_runs_every_phase_and_scores"}


def test_every_verb_with_json_has_a_form_here() -> None:
    has_json = {v for v, has in vocabulary()["--json"].items() if has}
    assert has_json == {argv[0] for _, argv, _ in FORMS} | set(ELSEWHERE)
    for verb, where in ELSEWHERE.items():
        path, name = where.split("::")
        text = (Path(__file__).parents[2] / path).read_text()
        assert f"def {name}" in text and f'doc["kind"] == "{verb}"' in text, where


@pytest.mark.parametrize(("argv", "kind"), [(a, k) for _, a, k in FORMS],
                         ids=[i for i, _, _ in FORMS])
def test_json_envelope(stored_db: Path, tmp_path: Path, argv: list[str], kind: str) -> None:
    """expected schema_version and kind first in the document / was text or no kind."""
    if "{log}" in argv:
        pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    shutil.copy(OWN_LOG, tmp_path / "B.darshan")
    values = {"{db}": str(stored_db), "{scratch_db}": str(tmp_path / "new.db"),
              "{log}": str(OWN_LOG), "{log2}": str(tmp_path / "B.darshan"),
              "{dir}": str(tmp_path), "{store}": str(tmp_path / "store")}
    argv = [values.get(a, a) for a in argv]
    at = argv.index("--") if "--" in argv else len(argv)  # after '--' it is the workload's
    r = iolab(*argv[:at], "--json", *argv[at:], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert isinstance(doc, dict), r.stdout[:200]
    assert list(doc)[:2] == ["schema_version", "kind"], list(doc)[:5]
    assert isinstance(doc["schema_version"], int) and doc["kind"] == kind


def test_a_studys_document_has_the_envelope(tmp_path: Path) -> None:
    """``iolab study --json`` (a minute of runs) prints _study_json: checked on a study
    stored through the study's own store."""
    from iolab.results.db import connect
    from iolab.study import store
    from iolab.study.cli import _study_json

    conn = connect(tmp_path / "r.db")
    sid = store.create_study(conn, ["iolab", "study", "--quick", "--json"], "quick")
    store.update_study(conn, sid, "done", {"size": "quick", "skipped": []})
    doc = json.loads(_study_json(conn, sid))
    assert list(doc)[:2] == ["schema_version", "kind"] and doc["kind"] == "study"
    assert doc["status"] == "done" and doc["result"]["size"] == "quick"
    assert doc["created_at"].endswith("+00:00") and doc["sweeps"] == []
