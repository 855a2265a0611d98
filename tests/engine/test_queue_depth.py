"""--posix.queue-depth N: one rank keeps N requests in flight, refilling each slot as it
completes, like fio's io_uring and libaio engines; --posix.aio io_uring (liburing) | libaio
(Linux AIO) | auto chooses the engine. Bytes verified with each engine (buffered and O_DIRECT,
random order included), the engine that ran recorded per phase, the requests really
submitted N at a time (strace), ENOSPC reported with its errno, and the combinations a queue
cannot keep full refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_helpers import Engine, doc, run_engine, run_refused, strace_run


def qargs(scratch: Path, *extra: str) -> list[str]:
    return ["--transfer", "4K", "--block", "512K", "--segments", "2", "--path",
            str(scratch / "f"), "--quiet", "--verify", "--posix.queue-depth", "32", *extra]


ENGINES = ["io_uring", "libaio"]


def engine_or_skip(engine: Engine, scratch: Path, aio: str = "io_uring") -> None:
    """Skip when this build has no such engine (the library was missing) or the kernel (a
    container's seccomp filter) refuses it: each refusal names what to install or use."""
    r = run_engine(engine, 1, qargs(scratch, "--write", "--posix.aio", aio), scratch.parent)
    if r.rc == 2 and ("built without" in r.stderr or "not available" in r.stderr
                      or "is refused here" in r.stderr):
        pytest.skip(r.stderr.strip())
    assert r.rc == 0, r.stderr


def uring_or_skip(engine: Engine, scratch: Path) -> None:
    engine_or_skip(engine, scratch, "io_uring")


@pytest.mark.parametrize("aio", ENGINES)
@pytest.mark.parametrize("mode", ["buffered", "direct"])
@pytest.mark.parametrize("layout,random", [("fpp", False), ("segmented", True),
                                           ("strided", False)])
def test_verifies(engine: Engine, scratch: Path, mode: str, layout: str, random: bool,
                  aio: str):
    engine_or_skip(engine, scratch, aio)
    extra = ["--random"] if random else []
    r = run_engine(engine, 2, qargs(scratch, "--posix.mode", mode, "--layout", layout,
                                    "--posix.aio", aio, *extra), scratch.parent)
    if r.rc == 2 and "refuses O_DIRECT" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.rc == 0, r.stderr
    d = doc(r)
    assert d["verify"]["errors"] == 0 and d["config"]["posix_queue_depth"] == 32
    assert d["config"]["posix_aio"] == aio
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == 2 * 1024 * 1024 and ph["ops"] == 2 * 256
        assert ph["queue"] == {"depth": 32, "engine": aio}


@pytest.mark.parametrize("mode,reserve,write_engine", [
    ("direct", True, "libaio"), ("direct", False, "io_uring"), ("buffered", True, "io_uring")])
def test_auto_per_operation(engine: Engine, scratch: Path, mode: str, reserve: bool,
                            write_engine: str):
    """auto: libaio for O_DIRECT writes into reserved blocks (--posix.preallocate: faster
    there), io_uring for reads, for writes that extend the file and for buffered writes
    (libaio would do those inside io_submit); verified, recorded per phase."""
    engine_or_skip(engine, scratch, "io_uring")
    engine_or_skip(engine, scratch, "libaio")
    extra = ["--posix.preallocate"] if reserve else []
    r = run_engine(engine, 1, qargs(scratch, "--posix.mode", mode, "--random", *extra),
                   scratch.parent)
    if r.rc == 2 and "refuses O_DIRECT" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.rc == 0, r.stderr
    d = doc(r)
    assert d["verify"]["errors"] == 0 and d["config"]["posix_aio"] == "auto"
    (wr,) = r.phases("write")
    (rd,) = r.phases("read")
    assert wr["queue"] == {"depth": 32, "engine": write_engine}
    assert rd["queue"] == {"depth": 32, "engine": "io_uring"}


def test_no_queue_recorded_as_null(engine: Engine, scratch: Path):
    r = run_engine(engine, 1, ["--transfer", "4K", "--block", "64K", "--path",
                               str(scratch / "f"), "--quiet"], scratch.parent)
    assert r.rc == 0, r.stderr
    assert all(ph["queue"] is None for op in ("write", "read") for ph in r.phases(op))


def test_requests_in_flight(engine: Engine, scratch: Path, tmp_path: Path):
    """A ring of 32 entries set up like fio's, 32 requests submitted by the first
    io_uring_enter, no pwrite."""
    uring_or_skip(engine, scratch)
    text = strace_run(engine, qargs(scratch, "--write"), tmp_path / "trace",
                      "io_uring_setup,io_uring_enter,pwrite64")
    assert re.search(r"io_uring_setup\(32,", text)
    # the ring asked for as fio's io_uring engine asks (a kernel before 6.1 refuses: retried)
    first = re.search(r"io_uring_setup\(32, \{flags=([^,]*)", text)
    assert first and "COOP_TASKRUN" in first.group(1), text[:500]
    assert re.search(r"SINGLE_ISSUER|0x3000|0x1000", first.group(1)), first.group(1)
    submits = [int(m.group(1)) for m in re.finditer(r"io_uring_enter\(\d+, (\d+),", text)]
    assert submits and submits[0] == 32 and sum(submits) == 256
    assert not re.search(r"pwrite64\(\d+, .*, 4096, ", text)


def test_libaio_requests_in_flight(engine: Engine, scratch: Path, tmp_path: Path):
    """An AIO context of 32, 32 requests given to the first io_submit, no io_uring, no
    pwrite: libaio really keeps the queue (O_DIRECT, where it is asynchronous)."""
    engine_or_skip(engine, scratch, "libaio")
    text = strace_run(engine, qargs(scratch, "--write", "--posix.aio", "libaio",
                                    "--posix.mode", "direct"), tmp_path / "trace",
                      "io_setup,io_submit,io_uring_enter,pwrite64")
    assert re.search(r"io_setup\(32,", text)
    submits = [int(m.group(1)) for m in re.finditer(r"io_submit\(0x[0-9a-f]+, (\d+),", text)]
    assert submits and submits[0] == 32 and sum(submits) == 256
    assert "io_uring_enter" not in text
    assert not re.search(r"pwrite64\(\d+, .*, 4096, ", text)


@pytest.mark.parametrize("aio", ENGINES)
def test_queue_set_up_and_torn_down_outside_the_phases(engine: Engine, scratch: Path,
                                                       tmp_path: Path, aio: str):
    """The queue is set up once, before the first phase opens its file, kept through the
    write and the read, and torn down after the last close, as fio keeps its engine out of
    its timed part. Expected: one io_setup / io_uring_setup before the data file's first
    open, io_destroy / the ring's close after its last close; was: one queue per phase,
    io_destroy inside each timed close (29-34 ms under strace, an RCU grace period)."""
    engine_or_skip(engine, scratch, aio)
    trace = strace_run(engine, qargs(scratch, "--posix.aio", aio, "--posix.mode", "direct"),
                       tmp_path / "trace", "io_setup,io_destroy,io_uring_setup,openat,close")
    data = re.escape(str(scratch / "f"))
    lines = trace.splitlines()
    opens, closes, setups, teardowns = [], [], [], []
    data_fds: set[str] = set()
    ring_fds: set[str] = set()
    for k, ln in enumerate(lines):
        if m := re.search(rf'openat\(AT_FDCWD, "{data}[^"]*", .*O_DIRECT.*\)\s+= (\d+)', ln):
            opens.append(k)
            data_fds.add(m.group(1))
        elif m := re.search(r"io_uring_setup\(.*\)\s+= (\d+)", ln):
            setups.append(k)
            ring_fds.add(m.group(1))
        elif re.search(r"io_setup\(.*\)\s+= 0", ln):
            setups.append(k)
        elif "io_destroy(" in ln:
            teardowns.append(k)
        elif (m := re.search(r"close\((\d+)\)", ln)) and m.group(1) in data_fds | ring_fds:
            (closes if m.group(1) in data_fds else teardowns).append(k)
            (data_fds if m.group(1) in data_fds else ring_fds).discard(m.group(1))
    assert len(opens) == 2 and len(closes) == 2, lines  # the write's file, the read's
    assert len(setups) == 1 and setups[0] < opens[0], (setups, opens)
    assert len(teardowns) == 1 and teardowns[0] > closes[-1], (teardowns, closes)


@pytest.mark.parametrize("aio", ENGINES)
def test_enospc(engine: Engine, scratch: Path, small_fs: Path, aio: str):
    engine_or_skip(engine, scratch, aio)
    r = run_engine(engine, 2, ["--path", str(small_fs / "f"), "--transfer", "64K", "--block",
                               "1M", "--quiet", "--posix.queue-depth", "8", "--posix.aio",
                               aio], scratch)
    assert r.rc == 1, r.stderr
    err = doc(r)["error"]
    assert err["errno"] == 28 and err["phase"] == "write"
    assert list(small_fs.iterdir()) == []


@pytest.mark.parametrize("extra,message", [
    (["--posix.queue-depth", "0"], "give 1 to 4096"),
    (["--posix.queue-depth", "8", "--threads", "2"], "without --threads"),
    (["--posix.queue-depth", "8", "--layout", "serial"], "applies to the fpp, segmented"),
    (["--posix.aio", "libaio"], "applies with --posix.queue-depth 2 or more"),
    (["--posix.queue-depth", "8", "--posix.aio", "spdk"], "posix.aio"),
])
def test_bad_input(engine: Engine, scratch: Path, extra: list[str], message: str):
    r = run_refused(engine, 2, ["--path", str(scratch / "f"), "--quiet", *extra],
                    scratch.parent)
    assert r.rc == 2 and message in r.stderr, r.stderr
    assert list(scratch.iterdir()) == []
