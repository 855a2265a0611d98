"""Differential fuzz: random sequences of POSIX calls (and of STDIO calls) run with and
without libiolab-buffer must give the same return values, errno values, bytes read and
file bytes.  10,000 POSIX sequences over three buffer shapes (tiny buffers stress the
buffer boundaries, 64 KiB ones the read-ahead window), 1,500 STDIO sequences."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from buffer_helpers import lib_env

POSIX_SHAPES = [
    "*.dat:size=4K:count=2:prefetch=1",
    "*.dat:size=64K:count=4:prefetch=3",
    "*.dat:size=512:count=1:prefetch=0",
    "*.dat:size=1M:count=2:prefetch=1",
]
POSIX_SEQUENCES = 10_000
STDIO_SHAPES = ["*.dat:size=8K:count=2:prefetch=1", "*.dat:size=64K:count=4:prefetch=2"]
STDIO_SEQUENCES = 1_500


def _first_difference(prog: Path, lib: Path, spec: str, seed: int, tmp: Path) -> str:
    """The first differing log line of one seed, for the failure message."""
    logs = []
    for i, s in enumerate((None, spec)):
        d = tmp / f"replay{i}"
        d.mkdir(exist_ok=True)
        out = subprocess.run(
            [str(prog), str(d), str(seed), "1", "-v"], env=lib_env(lib, s),
            capture_output=True, text=True, timeout=60,
        ).stdout.splitlines()
        logs.append(out)
    for n, (a, b) in enumerate(zip(*logs)):
        if a != b:
            return f"seed {seed} ({spec}), op {n}: expected '{a}', was '{b}'"
    return f"seed {seed} ({spec}): logs differ in length"


def _differential(prog: Path, lib: Path, shapes: list[str], total: int, tmp: Path) -> None:
    """Runs total seeds split over the shapes, each chunk with and without the library, all
    at once (two cores: the runs overlap their waits)."""
    per = total // len(shapes)
    procs = []
    for k, spec in enumerate(shapes):
        for with_lib in (False, True):
            d = tmp / f"c{k}{int(with_lib)}"
            d.mkdir()
            p = subprocess.Popen(
                [str(prog), str(d), str(1 + k * per), str(per)],
                env=lib_env(lib, spec if with_lib else None),
                stdout=subprocess.PIPE, text=True,
            )
            procs.append((spec, with_lib, p))
    outs: dict[tuple[str, bool], list[str]] = {}
    for spec, with_lib, p in procs:
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0, f"{prog.name} {'with' if with_lib else 'without'} the library"
        outs[(spec, with_lib)] = out.splitlines()
    for spec in shapes:
        want, got = outs[(spec, False)], outs[(spec, True)]
        assert len(want) == per and len(got) == per
        for a, b in zip(want, got):
            if a != b:
                seed = int(a.split()[1])
                raise AssertionError(_first_difference(prog, lib, spec, seed, tmp))


# Free space /dev/shm must have to be used: eight runs at once, each with two files of up
# to a few MiB (writes of up to 2 MiB at up to 256 KiB, appends), far below this.
SHM_FREE = 1 << 30


def _free_bytes(folder: Path) -> int:
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize


@pytest.fixture
def fuzz_dir(tmp_path: Path) -> Iterator[Path]:
    """The sequences' files in memory (/dev/shm, a tmpfs) when this host has one: every
    sequence fsyncs, and on a disk those waits were most of the test's 33 s. What is compared
    (return values, errno, bytes read, st_size, file bytes) is the same on any file system;
    the library's own behaviour on a disk is tested by the other buffer tests."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK | os.X_OK)) or _free_bytes(shm) < SHM_FREE:
        yield tmp_path  # (a container's 64 MiB /dev/shm: a full one would fail writes)
        return
    d = Path(tempfile.mkdtemp(prefix="iolab-buffer-fuzz-", dir=shm))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_posix_sequences_identical_with_and_without_library(buflib, cprog, fuzz_dir):
    _differential(cprog("fuzz"), buflib, POSIX_SHAPES, POSIX_SEQUENCES, fuzz_dir)


def test_stdio_sequences_identical_with_and_without_library(buflib, cprog, fuzz_dir):
    _differential(cprog("stdio_fuzz"), buflib, STDIO_SHAPES, STDIO_SEQUENCES, fuzz_dir)
