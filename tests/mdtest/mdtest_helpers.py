"""Helpers for the ``iolab mdtest`` tests: the real CLI in a process, mpirun's environment."""

from __future__ import annotations

from pathlib import Path

from tool_helpers import Ran, mpirun_env, run_iolab

HERE = Path(__file__).resolve().parent
__all__ = ["HERE", "Ran", "mpirun_env", "run_iolab", "summary_rows"]


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
