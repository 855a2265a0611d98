"""``iolab results ACTION --help`` describes that action.

Expected: ``iolab results show --help`` prints show's own usage (``iolab results show ID``),
what it shows and only the options it takes. Was: the whole verb's help, the list's filters
first, with nothing on what ``show`` prints.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from iolab.results.cli import ACTION_HELP, ACTIONS


def iolab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, timeout=60)


def test_show_help_is_shows_own() -> None:
    """expected show's usage and options / was the verb's help"""
    r = iolab("results", "show", "--help")
    assert r.returncode == 0 and not r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "usage: iolab results show ID [--json|--csv] [-o FILE] [--db PATH]"
    text = " ".join(r.stdout.split())
    assert "Show one stored run" in text and "operations per second" in text
    for flag in ("--json", "--csv", "--output", "--db"):
        assert flag in text
    for flag in ("--status", "--last", "--yes", "--label", "{list,show"):
        assert flag not in text


@pytest.mark.parametrize("action", ACTIONS)
def test_each_action_has_its_own_help(action: str) -> None:
    r = iolab("results", action, "-h")
    assert r.returncode == 0, r.stderr
    usage = r.stdout.splitlines()[0]
    assert usage.startswith("usage: iolab results" + ("" if action == "list" else f" {action}"))
    # each option the action names is one the verb really has, its help text shown once
    verb = iolab("results", "--help").stdout
    for line in r.stdout.split("options:", 1)[1].splitlines():
        flag = line.split()[0] if line.strip().startswith("-") else None
        if flag:
            assert flag in verb


def test_verb_help_is_still_the_whole_verb() -> None:
    r = iolab("results", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "{list,show,import,delete,tunes}" in text and "--status" in text and "--yes" in text
    assert set(ACTION_HELP) == set(ACTIONS)


def test_show_without_an_id_is_still_one_line() -> None:
    r = iolab("results", "show", "--db", "/nonexistent/r.db")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "needs a run id" in r.stderr
