"""Helpers of the CLI tests: run ``iolab`` in a process; where the repository is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OWN_LOG = REPO / "tests" / "profile" / "darshan" / "stdio_darshan.darshan"  # in the repo


def iolab(*args: str, cwd: Path | None = None, stdin: str | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, cwd=cwd, input=stdin, env=env, timeout=300)
