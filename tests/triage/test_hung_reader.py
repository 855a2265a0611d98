"""A log's reader that stops answering (libdarshan-util looping on a damaged log, a file system
that hangs, a stopped process) is stopped at the log's time limit: the run goes on, nothing
read is lost, the hung log is a row with its reason. Faults injected for real: the readers
are stopped with SIGSTOP, as a process blocked on a dead file system is (CI, stop 35: a
`triage -j 2` of the crashing-log farm never finished in 300 s, nothing printed)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from dask_helpers import env_with_iolab, process_parents, stored_rows, triage
from logfarm import make_centre

from iolab.errors import UsageError
from iolab.sources.darshan import hang_reason, load_darshan_log

LIMIT_S = 2.0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _stop_pool_workers(main: subprocess.Popen, stopped: set[int]) -> None:
    """Stop every worker of the command's process pool as soon as it appears (the children of
    its forkserver), until the command ends."""
    while main.poll() is None:
        ppids = process_parents()
        servers = {p for p, pp in ppids.items() if pp == main.pid and "forkserver" in _cmdline(p)}
        for p, pp in ppids.items():
            if pp in servers and p not in stopped:
                os.kill(p, signal.SIGSTOP)
                stopped.add(p)
        time.sleep(0.005)


def test_pool_workers_that_stop_answering_are_replaced_and_nothing_is_lost(
        tmp_path: Path) -> None:
    """Expected: every pool's workers stopped, each pool given up at the head log's time
    limit, its logs read again one fork each: the store has exactly the rows of an
    undisturbed run, the stopped workers are gone, and stderr says what happened / was: the
    command waited on the stopped worker forever."""
    centre = make_centre(tmp_path / "centre")
    clean = tmp_path / "clean"
    p = triage(str(centre.root), "--store", str(clean), "-j", "2", "-q")
    assert p.returncode == 0, p.stderr
    where = tmp_path / "store"
    main = subprocess.Popen(
        [sys.executable, "-m", "iolab", "triage", str(centre.root), "--store", str(where),
         "-j", "2", "-q", "--log-time-limit", f"{LIMIT_S:g}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_with_iolab())
    stopped: set[int] = set()
    watcher = threading.Thread(target=_stop_pool_workers, args=(main, stopped), daemon=True)
    watcher.start()
    try:
        out, err = main.communicate(timeout=240)
    finally:
        main.kill()
        watcher.join()
    assert main.returncode == 0, err
    assert stopped, "no pool worker was seen to stop"
    assert "did not answer within its time limit" in err, err
    assert stored_rows(where) == stored_rows(clean)
    alive = [p for p in stopped if Path(f"/proc/{p}").exists()]
    assert not alive, f"stopped workers left behind: {alive}"


def _children() -> set[int]:
    me = os.getpid()
    kids: set[int] = set()
    for tid in os.listdir(f"/proc/{me}/task"):
        with contextlib.suppress(OSError):
            kids.update(map(int, Path(f"/proc/{me}/task/{tid}/children").read_text().split()))
    return kids


def _stop_children(stop: threading.Event, stopped: list[int], ready: threading.Event) -> None:
    """Stop each new child of this process as it appears (the forked reader; children from
    earlier tests, such as a pool's forkserver, are left alone)."""
    before = _children()
    ready.set()
    while not stop.is_set():
        for k in _children() - before:
            if k not in stopped:
                os.kill(k, signal.SIGSTOP)
                stopped.append(k)
        time.sleep(0.0002)


def test_a_forked_reader_that_stops_answering_is_killed_at_the_limit() -> None:
    """Expected: the reader's fork stopped before it answers -> one line naming the limit,
    after about the limit, the child killed and reaped / was: waited for forever. (A small log
    reads in ~30 ms: a try where the child answered before it was stopped is tried again.)"""
    log = sorted((Path(__file__).resolve().parents[2] / "../shared/darshan-logs/dlio_logs")
                 .glob("*.darshan"))
    if not log:
        pytest.skip("the shared corpus of real Darshan logs is not there")
    for _ in range(10):
        stop, stopped, ready = threading.Event(), [], threading.Event()
        watcher = threading.Thread(target=_stop_children, args=(stop, stopped, ready),
                                   daemon=True)
        watcher.start()
        ready.wait()
        t0 = time.monotonic()
        try:
            load_darshan_log(log[0], limit_s=1.0)
            took = None
        except UsageError as exc:
            took = time.monotonic() - t0
            message = str(exc)
        finally:
            stop.set()
            watcher.join()
        if took is not None:
            break
        for k in stopped:  # answered before it was stopped: let it go, try again
            os.kill(k, signal.SIGCONT)
    else:
        pytest.fail("the forked reader always answered before it could be stopped")
    assert message == f"{log[0]}: {hang_reason(1.0)}"
    assert 1.0 <= took < 10.0
    assert stopped and all(not Path(f"/proc/{k}").exists() for k in stopped)


def test_log_time_limit_must_be_positive(tmp_path: Path) -> None:
    """Expected: --log-time-limit 0 refused in one line, exit 2, no store made."""
    centre = make_centre(tmp_path / "centre")
    where = tmp_path / "store"
    p = triage(str(centre.root), "--store", str(where), "--log-time-limit", "0")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "iolab triage: --log-time-limit 0: must be more than 0 seconds"], p.stderr
    assert not where.exists()
