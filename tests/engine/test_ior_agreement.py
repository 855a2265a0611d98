"""The same IOR command line given to a real IOR and to `iolab ior` writes the same files:
the same names, the same sizes, and every 8-byte word of every file written by the same rank
(checked on the bytes, not on the options parsed). Since issue #28 `iolab bench` keeps its own
vocabulary (`-t`/`-b` are only spellings of --transfer/--block with bench's defaults); IOR's
language, its defaults and its file names are `iolab ior`'s.

Needs a real IOR 4 built with the default mpicc: $IOLAB_IOR, else `ior` on PATH (built
outside the repository: git clone https://github.com/hpc/ior; ./bootstrap; ./configure
CC=mpicc; make install). Without it every case skips and says so.

How the owner of each word is read back: IOR fills each transfer with 64-bit words whose high
half is the writing rank (its default "timestamp" data packet, rank << 32 | signature + i);
iolab's pattern (written when the line checks what it wrote: `-W`, as here, maps to
--check-write --verify) is a function of (rank, file offset), recomputed here for each rank."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from array_model import pattern_bytes
from engine_helpers import Engine, _env

NP = 2


def ior_binary() -> str:
    ior = os.environ.get("IOLAB_IOR") or shutil.which("ior")
    if not ior or not Path(ior).is_file():
        pytest.skip("no IOR to compare with: set IOLAB_IOR to an ior binary (IOR 4, built "
                    "with the default mpicc, outside the repository) or put ior on PATH")
    return ior


def run_ior(engine: Engine, ior: str, argv: list[str]) -> None:
    launch = engine.argv(NP, [])[:-1]  # mpirun ... without the engine binary
    p = subprocess.run([*launch, ior, *argv], capture_output=True, text=True, env=_env(),
                       timeout=120)
    assert p.returncode == 0 and "ERROR" not in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]


def run_iolab(tmp_path: Path, argv: list[str]) -> None:
    """`iolab ior` with the IOR line unchanged (its -W makes the bytes tell the rank apart)."""
    p = subprocess.run([sys.executable, "-m", "iolab", "ior", "--db", str(tmp_path / "r.db"),
                        "--np", str(NP), "--", *argv],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]


def ior_owner(data: bytes) -> np.ndarray:
    """The rank that wrote each 8-byte word of an IOR file (IOR's data packet)."""
    return (np.frombuffer(data, dtype="<u8") >> np.uint64(32)).astype(np.int64)


def iolab_owner(data: bytes) -> np.ndarray:
    """The rank whose --verify pattern each 8-byte word of an iolab file holds (-1: none)."""
    words = np.frombuffer(data, dtype="<u8")
    own = np.full(words.size, -1, dtype=np.int64)
    for r in range(NP):
        expect = np.frombuffer(pattern_bytes(np.full(len(data), r), 1), dtype="<u8")
        own[words == expect] = r
    return own


def files(prefix: Path, fpp: bool) -> list[Path]:
    """The files a run left, in rank order (one shared file, or one per rank, IOR's names)."""
    if not fpp:
        return [prefix]
    return [prefix.with_name(f"{prefix.name}.{r:08d}") for r in range(NP)]


# (IOR line without -o, whether the offsets are random: only then may owners differ)
CASES = {
    "shared segmented -t 4k -b 16k -s 3": (["-a", "POSIX", "-t", "4k", "-b", "16k", "-s", "3"],
                                           False),
    "file per process -F -t 4k -b 8k -s 2": (["-a", "POSIX", "-F", "-t", "4k", "-b", "8k",
                                              "-s", "2"], False),
    "strided MPIIO -c -t 8k -b 8k -s 4": (["-a", "MPIIO", "-c", "-t", "8k", "-b", "8k", "-s",
                                           "4"], False),
    "ior-hard 47008 -s 3": (["-a", "POSIX", "-t", "47008", "-b", "47008", "-s", "3"], False),
    "random -z -F": (["-a", "POSIX", "-z", "-F", "-t", "4k", "-b", "16k", "-s", "2"], False),
    "random -z shared": (["-a", "POSIX", "-z", "-t", "4k", "-b", "16k", "-s", "2"], True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ior_line_writes_iors_files(engine: Engine, scratch: Path, tmp_path: Path, name: str):
    ior = ior_binary()
    line, random_owner = CASES[name]
    fpp = "-F" in line
    t = line[line.index("-t") + 1]
    transfer = int(t[:-1]) * 1024 if t.endswith("k") else int(t)
    # the same line for both, only -o differs: write, check what was written, keep the files
    run_ior(engine, ior, [*line, "-w", "-W", "-k", "-o", str(scratch / "ior.dat")])
    run_iolab(tmp_path, [*line, "-w", "-W", "-k", "-o", str(scratch / "iolab.dat")])
    ior_files = files(scratch / "ior.dat", fpp)
    iolab_files = files(scratch / "iolab.dat", fpp)
    assert sorted(scratch.iterdir()) == sorted(ior_files + iolab_files)
    for rank, (theirs, ours) in enumerate(zip(ior_files, iolab_files)):
        a, b = theirs.read_bytes(), ours.read_bytes()
        assert len(b) == len(a) > 0, f"{ours.name}: {len(b)} bytes, IOR's {len(a)}"
        want, got = ior_owner(a), iolab_owner(b)
        # IOR's data packet read right: its own file per rank, or every rank in the shared one
        assert set(np.unique(want)) == ({rank} if fpp else set(range(NP)))
        assert got.min() >= 0, f"{ours.name}: words no rank's pattern holds (a hole?)"
        if not random_owner:
            bad = np.flatnonzero(want != got)
            assert bad.size == 0, (f"{ours.name}: first differing byte {bad[0] * 8}: "
                                   f"IOR's rank {want[bad[0]]}, iolab's {got[bad[0]]}")
            continue
        # -z on a shared file: each transfer goes to a random rank in both tools (different
        # generators), so only the shape is common: every transfer whole, by one rank
        for own in (want, got):
            per_transfer = own.reshape(-1, transfer // 8)
            assert (per_transfer == per_transfer[:, :1]).all()
