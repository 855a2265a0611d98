"""A real Dask cluster for the triage tests: ``dask scheduler`` and ``dask worker`` started as
separate processes (no nanny: killing a worker kills it for good), and what the tests compare
(the report as JSON and CSV, the store's rows without what differs by run: batch ids, read
times)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from iolab.cli import main

REPO = Path(__file__).resolve().parents[2]


def env_with_iolab(base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "src")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


@dataclass
class Cluster:
    folder: Path
    scheduler: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def scheduler_file(self) -> Path:
        return self.folder / "scheduler.json"

    @property
    def address(self) -> str:
        return str(json.loads(self.scheduler_file.read_text())["address"])

    def stop(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in [*self.workers, self.scheduler]:
            if p is not None:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def start_cluster(folder: Path, workers: int) -> Cluster:
    """A scheduler on 127.0.0.1 (a free port, told by its scheduler file) and ``workers``
    single-threaded worker processes; returns once every worker is registered."""
    folder.mkdir(parents=True, exist_ok=True)
    c = Cluster(folder)
    env = env_with_iolab()
    logs = folder / "cluster.log"
    out = open(logs, "ab")  # noqa: SIM115 - the processes write here until stop()
    c.scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(c.scheduler_file)],
        env=env, stdout=out, stderr=out, cwd=folder)
    _wait_for(lambda: c.scheduler_file.exists(), 60, "the scheduler's file", logs)
    for n in range(workers):
        c.workers.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
             str(c.scheduler_file), "--nthreads", "1", "--no-nanny", "--no-dashboard",
             "--name", f"w{n}", "--local-directory", str(folder / f"w{n}")],
            env=env, stdout=out, stderr=out, cwd=folder))
    _wait_for(lambda: logs.read_text(errors="replace").count("Registered to") >= workers, 90,
              f"{workers} workers registered", logs)
    return c


def _wait_for(ready, seconds: float, what: str, logs: Path) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} in {seconds:g} s: "
                                 f"{logs.read_text(errors='replace')[-2000:]}")
        time.sleep(0.1)


def stored_rows(where: Path) -> dict[str, list[dict]]:
    """Every table's rows, sorted, without the columns that differ from run to run."""
    import pyarrow.parquet as pq

    from iolab.triage import store

    out = {}
    for table in store.TABLES:
        rows = []
        for f in store.files(where, table):
            for r in pq.read_table(f).to_pylist():
                r.pop("batch", None)
                r.pop("read_time_s", None)
                rows.append(r)
        out[table] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return out


def report(where: Path) -> tuple[str, str]:
    """The store's report as JSON and as CSV, by the command's own entry point in this
    process (the report only reads the store; an iolab process a report paid its start-up,
    duckdb and the report's modules, for each of the many stores the tests compare)."""
    outs = []
    for fmt in ("--json", "--csv"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["triage", "--store", str(where), fmt])
        assert code == 0, err.getvalue()
        outs.append(out.getvalue())
    return outs[0], outs[1]


def triage(*args: str, env: dict[str, str] | None = None,
           timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``iolab triage ARGS``; one that has not ended by ``timeout`` fails the test with every
    one of its processes' Python stacks (SIGUSR1: iolab.triage.scale.stacks_on_sigusr1)."""
    argv = [sys.executable, "-m", "iolab", "triage", *args]
    with subprocess.Popen(argv, env=env_with_iolab(env), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for pid in [p.pid, *_descendants(p.pid)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGUSR1)
            time.sleep(2)
            for pid in [*_descendants(p.pid), p.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            out, err = p.communicate()
            pytest.fail(f"iolab triage {' '.join(args)} did not end in {timeout:g} s; its "
                        f"stacks:\n{err[-20000:]}")
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def process_parents() -> dict[int, int]:
    """Every process of this machine -> its parent's pid (from /proc)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            parent[int(d)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parent


def _descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (its pool's forkserver and workers, forked readers)."""
    parent = process_parents()
    found, todo = [], [pid]
    while todo:
        kids = [c for c, pp in parent.items() if pp == todo[-1]]
        todo.pop()
        found.extend(kids)
        todo.extend(kids)
    return found
