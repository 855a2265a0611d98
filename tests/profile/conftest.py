"""Shared helpers of the tracer tests: the built libraries, C programs compiled on demand,
``iolab profile`` runs, and record lookup. No mocks: real programs, real files, real MPI."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from one_host_mpi import one_host_open_mpi  # noqa: F401 (autouse: Open MPI's one-host start-up)
from trace_helpers import LIBDIR, PROGS


@pytest.fixture(scope="session")
def tracer() -> Path:
    lib = LIBDIR / "libiolab-trace.so"
    if not lib.is_file():
        pytest.skip("libiolab-trace.so is not built (run ./setup)")
    return lib


@pytest.fixture(scope="session")
def prog(tmp_path_factory: pytest.TempPathFactory, tracer: Path) -> Callable[[str], Path]:
    """prog("posix_write"): progs/posix_write.c compiled (with mpicc for mpi_*)."""
    outdir = tmp_path_factory.mktemp("progs")
    built: dict[str, Path] = {}

    def build(name: str) -> Path:
        if name not in built:
            cc = "mpicc" if name.startswith("mpi_") else "cc"
            if shutil.which(cc) is None:
                pytest.skip(f"{cc} is not installed")
            exe = outdir / name
            subprocess.run(
                [
                    cc,
                    "-O2",
                    "-fno-builtin",
                    "-Wall",
                    "-o",
                    str(exe),
                    str(PROGS / f"{name}.c"),
                    "-lpthread",
                ],
                check=True,
            )
            built[name] = exe
        return built[name]

    return build
