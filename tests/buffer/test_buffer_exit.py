"""Nothing lost, nothing changed at the edges of a process: normal exit, exit() from
another thread, _exit(), SIGTERM/SIGINT (default action and the program's own handler),
kill -9 (at most size x count bytes lost, the documented bound), fork/system/exec, and
threads writing different files or sharing one descriptor."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from buffer_helpers import lib_env, pattern, run

TOTAL = 3_000_000 + 123  # not a multiple of anything: a partial last buffer
SPEC = "*.dat:size=256K:count=3:prefetch=2"


@pytest.mark.parametrize("api", ["write", "pwrite", "fwrite"])
@pytest.mark.parametrize("end", ["close", "fsync", "exit", "thread", "_exit", "quick"])
def test_every_way_out_writes_what_the_program_wrote(buflib, cprog, tmp_path, api, end):
    # expected: the same file as without the library (for fwrite + _exit/quick_exit stdio's
    # own buffer is lost in both: they do not flush stdio); for write(), the whole pattern.
    files = []
    for spec in (None, SPEC):
        f = tmp_path / f"{spec is not None}.dat"
        r = run([cprog("writer"), f, TOTAL, 512, api, end], buflib, spec)
        assert r.returncode == 0, r.stderr
        files.append(f.read_bytes())
    assert files[1] == files[0]
    if not (api == "fwrite" and end in ("_exit", "quick")):
        assert files[1] == pattern(TOTAL)


def _start_hanging(cprog, lib: Path, spec: str, path: Path, end: str = "hang",
                   total: int = TOTAL) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [str(cprog("writer")), str(path), str(total), "512", "write", end],
        env=lib_env(lib, spec), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == f"ready {total}"
    return p


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGPIPE]
)
def test_fatal_signal_flushes_and_keeps_the_default_death(buflib, cprog, tmp_path, sig):
    f = tmp_path / "sig.dat"
    p = _start_hanging(cprog, buflib, SPEC, f)
    p.send_signal(sig)
    p.wait(timeout=30)
    assert p.returncode == -sig  # killed by the signal, as without the library
    assert f.read_bytes() == pattern(TOTAL)


def test_program_handler_is_chained(buflib, cprog, tmp_path):
    f = tmp_path / "handler.dat"
    p = _start_hanging(cprog, buflib, SPEC, f, end="handler")
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3 and "handler" in err  # the program's handler ran, exit(3)
    assert f.read_bytes() == pattern(TOTAL)


@pytest.mark.parametrize("size,count", [(64 << 10, 2), (1 << 20, 4)])
def test_kill_9_loses_at_most_size_times_count(buflib, cprog, tmp_path, size, count):
    # The documented bound: after kill -9, at most size x count bytes per file are lost
    # (the buffer being filled plus those queued for the background writer); what reached
    # the file is an exact prefix of what the program wrote.
    f = tmp_path / "k9.dat"
    p = _start_hanging(cprog, buflib, f"*.dat:size={size}:count={count}", f)
    p.kill()
    p.wait(timeout=30)
    data = f.read_bytes()
    assert TOTAL - len(data) <= size * count, f"lost {TOTAL - len(data)} bytes"
    assert data == pattern(TOTAL)[: len(data)]


def test_idle_buffer_is_written_within_seconds(buflib, cprog, tmp_path):
    # A partly filled buffer that stops growing is written by the idle check (every
    # second): a quiet program has nothing at risk, and other processes see its data.
    f = tmp_path / "idle.dat"
    p = _start_hanging(cprog, buflib, "*.dat:size=64M:count=4", f, total=100_000)
    deadline = time.monotonic() + 10
    while f.stat().st_size < 100_000 and time.monotonic() < deadline:
        time.sleep(0.1)
    p.kill()
    p.wait(timeout=30)
    assert f.read_bytes() == pattern(100_000)


@pytest.mark.parametrize("how", ["fork", "system", "exec"])
def test_other_processes_see_everything_written(buflib, cprog, tmp_path, how):
    f = tmp_path / "fork.dat"
    r = run([cprog("forker"), f, 100_000, how], buflib, "*.dat:size=1M")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "100000"
    assert f.stat().st_size == 100_000 + (512 if how == "fork" else 0)


def _record(t: int, k: int, size: int) -> bytes:
    """progs/threads.c's record k of thread t."""
    head = f"t={t} k={k} ".encode()
    return head + bytes([97 + t % 26]) * (size - len(head))


def test_parent_and_child_share_an_inherited_descriptor(buflib, cprog, tmp_path):
    # After fork both processes write through one offset: the file must hold every line,
    # as without the library (the order of C and P lines is the scheduler's).
    f = tmp_path / "share.dat"
    r = run([cprog("forker"), f, 100_000, "share"], buflib, "*.dat:size=1M")
    assert r.returncode == 0, r.stderr
    data = f.read_bytes()
    assert data[:100_000] == b"x" * 100_000
    lines = data[100_000:].split(b"\n")[:-1]
    assert sorted(lines) == sorted([b"C"] * 100 + [b"P"] * 100 + [b"p"] * 100)
    assert lines[-100:] == [b"p"] * 100


@pytest.mark.parametrize("mode", ["files", "shared", "pshared"])
def test_threads(buflib, cprog, tmp_path, mode):
    nthreads, nrec, recsize = 4, 4000, 100
    f = tmp_path / "th.dat"
    r = run([cprog("threads"), mode, f, nthreads, nrec, recsize], buflib,
            "*.dat*:size=64K:count=3")
    assert r.returncode == 0, r.stderr
    paths = [Path(f"{f}.{t}") for t in range(nthreads)] if mode == "files" else [f]
    data = b"".join(p.read_bytes() for p in paths)
    assert len(data) == nthreads * nrec * recsize
    seen = set()
    for i in range(0, len(data), recsize):
        rec = data[i : i + recsize]
        t, k = (int(x.split(b"=")[1]) for x in rec.split(b" ")[:2])
        assert rec == _record(t, k, recsize), f"record {i // recsize} torn"
        if mode == "pshared":
            assert i == (k * nthreads + t) * recsize
        seen.add((t, k))
    assert len(seen) == nthreads * nrec  # every record exactly once
    if mode != "files":  # and threads sharing one descriptor read it back intact
        r = run([cprog("threads"), "reads", f, nthreads, nrec, recsize], buflib,
                "*.dat:size=64K:count=3:prefetch=2")
        assert r.stdout.split() == ["intact", str(nthreads * nrec)]
