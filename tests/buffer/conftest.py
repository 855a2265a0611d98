"""Shared helpers of the libiolab-buffer tests: the built library, C programs compiled on
demand, runs with and without the library, and the writer's byte pattern. No mocks: real
programs, real files, real file systems (tmpfs for ENOSPC), real fault injection (libfiu)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "build" / "default" / "interpose" / "buffer" / "libiolab-buffer.so"
PROGS = Path(__file__).resolve().parent / "progs"


@pytest.fixture(scope="session")
def buflib() -> Path:
    if not LIB.is_file():
        pytest.skip("libiolab-buffer.so is not built (run ./setup)")
    return LIB


@pytest.fixture(scope="session")
def cprog(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """cprog("writer"): progs/writer.c compiled once per session (warnings are errors)."""
    outdir = tmp_path_factory.mktemp("bufprogs")
    built: dict[str, Path] = {}

    def build(name: str) -> Path:
        if name not in built:
            if shutil.which("cc") is None:
                pytest.skip("no C compiler")
            exe = outdir / name
            subprocess.run(
                ["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", str(exe),
                 str(PROGS / f"{name}.c")],
                check=True,
            )
            built[name] = exe
        return built[name]

    return build
