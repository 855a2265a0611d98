"""Helpers for the ``iolab ior`` tests: the real CLI in a process, mpirun's environment."""

from __future__ import annotations

from pathlib import Path

from tool_helpers import Ran, mpirun_env, run_iolab

HERE = Path(__file__).resolve().parent
__all__ = ["HERE", "Ran", "mpirun_env", "run_iolab"]
