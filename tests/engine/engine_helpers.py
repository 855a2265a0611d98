"""Helpers for the engine's integration tests: real MPI ranks (mpirun), real files.

The binaries are found as ``iolab`` finds them (``iolab.paths.engine_binary``): the venv's
``bin/`` after ``./setup``, else ``build/<flavour>/engine``. Each test gets its own scratch
directory; every run writes its JSON to a file so stdout stays free for the table.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from refused_runs import REFUSED_RUN_ENV

from iolab.errors import UsageError
from iolab.paths import engine_binary

MPIRUN = {"default": "mpirun", "mpich": "mpirun.mpich"}


@dataclass
class Engine:
    """One iolab-bench build and the mpirun of the same MPI library."""

    flavour: str
    binary: Path
    mpirun: str
    apis: list[str] = field(default_factory=list)

    def argv(self, np: int, args: list[str]) -> list[str]:
        cmd = [self.mpirun, "-np", str(np)]
        if self.flavour == "default":
            # -q: Open MPI's mpirun would add its own "process returned non-zero" banner
            cmd += ["-q", "--oversubscribe"]
        return [*cmd, str(self.binary), *args]


@dataclass
class Result:
    rc: int
    doc: dict[str, Any] | None
    stdout: str
    stderr: str

    def why(self) -> str:
        """For assertion messages: stderr and the JSON's error (a failed run's only trace
        when the engine printed nothing)."""
        err = self.doc.get("error") if self.doc else None
        return f"exit {self.rc}; stderr: {self.stderr.strip()!r}; error: {err}"

    def phases(self, op: str | None = None) -> list[dict[str, Any]]:
        assert self.doc is not None, self.stderr
        out = [p for r in self.doc["repetitions"] for p in r["phases"]]
        return [p for p in out if op is None or p["op"] == op]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.pop("ROMIO_HINTS", None)
    # Open MPI on one host: shared memory only, no network probing (startup 0.6 s -> 0.35 s)
    env.setdefault("OMPI_MCA_btl", "self,vader")
    env.setdefault("OMPI_MCA_pml", "ob1")
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    return env


def run_engine(engine: Engine, np: int, args: list[str], tmp: Path, *, json_out: bool = True,
               env: dict[str, str] | None = None, timeout: float = 90) -> Result:
    """Run the engine under mpirun; parse its JSON (None when it wrote none).

    A run that ends by itself, failed ones included, is launched without Open MPI's
    SIGTERM-to-SIGKILL wait (REFUSED_RUN_ENV): the engine never exits but through
    MPI_Finalize, after every rank agreed on the failure, rank 0 wrote and flushed its JSON,
    table and error line and the files were removed; Open MPI 4.1's MPI_Finalize is a fence,
    so at the first non-zero exit every rank is past its last write and the wait (~1-2 s
    per failed run: ENOSPC, --verify errors, a rank that cannot open) is idle. Interrupted
    runs (interrupt_run) keep the wait: there it is a rank's time to save its results."""
    jpath = tmp / f"result-{os.urandom(4).hex()}.json"
    full = [*args, "--json", str(jpath)] if json_out and "--json" not in args else list(args)
    proc = subprocess.run(engine.argv(np, full), capture_output=True, text=True,
                          timeout=timeout, env={**_env(), **REFUSED_RUN_ENV, **(env or {})})
    doc = None
    if json_out and jpath.exists() and jpath.stat().st_size > 0:
        doc = json.loads(jpath.read_text())
        jpath.unlink()
    return Result(proc.returncode, doc, proc.stdout, proc.stderr)




def run_refused(engine: Engine, np: int, args: list[str], tmp: Path, *,
                env: dict[str, str] | None = None) -> Result:
    """:func:`run_engine` for a run the engine refuses before it starts (exit 2): without
    mpirun's idle wait after a non-zero exit (see :mod:`refused_runs`)."""
    return run_engine(engine, np, args, tmp, env={**REFUSED_RUN_ENV, **(env or {})})


def _engine(flavour: str) -> Engine | None:
    try:
        binary = engine_binary(flavour)
    except UsageError:
        return None
    if shutil.which(MPIRUN[flavour]) is None:
        return None
    e = Engine(flavour, binary, MPIRUN[flavour])
    out = subprocess.run(e.argv(1, ["--list-options"]), capture_output=True, text=True,
                         env=_env(), timeout=60)
    if out.returncode != 0:
        return None
    table = json.loads(out.stdout)
    e.apis = next(o["choices"] for o in table if o["name"] == "api")
    return e


_cache: dict[str, Engine | None] = {}


def get_engine(flavour: str) -> Engine | None:
    if flavour not in _cache:
        _cache[flavour] = _engine(flavour)
    return _cache[flavour]


def strace_run(engine: Engine, args: list[str], out: Path, calls: str) -> str:
    """One rank under ``strace -f``; the trace of the given system calls. Skipped without
    strace, and where the file system refuses O_DIRECT (the engine says so, exit 2)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    argv = engine.argv(1, args)
    i = argv.index(str(engine.binary))
    argv[i:i] = ["strace", "-f", "-qq", "-e", f"trace={calls}", "-o", str(out)]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=90)
    if p.returncode == 2 and "refuses O_DIRECT" in p.stderr:
        pytest.skip(p.stderr.strip())
    assert p.returncode == 0, p.stderr
    return out.read_text()


def mount_fs(where: Path, fstype: str, options: str) -> str | None:
    """Mount a small file system for a fault test; returns why not (None when mounted)."""
    if os.geteuid() != 0:
        return "mounting a test file system needs root"
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", fstype, "-o", options, fstype, str(where)],
                       capture_output=True, text=True)
    return None if p.returncode == 0 else f"mount -t {fstype} failed: {p.stderr.strip()}"


def umount_fs(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def interrupt_run(engine: Engine, np: int, args: list[str], jpath: Path, scratch: Path,
                  started: Callable[[], bool], settle_s: float, flavour: str,
                  check_started: bool = False) -> dict[str, Any]:
    """Start a run, wait until started() and settle_s more (with check_started, started()
    must still hold then: a run that recreates its file each repetition cannot promise it),
    send SIGINT to mpirun (Ctrl-C),
    and check what every interrupted run must leave: a non-zero exit (Open MPI), no scratch
    file, JSON status "interrupted". Returns the JSON document."""
    proc = subprocess.Popen(engine.argv(np, args), env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not started():
            time.sleep(0.1)
        time.sleep(settle_s)
        assert not check_started or started(), "the run did not start"
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if flavour == "default":  # hydra's own exit code after a forwarded Ctrl-C varies
        assert proc.returncode != 0
    assert list(scratch.iterdir()) == []
    doc: dict[str, Any] = json.loads(jpath.read_text())
    assert doc["status"] == "interrupted"
    return doc


# The small run most engine tests use: transfer, block, segments, and transfers per rank.
T, B, S = 4096, 16384, 2
XFERS = B // T * S


def expected_ops(layout: str, np: int, group: int = 2) -> int:
    """I/O calls per phase: one per transfer per rank, or per aggregator for aggregated."""
    if layout == "serial":
        return XFERS
    if layout == "subset":
        g = min(group, np)
        return -(-np // g) * XFERS
    return np * XFERS


def doc(r: Result) -> dict[str, Any]:
    """The result JSON of a run that must have written one."""
    assert r.doc is not None, r.stderr
    return r.doc
