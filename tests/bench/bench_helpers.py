"""Helpers for the ``iolab bench`` / ``iolab results`` tests: run the real CLI in a process.

``iolab`` runs as ``python -m iolab`` with SIGINT at its default (a background shell would
leave it ignored), so the interruption tests can send a real Ctrl-C.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.paths import engine_binary


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def err_lines(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.strip()]


def iolab_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "iolab", *args]


def run_iolab(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              timeout: float = 120) -> Result:
    full_env = {**os.environ, **(env or {})}
    p = subprocess.run(iolab_cmd(*args), cwd=cwd, env=full_env, capture_output=True,
                       text=True, timeout=timeout)
    return Result(p.returncode, p.stdout, p.stderr)


def start_iolab(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(iolab_cmd(*args), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def engine_or_none(mpi: str = "default") -> Path | None:
    try:
        return engine_binary(mpi)
    except UsageError:
        return None


def db_rows(db: Path, sql: str = "SELECT * FROM runs ORDER BY id") -> list[dict[str, Any]]:
    if not db.exists():
        return []
    conn = sqlite3.connect(str(db))
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def mount_small_tmpfs(where: Path, size: str) -> str | None:
    """Mount a tmpfs of ``size`` at ``where``; the reason when that is impossible."""
    if os.geteuid() != 0:
        return "mounting a small tmpfs needs root"
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                       capture_output=True, text=True, check=False)
    return None if p.returncode == 0 else f"cannot mount a tmpfs: {p.stderr.strip()}"


def umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)
