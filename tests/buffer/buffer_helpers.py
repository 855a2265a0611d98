"""Helpers of the libiolab-buffer tests: runs with and without the library, the writer's
byte pattern."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
LIB_TRACE = ROOT / "build" / "default" / "interpose" / "trace" / "libiolab-trace.so"


def lib_env(lib: Path, spec: str | None, **extra: str) -> dict[str, str]:
    """The environment of a run with the library (spec None: without it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "IOLAB_BUFFER")}
    if spec is not None:
        env["LD_PRELOAD"] = str(lib)
        env["IOLAB_BUFFER"] = spec
    env.update(extra)
    return env


def run(
    argv: Sequence[str | Path], lib: Path, spec: str | None, timeout: float = 120, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        env=lib_env(lib, spec, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def pattern(total: int) -> bytes:
    """The bytes progs/writer.c writes: byte i is (i * 131 + i // 4093) & 0xff."""
    i = np.arange(total, dtype=np.int64)
    return ((i * 131 + i // 4093) & 0xFF).astype(np.uint8).tobytes()
