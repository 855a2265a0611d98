"""Every ``iolab ...`` command line shown in README.md and docs/*.md parses as written: its
verb exists and argparse accepts every option with the values shown (issue: "every command in
README and docs runs as written"; the flags were renamed this way once already).

Only parsing: the runs themselves are the other tests' business."""

from __future__ import annotations

import re
import shlex

import pytest
from cli_helpers import REPO

from iolab.cli import VERBS, build_parser

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(?:sh|bash|console|shell)?\s*$")


def commands() -> list[tuple[str, str]]:
    """(where, command) for every line of a fenced block that starts with ``iolab <verb>``
    (a ``$ `` prompt or a leading ``MPICC=... `` assignment dropped, continuations joined)."""
    out = []
    for doc in DOCS:
        lines = doc.read_text().splitlines()
        inside = in_fence = False  # in a shell block; in any fenced block
        buf = ""
        for n, line in enumerate(lines, 1):
            if line.startswith("```"):
                inside = not in_fence and bool(FENCE.match(line))
                in_fence = not in_fence
                continue
            if not inside:
                continue
            text = buf + line.strip().removeprefix("$ ")
            if text.endswith("\\"):
                buf = text[:-1] + " "
                continue
            buf = ""
            text = re.sub(r"^(\w+=\S+\s+)+", "", text)
            m = re.match(r"iolab (\w+)\b", text)
            synopsis = re.search(r"\s\[|\.\.\.", text.split(" #")[0])
            if m and m.group(1) in VERBS and not synopsis:  # a synopsis is no command
                out.append((f"{doc.name}:{n}", text))
    return out


CASES = commands()


def test_the_docs_show_commands_of_every_verb() -> None:
    shown = {re.match(r"iolab (\w+)", c).group(1) for _, c in CASES}  # type: ignore[union-attr]
    assert shown >= {"bench", "results", "profile", "diagnose", "buffer", "tune", "report"}


@pytest.mark.parametrize("where, command", CASES, ids=[w for w, _ in CASES])
def test_documented_command_parses(where: str, command: str) -> None:
    code = command.split(" #", 1)[0].split(" | ", 1)[0].strip()
    try:
        argv = shlex.split(code)[1:]
    except ValueError as exc:
        pytest.fail(f"{where}: not valid shell: {exc}")
    parser = build_parser(only=argv[0])
    try:
        args, rest = parser.parse_known_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{where}: `{code}` is refused by argparse (exit {exc.code})")
    tail = getattr(args, "_positionals_anywhere", None)
    if rest and tail and not any(r.startswith("-") and r != "-" for r in rest):
        rest = []
    assert rest == [], f"{where}: `{code}`: unknown {rest}"
