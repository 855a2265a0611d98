"""``iolab bench -U`` at the edges (issue 28): a hints file that is not a file is one line,
exit 2, before anything runs or is stored."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("make", ["directory", "missing"])
def test_hints_file_that_is_not_a_file_is_refused(tmp_path: Path, make: str) -> None:
    """expected: -U DIR (or a missing file) refused, exit 2, no database / was: -U DIR ran
    and stored an ok run without any hint (the engine reads no line from a directory)."""
    from iolab.paths import engine_binary

    engine_binary("default")  # raises (test error) when ./setup did not build it
    hints = tmp_path / "hints"
    if make == "directory":
        hints.mkdir()
    db = tmp_path / "r.db"
    before = sorted(os.listdir(tmp_path))
    out = subprocess.run([sys.executable, "-m", "iolab", "bench", "--db", str(db), "-a",
                          "mpiio", "-t", "64k", "-b", "1m", "--np", "1", "-w", "-U",
                          str(hints)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert out.returncode == 2, out.stderr
    assert re.match(r"^iolab( bench)?: .+\n\Z", out.stderr), out.stderr
    says = "a directory, not a hints file" if make == "directory" else "no such file"
    assert f"-U/--hints-file {hints}: {says}" in out.stderr
    assert sorted(os.listdir(tmp_path)) == before
