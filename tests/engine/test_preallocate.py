"""--posix.preallocate: each file posix_fallocate'd to its final size before the phase's
barrier (outside the timing, as fio lays out its files), then written without truncation;
data verified, O_DIRECT included; a file system without room fails before any write."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_helpers import B, Engine, S, T, doc, run_engine, strace_run


def args(scratch: Path, *extra: str) -> list[str]:
    return ["--transfer", str(T), "--block", str(B), "--segments", str(S), "--path",
            str(scratch / "f"), "--quiet", "--verify", "--posix.preallocate", *extra]


@pytest.mark.parametrize("layout,files", [("fpp", 1), ("segmented", 1)])
def test_fallocate_before_the_writes(engine: Engine, scratch: Path, tmp_path: Path,
                                     layout: str, files: int):
    lines = strace_run(engine, args(scratch, "--layout", layout, "--write", "--keep"),
                       tmp_path / "trace", "fallocate,pwrite64,openat").splitlines()
    falloc = [n for n, ln in enumerate(lines) if re.search(rf"fallocate\(\d+, 0, 0, {B * S}\)",
                                                           ln)]
    writes = [n for n, ln in enumerate(lines) if re.search(rf"pwrite64\(\d+, .*, {T}, ", ln)]
    assert len(falloc) == files and len(writes) == B * S // T
    assert falloc[-1] < writes[0]
    opened = [ln for ln in lines if str(scratch) in ln and "O_CREAT" in ln]
    assert sum("O_TRUNC" in ln for ln in opened) == 1  # the preallocation's own open only


@pytest.mark.parametrize("mode", ["buffered", "direct"])
def test_verifies_with_several_ranks(engine: Engine, scratch: Path, mode: str):
    r = run_engine(engine, 3, args(scratch, "--layout", "segmented", "--posix.mode", mode),
                   scratch.parent)
    if r.rc == 2 and "refuses O_DIRECT" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.rc == 0, r.stderr
    assert doc(r)["verify"]["errors"] == 0 and doc(r)["config"]["posix_preallocate"] is True
    (w,) = r.phases("write")
    assert w["bytes"] == 3 * B * S


def test_stonewalled_file_keeps_its_full_size(engine: Engine, scratch: Path):
    """A write stopped by --stonewall leaves the preallocated size (the blocks were
    reserved before the timing), where a plain run leaves only what was written."""
    block = 4096 * T
    r = run_engine(engine, 1, ["--transfer", str(T), "--block", str(block), "--path",
                               str(scratch / "f"), "--quiet", "--write", "--keep",
                               "--posix.preallocate", "--fsync-per-write", "--stonewall",
                               "0.05"], scratch.parent, timeout=120)
    assert r.rc == 0, r.stderr
    (w,) = r.phases("write")
    assert w["stonewall"]["hit"] is True and w["bytes"] < block
    f = scratch / "f.0"
    assert f.stat().st_size == block and f.stat().st_blocks * 512 >= block


def test_no_room(engine: Engine, scratch: Path, small_fs: Path):
    r = run_engine(engine, 2, ["--path", str(small_fs / "f"), "--transfer", "64K", "--block",
                               "1M", "--quiet", "--posix.preallocate"], scratch)
    assert r.rc == 1, r.stderr
    err = doc(r)["error"]
    assert err["errno"] == 28 and "posix_fallocate" in err["message"]
    assert err["bytes_done"] == 0
    assert list(small_fs.iterdir()) == []


def test_one_rank_cannot_prepare_so_no_rank_writes(engine: Engine, scratch: Path):
    """Rank 1's file cannot be made (a directory holds its name), rank 0's reservation
    succeeds: rank 0 does not write either (before, it wrote its 1 MiB; on a file system with
    room for one file which rank gets it is a race), and rank 1's error is the one reported."""
    (scratch / "f.1").mkdir()
    r = run_engine(engine, 2, ["--path", str(scratch / "f"), "--transfer", "64K", "--block",
                               "1M", "--quiet", "--posix.preallocate"], scratch)
    assert r.rc == 1, r.stderr
    err = doc(r)["error"]
    assert err["rank"] == 1 and "f.1" in err["message"] and err["errno"] != 0, err
    assert err["bytes_done"] == 0 and err["phase"] == "write", err
    f0 = scratch / "f.0"  # reserved at most: no byte of data in it
    assert not f0.exists() or f0.read_bytes().count(0) == f0.stat().st_size
