"""Errors are never swallowed: a delayed write that fails (ENOSPC on a small tmpfs we mount,
EIO injected with libfiu into the background writer's pwrite) is returned by the program's
next write, or at the latest by fsync or close; at exit, with nobody left to tell, it is
one line on stderr."""

from __future__ import annotations

import errno
import os
import re
import subprocess
from pathlib import Path

import pytest
from buffer_helpers import lib_env, run

FIU = Path("/usr/lib/fiu")


@pytest.fixture()
def small_fs(tmp_path):
    """A 1 MiB tmpfs (root only: mount)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount tmpfs: {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=False)


def _failures(stderr: str) -> list[tuple[str, int]]:
    return [(m[0], int(m[1])) for m in re.findall(r"^FAIL (\S+) \d+ (\d+)$", stderr, re.M)]


@pytest.mark.parametrize("api", ["write", "pwrite", "fwrite"])
@pytest.mark.parametrize("end", ["close", "fsync"])
def test_enospc_reaches_the_program(buflib, cprog, small_fs, api, end):
    # 2 MB into 1 MiB: without the library one write fails with ENOSPC; with it, the
    # failure of a delayed write must come back through write/fwrite, fsync or close.
    r = run([cprog("writer"), small_fs / "x.dat", 2_000_000, 512, api, end], buflib,
            "*.dat:size=64K:count=4")
    assert r.returncode == 1
    fails = _failures(r.stderr)
    assert fails and fails[0][1] == errno.ENOSPC, r.stderr
    assert "iolab-buffer" not in r.stderr  # reported to the program, not only at exit


def test_enospc_at_exit_is_one_line(buflib, cprog, small_fs):
    # The program exits without close; the last buffers fail at the exit flush.
    r = run([cprog("writer"), small_fs / "x.dat", 1_100_000, 512, "write", "exit"], buflib,
            "*.dat:size=256K:count=4")
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("iolab-buffer:")]
    fails = _failures(r.stderr)
    assert fails or len(lines) == 1, r.stderr
    if lines:
        assert "No space left on device" in lines[0]


def _fiu(lib: Path, failpoint: str) -> dict[str, str]:
    if not (FIU / "fiu_posix_preload.so").is_file():
        pytest.skip("libfiu's preload libraries are not installed")
    env = lib_env(lib, "*.dat:size=64K:count=4")
    # ours first: the background writer's pwrite goes through libfiu (RTLD_NEXT)
    env["LD_PRELOAD"] = f"{lib}:{FIU}/fiu_run_preload.so:{FIU}/fiu_posix_preload.so"
    env["FIU_ENABLE"] = f"enable name={failpoint},failinfo={errno.EIO}"
    env["FIU_CTRL_FIFO"] = ""
    return env


@pytest.mark.parametrize("total,call", [(1_000_000, "write"), (10_000, "close")])
def test_eio_of_a_delayed_write(buflib, cprog, tmp_path, total, call):
    # Large: reported by a later write().  Small (one partial buffer): by close().
    r = subprocess.run(
        [str(cprog("writer")), str(tmp_path / "f.dat"), str(total), "512", "write", "close"],
        env=_fiu(buflib, "posix/io/rw/pwrite"), capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 1
    assert _failures(r.stderr)[0] == (call, errno.EIO), r.stderr


def test_eio_at_fsync(buflib, cprog, tmp_path):
    r = subprocess.run(
        [str(cprog("writer")), str(tmp_path / "f.dat"), "10000", "512", "write", "fsync"],
        env=_fiu(buflib, "posix/io/rw/pwrite"), capture_output=True, text=True, timeout=60,
    )
    assert _failures(r.stderr)[0] == ("fsync", errno.EIO), r.stderr
