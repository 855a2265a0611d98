"""README's printed diagnose example is what ``iolab diagnose`` prints on the log it names
(issue 28: "the README's tour runs as written and its printed examples match what the tool
prints"): every line of the example block, in order, is a line of the real output (``  ...``
stands for lines left out)."""

from __future__ import annotations

import os
import re

import corpus
import pytest
from cli_helpers import REPO, iolab


def _example() -> tuple[str, list[str]]:
    text = (REPO / "README.md").read_text()
    found = re.search(r"A real example: `iolab diagnose` on .*?\(`\.\./shared/darshan-generated/"
                      r"(\S+?)`\).*?```\n(.*?)```", text, re.S)
    assert found, "README.md: the 'A real example' block is gone"
    return found[1], found[2].splitlines()


def test_the_readme_diagnose_example_is_the_real_output() -> None:
    name, example = _example()
    log = corpus.GENERATED_DIR / name
    if not log.is_file():
        pytest.skip(corpus.GENERATED_MISSING)
    # the width of a pipe, as in the README (pytest may run under a terminal's $COLUMNS)
    out = iolab("diagnose", str(log), env={k: v for k, v in os.environ.items()
                                           if k != "COLUMNS"})
    assert out.returncode == 0, out.stderr
    real = out.stdout.splitlines()
    at = 0
    for line in example:
        if line.strip() == "...":
            continue
        assert line in real[at:], (f"README line not printed (in this order): {line!r}\n"
                                   + out.stdout)
        at = real.index(line, at) + 1
