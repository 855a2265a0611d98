"""Read-ahead under prefetch=auto on a round-trip file system (a real bindfs FUSE mount):
it stays on while the program computes between reads (overlap pays), and steps aside when
the program only reads (nothing to overlap: the copy would just cost); either way the bytes
read are exactly those read without the library."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from buffer_helpers import iolab, parse_table, read_ahead_line, run

MiB = 1 << 20


@pytest.fixture
def fuse_dir(tmp_path: Path) -> Iterator[Path]:
    """A bindfs mount of a fresh folder: every read is a round trip to the bindfs process."""
    if shutil.which("bindfs") is None or shutil.which("fusermount") is None:
        pytest.skip("bindfs is not installed (tools/install-deps.sh installs it for tests)")
    if not os.path.exists("/dev/fuse"):
        pytest.skip("no /dev/fuse on this machine")
    back, mnt = tmp_path / "back", tmp_path / "mnt"
    back.mkdir()
    mnt.mkdir()
    p = subprocess.run(["bindfs", str(back), str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"bindfs cannot mount here: {p.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["fusermount", "-u", str(mnt)], check=False)


def _file(mnt: Path, size: int) -> Path:
    """A file written to the folder behind the mount (not through it)."""
    (mnt.parent / "back" / "in.dat").write_bytes(os.urandom(size))
    return mnt / "in.dat"


def _evict(f: Path) -> None:
    """Cold reads, so the reads wait for the file system as they would on a server: the
    pages of the FUSE file and of the file behind it leave the page cache."""
    for path in (f, f.parent.parent / "back" / f.name):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


@pytest.mark.parametrize("mode", ["read", "pread"])
def test_steps_aside_when_the_program_only_reads(buflib, cprog, fuse_dir: Path, mode: str):
    f = _file(fuse_dir, 40 * MiB)
    want = run([cprog("reader"), mode, f, 4096, 0], buflib, None)
    assert want.returncode == 0 and want.stdout.split()[0] == str(40 * MiB)
    _evict(f)
    r = iolab("buffer", "--spec", "*.dat", "--", cprog("reader"), mode, f, 4096, 0)
    assert r.returncode == 0, r.stderr
    assert r.stdout == want.stdout  # the same bytes, also across the switch
    line = read_ahead_line(r.stderr, f)
    assert line.startswith("off (auto: fuse; stepped aside after 16 MiB"), line
    t = parse_table(r.stderr)[str(f)]
    assert t["Read calls"] == 40 * MiB // 4096 + 1  # the program's calls, EOF included
    # after 16 MiB (4 default buffers) every read went to the kernel as the program made it
    assert t["Sys Read calls"] >= (40 - 16 - 12) * MiB // 4096
    assert t["Sys Read MB"] >= 40


def test_stays_on_while_the_program_computes(buflib, cprog, fuse_dir: Path):
    f = _file(fuse_dir, 24 * MiB)
    spin = "20000"  # ~25 us of work per 4 KiB read: the worker keeps well ahead
    want = run([cprog("reader"), "read", f, 4096, spin], buflib, None, timeout=300)
    _evict(f)
    r = iolab("buffer", "--spec", "*.dat", "--", cprog("reader"), "read", f, 4096, spin)
    assert r.returncode == 0 and r.stdout == want.stdout, r.stderr
    assert read_ahead_line(r.stderr, f).startswith("on (auto: fuse; kept after 16 MiB")
    t = parse_table(r.stderr)[str(f)]
    assert t["Read calls"] == 24 * MiB // 4096 + 1
    assert t["Sys Read calls"] < 24 * MiB // MiB + 20  # 1 MiB chunks, not 4 KiB reads
    assert t["Prefetches"] >= 6


def test_explicit_depth_never_steps_aside(buflib, cprog, fuse_dir: Path):
    """prefetch=N is the user's choice: read-ahead stays on even with nothing to overlap."""
    f = _file(fuse_dir, 24 * MiB)
    _evict(f)
    r = iolab("buffer", "--spec", "*.dat:prefetch=2", "--", cprog("reader"), "read", f, 4096, 0)
    assert r.returncode == 0, r.stderr
    assert read_ahead_line(r.stderr, f) == "on (prefetch=2)"
    assert parse_table(r.stderr)[str(f)]["Sys Read calls"] < 24 * MiB // MiB + 20
