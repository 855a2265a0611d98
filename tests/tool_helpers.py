"""What the tests of the verbs that run other tools' command lines (``iolab ior``,
``iolab mdtest``) share: the real CLI in a process, and mpirun's environment for running the
real tool beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


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


def real_tool(env: str, what: str) -> Path:
    """The peer tool a comparison test runs (IOR, mdtest, IO500 built outside the
    repository), named by ``env``; the test skips, saying how to get it, without it."""
    import pytest

    path = os.environ.get(env)
    if not path:
        pytest.skip(f"no real {what.split()[0]} to compare with: build {what} outside the "
                    f"repository and set {env}")
    if not os.access(path, os.X_OK):
        pytest.skip(f"{env}={path} is not an executable")
    return Path(path)


def real_help_text(env: str, what: str) -> str:
    """What the real tool's own ``-h`` prints (stdout and stderr), to check a kept copy of
    its option list against a newer build; skips as :func:`real_tool` without it."""
    p = subprocess.run([str(real_tool(env, what)), "-h"], capture_output=True, text=True,
                       env=mpirun_env(), timeout=60)
    return p.stdout + p.stderr
