"""docs/cli.md's rules, checked against every verb: a bad option and a bad value are one line
``iolab <verb>: ...`` with exit 2 and nothing created; the JSON kinds the page lists are the
ones the verbs print; the time form it shows is the one iolab writes.

Expected: every verb follows the page. Was: refusals read ``iolab: ...`` (no verb), the page
named neither the JSON envelope nor the time form.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from cli_helpers import REPO, iolab
from test_json_envelope import FORMS

from iolab.cli import VERBS
from iolab.units import fmt_time

DOC = (REPO / "docs" / "cli.md").read_text()

# one bad value per verb, refused by the verb's own checks (not argparse), before any work
BAD_VALUE = {
    "bench": ["-t", "3x", "--db", "{tmp}/r.db"],
    "results": ["show", "1", "--db", "{tmp}/none.db"],
    "profile": ["-o", "{tmp}/p", "--", "/nonexistent/prog"],
    "diagnose": ["{tmp}/none.darshan"],
    "buffer": ["--config", "{tmp}/none.cfg", "--", "true"],
    "hints": ["{tmp}/none"],
    "tune": ["--trials", "0", "--db", "{tmp}/r.db", "--", "iolab", "bench", "-a", "null"],
    "sweep": ["--param", "transfer=64k,3x", "--db", "{tmp}/r.db", "--", "--api", "null"],
    "compare": ["run:1", "run:2", "--db", "{tmp}/none.db"],
    "study": ["--cpu-freq", "abc", "--db", "{tmp}/r.db"],
    "report": ["run", "1", "--db", "{tmp}/none.db"],
    "ior": ["-t", "3x", "--db", "{tmp}/r.db"],
    "mdtest": ["-n", "many", "--db", "{tmp}/r.db"],
    "triage": ["--store", "{tmp}/store", "{tmp}/no-such-logs"],
    "io500": ["{tmp}/none.ini"],
}


def test_every_verb_has_a_bad_value_here() -> None:
    assert set(BAD_VALUE) == set(VERBS)


def _refused(verb: str, argv: list[str], tmp_path: Path) -> str:
    env = {**os.environ, "IOLAB_DB": str(tmp_path / "default.db")}
    r = iolab(verb, *[a.replace("{tmp}", str(tmp_path)) for a in argv], cwd=tmp_path, env=env)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, (verb, r.returncode, r.stderr)
    assert lines[0].startswith(f"iolab {verb}: "), lines[0]
    assert not lines[0].startswith((f"iolab {verb}: iolab", f"iolab {verb}: {verb}:"))
    assert list(tmp_path.iterdir()) == [], (verb, list(tmp_path.iterdir()))  # nothing made
    return lines[0]


@pytest.mark.parametrize("verb", list(VERBS))
def test_bad_option_is_the_verbs_line_exit_2(verb: str, tmp_path: Path) -> None:
    line = _refused(verb, ["--no-such-option"], tmp_path)
    assert line.endswith(f"(see 'iolab {verb} --help')")


@pytest.mark.parametrize("verb", list(VERBS))
def test_bad_value_is_the_verbs_line_exit_2(verb: str, tmp_path: Path) -> None:
    """expected ``iolab <verb>: ...`` / was ``iolab: ...`` for every refusal of a value."""
    _refused(verb, BAD_VALUE[verb], tmp_path)


def test_the_pages_kinds_are_the_ones_printed() -> None:
    section = DOC.split("## JSON and times", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([a-z-]+)`", section.split("(what it is:", 1)[1].split(")")[0]))
    # a study's own document takes a minute to make: its kind is read from the code
    assert listed == {kind for _, _, kind in FORMS} | {"study"}
    assert '"kind": "study"' in (REPO / "src" / "iolab" / "study" / "cli.py").read_text()


def test_the_pages_time_is_the_form_iolab_writes() -> None:
    section = DOC.split("## JSON and times", 1)[1].split("\n## ", 1)[0]
    shown = re.search(r"`(\d{4}-\d\d-\d\dT[\d:]{8}[^`]*)`", section)
    assert shown and fmt_time(shown.group(1)) == shown.group(1)


def test_the_page_states_the_prefix_and_the_codes() -> None:
    assert "`iolab <verb>: `" in DOC
    codes = re.findall(r"^\| (\d+) \|", DOC.split("## Errors and exit codes", 1)[1], re.M)
    assert codes[:4] == ["0", "1", "2", "130"]
