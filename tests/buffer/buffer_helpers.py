"""Helpers of the libiolab-buffer tests: runs with and without the library, the writer's
byte pattern."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


def iolab(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iolab", *map(str, args)], capture_output=True, text=True,
        timeout=120, env=env,
    )


def parse_table(text: str) -> dict[str, dict[str, float]]:
    """{path: {"Write calls": n, "Write MB": x, ..., "Buffers used": n, ...}} of the tables."""
    out: dict[str, dict[str, float]] = {}
    cur: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r'^File "(.*)"$', line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        m = re.match(r"^(Sys Read|Sys Write|Open|Read|Write|Close|Total)\s+([\d.\s]+)$", line)
        if m:
            row, nums = m.group(1), m.group(2).split()
            cur[f"{row} calls"] = float(nums[0])
            if len(nums) >= 5:
                cur[f"{row} MB"] = float(nums[2])
                cur[f"{row} avg"] = float(nums[4])
        for key in ("Buffers used", "Prefetches", "Preflushes"):
            if line.startswith(key):
                cur[key] = float(line[len(key):].split()[0])
    return out


def read_ahead_line(text: str, path: Path) -> str:
    """The "Read-ahead" line of path's table, e.g. "off (auto: local file system, ...)"."""
    block = text.split(f'File "{path}"', 1)[1].split("\nFile ", 1)[0]
    return next(ln for ln in block.splitlines() if ln.startswith("Read-ahead"))[10:].strip()
