"""Every verb's ``--help`` ends with an EXAMPLES section whose commands the verb's own parser
accepts as written.

Expected: at least two examples per verb, each parsed by ``build_parser(verb)`` without an
error or a left-over word. Was: no examples in any ``--help``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex

import pytest
from cli_helpers import iolab

from iolab.cli import VERBS, build_parser
from iolab.cli_common import help_examples


def _parses(verb: str, command: str) -> argparse.Namespace:
    """The command parsed the way ``iolab`` parses it (main's leftover rule included)."""
    argv = shlex.split(command)
    assert argv[:2] == ["iolab", verb], command
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            args, rest = build_parser(verb).parse_known_args(argv[1:])
    except SystemExit:
        raise AssertionError(f"{command}: {said.getvalue().strip()}") from None
    tail = getattr(args, "_positionals_anywhere", None)
    if rest and tail and not any(r.startswith("-") for r in rest):
        rest = []
    assert rest == [], (command, rest)
    return args


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_example_parses(verb: str) -> None:
    r = iolab(verb, "--help")
    assert r.returncode == 0, r.stderr
    examples = help_examples(r.stdout)
    assert len(examples) >= 2, r.stdout[-600:]
    for command in examples:
        _parses(verb, command)


def test_a_broken_example_would_be_caught() -> None:
    """The check itself can fail: an option the verb lacks, a value of the wrong type."""
    with pytest.raises(AssertionError):
        _parses("hints", "iolab hints . --no-such-option")
    with pytest.raises(AssertionError):
        _parses("sweep", "iolab sweep --reps three")


def test_the_description_is_still_wrapped() -> None:
    """The examples keep their lines; the description above them is wrapped to the width."""
    r = iolab("tune", "--help", env=None)
    head = r.stdout.split("\nexamples:\n")[0]
    assert max(len(ln) for ln in head.splitlines()[1:]) <= 100


@pytest.mark.parametrize("action", ["list", "show", "import", "delete", "tunes"])
def test_each_results_action_shows_its_own_examples(action: str) -> None:
    """``iolab results show --help`` ends with the examples of ``show`` only."""
    r = iolab("results", action, "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: iolab results"), r.stderr
    examples = help_examples(r.stdout)
    assert examples, r.stdout[-400:]
    for command in examples:
        words = command.split()
        assert (words[2] if len(words) > 2 and not words[2].startswith("-") else "list") \
            == action, command
        _parses("results", command)
