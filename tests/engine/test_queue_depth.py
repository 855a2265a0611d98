"""--posix.queue-depth N: one rank keeps N requests in flight through io_uring (liburing),
refilling each slot as it completes, like fio's io_uring engine. Bytes verified (buffered and
O_DIRECT, random order included), the requests really submitted N at a time (strace), ENOSPC
reported with its errno, and the combinations a queue cannot keep full refused."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from engine_helpers import Engine, _env, doc, run_engine


def qargs(scratch: Path, *extra: str) -> list[str]:
    return ["--transfer", "4K", "--block", "512K", "--segments", "2", "--path",
            str(scratch / "f"), "--quiet", "--verify", "--posix.queue-depth", "32", *extra]


def uring_or_skip(engine: Engine, scratch: Path) -> None:
    r = run_engine(engine, 1, qargs(scratch, "--write"), scratch.parent)
    if r.rc == 2 and ("needs liburing" in r.stderr or "not available" in r.stderr):
        pytest.skip(r.stderr.strip())
    assert r.rc == 0, r.stderr


@pytest.mark.parametrize("mode", ["buffered", "direct"])
@pytest.mark.parametrize("layout,random", [("fpp", False), ("segmented", True),
                                           ("strided", False)])
def test_verifies(engine: Engine, scratch: Path, mode: str, layout: str, random: bool):
    uring_or_skip(engine, scratch)
    extra = ["--random"] if random else []
    r = run_engine(engine, 2, qargs(scratch, "--posix.mode", mode, "--layout", layout, *extra),
                   scratch.parent)
    if r.rc == 2 and "refuses O_DIRECT" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.rc == 0, r.stderr
    d = doc(r)
    assert d["verify"]["errors"] == 0 and d["config"]["posix_queue_depth"] == 32
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == 2 * 1024 * 1024 and ph["ops"] == 2 * 256


def test_requests_in_flight(engine: Engine, scratch: Path, tmp_path: Path):
    """A ring of 32 entries, 32 requests submitted by the first io_uring_enter, no pwrite."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    uring_or_skip(engine, scratch)
    argv = engine.argv(1, qargs(scratch, "--write"))
    i = argv.index(str(engine.binary))
    out = tmp_path / "trace"
    argv[i:i] = ["strace", "-f", "-qq", "-e", "trace=io_uring_setup,io_uring_enter,pwrite64",
                 "-o", str(out)]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=90)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert re.search(r"io_uring_setup\(32,", text)
    submits = [int(m.group(1)) for m in re.finditer(r"io_uring_enter\(\d+, (\d+),", text)]
    assert submits and submits[0] == 32 and sum(submits) == 256
    assert not re.search(r"pwrite64\(\d+, .*, 4096, ", text)


def test_enospc(engine: Engine, scratch: Path, small_fs: Path):
    uring_or_skip(engine, scratch)
    r = run_engine(engine, 2, ["--path", str(small_fs / "f"), "--transfer", "64K", "--block",
                               "1M", "--quiet", "--posix.queue-depth", "8"], scratch)
    assert r.rc == 1, r.stderr
    err = doc(r)["error"]
    assert err["errno"] == 28 and err["phase"] == "write"
    assert list(small_fs.iterdir()) == []


@pytest.mark.parametrize("extra,message", [
    (["--posix.queue-depth", "0"], "give 1 to 4096"),
    (["--posix.queue-depth", "8", "--threads", "2"], "without --threads"),
    (["--posix.queue-depth", "8", "--layout", "serial"], "applies to the fpp, segmented"),
])
def test_bad_input(engine: Engine, scratch: Path, extra: list[str], message: str):
    r = run_engine(engine, 2, ["--path", str(scratch / "f"), "--quiet", *extra],
                   scratch.parent)
    assert r.rc == 2 and message in r.stderr, r.stderr
    assert list(scratch.iterdir()) == []
