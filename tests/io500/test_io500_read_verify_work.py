"""The work of IO500's checked reads (ior-easy-read, ior-hard-read: IOR ``-r -R``): the engine's
``--verify`` check of every byte read, counted in instructions (callgrind), not timed.

IO500's IOR checks a read buffer one 64-bit word at a time (utilities.c
verify_memory_pattern: about 2 instructions per byte read); the engine's check called memcmp
for every 8-byte word, 8.25 instructions per byte, which held iolab's checked reads at a
quarter of IO500's bandwidth on a page-cached file (docs/benchmarks.md, issue 29).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from iolab.errors import UsageError
from iolab.paths import engine_binary

BLOCK = 4 << 20
# IOR's word loop: 2.0 instructions per byte read; the memcmp per word: 8.25
MAX_INSTRUCTIONS_PER_BYTE = 4.0


def _engine(tmp_path: Path, *args: str) -> list[str]:
    try:
        engine = engine_binary("default")
    except UsageError:
        pytest.skip("iolab-bench is not built (run ./setup, or set IOLAB_BENCH)")
    return [str(engine), "--api", "posix", "--layout", "fpp", "--transfer", "1048576",
            "--block", str(BLOCK), "--segments", "1", "--reps", "1", "--path",
            str(tmp_path / "ior_file_easy"), "--keep", "--verify", *args]


def test_checked_read_costs_about_iors_instructions_per_byte(tmp_path: Path) -> None:
    """expected the read check of a 4 MiB block below 4 instructions per byte read (IOR's
    word loop: 2.0) / was 8.25 (a memcmp per 8-byte word)."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (it counts the check's instructions)")
    write = subprocess.run(_engine(tmp_path, "--write"), capture_output=True, text=True,
                           timeout=120)
    assert write.returncode == 0, write.stderr[-2000:]
    out = tmp_path / "callgrind.out"
    read = subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=iolab_pattern_check",
                           f"--callgrind-out-file={out}", *_engine(tmp_path, "--read")],
                          capture_output=True, text=True, timeout=600)
    assert read.returncode == 0, read.stderr[-2000:]
    assert '"errors": 0' in read.stdout  # the check ran and passed: the data was verified
    collected = re.search(r"Collected : (\d+)", read.stderr)
    assert collected, read.stderr[-2000:]
    per_byte = int(collected[1]) / BLOCK
    # the check ran over every byte read (not skipped): at least one instruction per word
    assert per_byte > 1 / 8, per_byte
    assert per_byte < MAX_INSTRUCTIONS_PER_BYTE, per_byte
