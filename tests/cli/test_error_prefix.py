"""One error prefix: every line iolab says on stderr is ``iolab <verb>: <message>``.

Expected: a verb's refusal reads ``iolab <verb>: ...`` once, whatever layer made the message
(the engine, a parser, the verb). Was: ``iolab: ...`` for every refusal (UsageError), ``iolab:
iolab-bench: --transfer 3x: ...`` for the engine's, ``iolab: iolab bench: repetition 1 ...``
for progress lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import iolab

from iolab.errors import verb_line


@pytest.mark.parametrize(("verb", "message", "line"), [
    ("bench", "iolab-bench: --transfer 3x: not a size", "iolab bench: --transfer 3x: not a size"),
    ("bench", "iolab: iolab-bench: x", "iolab bench: x"),
    ("bench", "iolab bench: repetition 1", "iolab bench: repetition 1"),
    ("tune", "iolab: the workload: x", "iolab tune: the workload: x"),
    ("tune", "the workload after '-- iolab bench': x", "iolab tune: the workload after "
                                                       "'-- iolab bench': x"),
    (None, "iolab: unrecognized arguments: --x", "iolab: unrecognized arguments: --x"),
])
def test_verb_line_strips_the_prefixes_a_message_carries(verb: str | None, message: str,
                                                         line: str) -> None:
    """expected the verb's prefix once / was the message's own prefix after ``iolab:``."""
    assert verb_line(verb, message) == line


def test_engine_refusal_is_the_verbs_line(tmp_path: Path) -> None:
    """expected ``iolab bench: --transfer 3x: ...`` / was ``iolab: iolab-bench: --transfer 3x``."""
    r = iolab("bench", "-t", "3x", "--db", str(tmp_path / "r.db"), cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("iolab bench: --transfer 3x: not a size"), lines[0]


@pytest.mark.parametrize(("argv", "prefix"), [
    (["results", "show", "1", "--db", "{missing}"], "iolab results: --db "),
    (["compare", "run:1", "run:2", "--db", "{missing}"], "iolab compare: --db "),
    (["diagnose", "{missing}"], "iolab diagnose: "),
    (["sweep", "--list", "--db", "{missing}"], "iolab sweep: --db "),
    (["tune", "--list", "--db", "{missing}"], "iolab tune: --db "),
])
def test_usage_error_names_the_verb(tmp_path: Path, argv: list[str], prefix: str) -> None:
    """expected ``iolab <verb>: ...`` for a refusal / was ``iolab: ...`` in every verb."""
    missing = str(tmp_path / "missing.db")
    r = iolab(*[a.replace("{missing}", missing) for a in argv])
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(prefix), lines[0]
    assert not (tmp_path / "missing.db").exists()


def test_top_level_error_has_no_verb() -> None:
    r = iolab("--no-such-option")
    assert r.returncode == 2 and r.stderr.startswith("iolab: unrecognized arguments"), r.stderr


def test_every_stderr_line_of_a_sweep_and_a_delete_names_the_verb(stored_db: Path,
                                                                   tmp_path: Path) -> None:
    """expected ``iolab sweep: sweep 1: point 1/2 ...``, ``iolab results: deleted 1 run`` /
    was ``sweep 1: point 1/2 ...``, ``deleted 1 run`` with no prefix."""
    db = tmp_path / "r.db"
    r = iolab("sweep", "--db", str(db), "--param", "transfer=1k,2k", "--reps", "1", "--",
              "--api", "null", "--np", "2", "--block", "4k", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) >= 3 and all(ln.startswith("iolab sweep: ") for ln in lines), lines
    copy = tmp_path / "copy.db"
    copy.write_bytes(stored_db.read_bytes())
    r = iolab("results", "delete", "1", "--yes", "--db", str(copy), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines() == ["iolab results: deleted 1 run"]


def test_a_page_written_for_compare_names_compare(stored_db: Path, tmp_path: Path) -> None:
    """expected ``iolab compare: wrote ...`` / was ``iolab report: wrote ...`` (the page
    writer spoke as report for every verb) and ``iolab: created the folder``."""
    out = tmp_path / "new" / "c.html"
    r = iolab("compare", "run:1", "run:2", "--db", str(stored_db), "-o", str(out), "-q",
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = iolab("compare", "run:1", "run:2", "--db", str(stored_db), "-o",
              str(tmp_path / "more" / "c.html"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    said = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith("iolab")]
    assert said and all(ln.startswith("iolab compare: ") for ln in said), said
    assert any("created the folder" in ln for ln in said) and any("wrote" in ln for ln in said)


def test_sweep_verbose_shows_each_points_bench_command(tmp_path: Path) -> None:
    """expected -v: each point's ``iolab bench`` line before it runs / was: no -v in sweep."""
    r = iolab("sweep", "-v", "--db", str(tmp_path / "r.db"), "--param", "transfer=1k,2k",
              "--reps", "1", "--", "--api", "null", "--np", "2", "--block", "4k", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    shown = [ln for ln in r.stderr.splitlines() if ": iolab bench " in ln]
    assert [ln.split(": iolab bench ")[0] for ln in shown] == [
        "iolab sweep: sweep 1: point 1/2", "iolab sweep: sweep 1: point 2/2"], r.stderr
    assert "--transfer=1k" in shown[0] and "--transfer=2k" in shown[1], shown
