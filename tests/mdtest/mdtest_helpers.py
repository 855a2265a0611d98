"""Helpers for the ``iolab mdtest`` tests: the real CLI in a process, mpirun's environment."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_iolab(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              timeout: float = 180) -> Ran:
    p = subprocess.run([sys.executable, "-m", "iolab", *args], cwd=cwd,
                       env={**os.environ, **(env or {})}, capture_output=True, text=True,
                       timeout=timeout)
    return Ran(p.returncode, p.stdout, p.stderr)


def mpirun_env() -> dict[str, str]:
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root without these (as iolab's launch sets)
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def summary_rows(report: str) -> list[list[str]]:
    """The rows of mdtest's first SUMMARY table: [operation, max, min, mean, sd]."""
    rows: list[list[str]] = []
    lines = report.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("SUMMARY "))
    for ln in lines[start + 3:]:
        if not ln.startswith("   ") or not ln.strip():
            break
        words = ln.split()
        rows.append([" ".join(words[:-4]), *words[-4:]])
    return rows
