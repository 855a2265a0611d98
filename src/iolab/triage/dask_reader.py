"""Logs read as Dask tasks (dask.distributed): on an existing cluster, a LocalCluster of worker
processes, or workers started as Slurm jobs by dask-jobqueue's SLURMCluster.

Only the reading is distributed. A task reads a few logs by path (the workers see the same
file systems) and returns their rows; the command's own process takes them back in the order
the logs were found and writes the store as the process pool's run does. A worker killed
mid-run costs only its tasks, which the scheduler runs again on another worker (Dask's own
retry: ``distributed.scheduler.allowed-failures``); if the cluster itself is lost, what was
read is in the store and a new run reads the rest.

The hashes already stored go to each worker once, by a worker plugin the scheduler also
gives to workers that join later (Slurm jobs that start late), as the pool's initializer
does; they only spare a worker reading a copy of a stored log: the command's own process
checks every result against the store again.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin

from iolab.errors import UsageError
from iolab.triage.read import LogResult, read_log
from iolab.triage.scale import SLURM_DEFAULTS, ReaderLost

TASK_LOGS = 8  # logs per task: ~1 ms of scheduling for some 0.1-1 s of reading
_PLUGIN_PREFIX = "iolab-triage-known-"


class KnownHashes(WorkerPlugin):
    """A worker plugin holding the content hashes already in the store (one copy a worker)."""

    def __init__(self, hashes: frozenset[str]) -> None:
        self.hashes = hashes


def read_batch(paths: list[str], plugin: str, limit_s: float | None = None) -> list[LogResult]:
    """A task: read a few logs on a worker, each in a forked child as diagnose reads it (a
    log that crashes libdarshan-util is its own row). Not in the worker's process as the
    pool's workers read: with a crashing log, a worker killed in a task made the local
    cluster hang now and then (1 run in 20, 2 in 3 in a shared temp folder), never
    explained; the client still reads a task's logs again, one fork each, if Dask gives the
    task up (:func:`_task_results`)."""
    from distributed import get_worker

    try:
        held = get_worker().plugins[plugin]
        known = held.hashes if isinstance(held, KnownHashes) else frozenset()
    except (ValueError, KeyError):
        known = frozenset()  # only a saving: the client checks against the store again
    # each fork stopped at the log's time limit: a hung log is its row, the task goes on
    return [read_log(p, known, given_limit_s=limit_s) for p in paths]


class DaskReader:
    def __init__(self, client: Any, label: str, limit_s: float | None = None) -> None:
        self.client = client
        self.label = label
        self.limit_s = limit_s  # --log-time-limit

    def _window(self) -> int:
        """Tasks in flight: enough to keep every worker thread busy, bounded (the results
        of a 100,000-log run are never all held at once)."""
        threads = sum(self.client.nthreads().values())
        return max(2, 2 * threads)

    def results(self, paths: list[str], known_hashes: frozenset[str]) -> Iterator[LogResult]:
        if not paths:
            return
        plugin = _PLUGIN_PREFIX + uuid.uuid4().hex  # two runs on one cluster never clash
        try:
            self.client.register_plugin(KnownHashes(known_hashes), name=plugin)
            pending: collections.deque[tuple[list[str], Any]] = collections.deque()
            chunks = (paths[i:i + TASK_LOGS] for i in range(0, len(paths), TASK_LOGS))
            for chunk in chunks:
                # pure=False: a task re-read after a file changed is never taken from memory
                pending.append((chunk, self.client.submit(read_batch, chunk, plugin,
                                                          self.limit_s, pure=False)))
                if len(pending) >= self._window():
                    yield from _task_results(*pending.popleft(), known_hashes, self.limit_s)
            while pending:
                yield from _task_results(*pending.popleft(), known_hashes, self.limit_s)
        except ReaderLost:
            raise
        except Exception as exc:  # noqa: BLE001 - the cluster's failures, in one line
            raise ReaderLost(f"{self.label}: {one_line(exc)}") from exc
        finally:
            if self.client.status == "running":  # a lost scheduler is not waited for
                with contextlib.suppress(Exception):
                    self.client.unregister_worker_plugin(plugin)


def _task_results(chunk: list[str], future: Any, known_hashes: frozenset[str],
                  limit_s: float | None) -> list[LogResult]:
    """A task's rows; if its workers kept dying (a log that crashes libdarshan-util, which
    Dask tries again on other workers up to ``distributed.scheduler.allowed-failures``), its
    logs read again here, one fork each: only the log that crashes is unreadable."""
    from distributed import KilledWorker

    try:
        return list(future.result())
    except KilledWorker:
        # In the command's process, which found these paths: each log in a forked child
        # (iolab.sources.darshan), so a crash is that log's row, never this process's end.
        return [read_log(p, known_hashes, given_limit_s=limit_s) for p in chunk]


def _load_config(path: str | None) -> None:
    if path is None:
        return
    import dask.config
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise UsageError(f"--dask-config {path}: cannot read it ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"--dask-config {path}: not YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise UsageError(f"--dask-config {path}: not a Dask config (a YAML mapping such as "
                         "'jobqueue: {slurm: {queue: debug}}')")
    dask.config.update(dask.config.config, data, priority="new")


def _slurm_cluster(args: argparse.Namespace) -> Any:
    """dask-jobqueue's SLURMCluster: an option given wins, else the dask config's
    ``jobqueue.slurm`` key, else iolab's default."""
    import dask.config
    from dask_jobqueue import SLURMCluster

    def pick(option: Any, key: str, default: Any) -> dict[str, Any]:
        if option is not None:
            return {key.replace("-", "_"): option}
        if dask.config.get(f"jobqueue.slurm.{key}", None) is None and default is not None:
            return {key.replace("-", "_"): default}
        return {}

    kw: dict[str, Any] = {}
    kw.update(pick(args.slurm_cores, "cores", SLURM_DEFAULTS["cores"]))
    kw.update(pick(args.slurm_memory, "memory", SLURM_DEFAULTS["memory"]))
    kw.update(pick(args.slurm_walltime, "walltime", SLURM_DEFAULTS["walltime"]))
    kw.update(pick(args.slurm_partition, "queue", None))
    kw.update(pick(args.slurm_account, "account", None))
    # Python releases the GIL little while parsing: one single-threaded worker process a core.
    kw.update(pick(kw.get("cores", args.slurm_cores), "processes", None))
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    logs = pick(args.slurm_log_dir, "log-directory", str(Path(cache) / "iolab" / "dask-slurm"))
    if logs:  # the jobs' output files there, never slurm-*.out in the folder run from
        # (dask-jobqueue makes the folder once the settings parse: bad input makes nothing)
        logs["log_directory"] = str(Path(logs["log_directory"]).expanduser())
    kw.update(logs)
    try:
        cluster = SLURMCluster(**kw)
    except ValueError as exc:  # e.g. a memory size it cannot parse
        raise UsageError(f"--dask-slurm: {exc}") from None
    jobs = args.slurm_jobs or SLURM_DEFAULTS["jobs"]
    cluster.scale(jobs=jobs)
    return cluster


def _quiet_dask_logs(stack: contextlib.ExitStack) -> None:
    """Dask's own log lines (connection tracebacks when a cluster goes) kept off stderr in
    this process: what happened is said in iolab's one line."""
    import logging

    prefixes = ("distributed", "dask_jobqueue", "tornado")
    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in prefixes]
    for name in sorted({*prefixes, *names}):  # dask's config sets some children's own levels
        log = logging.getLogger(name)
        stack.callback(log.setLevel, log.level)
        log.setLevel(logging.CRITICAL + 1)


CONNECT_S = 10.0  # the first connection to an existing scheduler


@contextlib.contextmanager
def open_dask(args: argparse.Namespace) -> Iterator[DaskReader]:
    """Connect to or start the cluster the options name, wait for a first worker, and stop
    what was started at the end (an existing cluster is left as it was)."""
    from distributed import Client, LocalCluster

    _load_config(args.dask_config)
    with contextlib.ExitStack() as stack:
        _quiet_dask_logs(stack)
        if args.dask:
            label = f"on Dask at {args.dask}"
            target: Any = args.dask
            if os.path.isfile(args.dask):  # a scheduler file
                target = None
            # A running scheduler answers in milliseconds: a wrong address is said within
            # CONNECT_S (or --dask-wait if shorter), not after the config's connect timeout
            # (30 s), which stays how long a lost scheduler is waited for mid-run.
            first = min(args.dask_wait, CONNECT_S)
            try:
                client = (Client(scheduler_file=args.dask, timeout=first) if target is None
                          else Client(target, timeout=first))
            except (OSError, TimeoutError, ValueError) as exc:
                raise UsageError(f"--dask {args.dask}: no Dask scheduler answers there "
                                 f"({exc}); start one (dask scheduler) or give its "
                                 "address") from None
        else:
            if args.dask_local:
                cluster = LocalCluster(n_workers=args.dask_local, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
                label = f"on a local Dask cluster of {args.dask_local} processes"
            else:
                cluster = _slurm_cluster(args)
                label = "on Dask workers in Slurm jobs"
            stack.callback(cluster.close)
            client = Client(cluster)
        stack.callback(client.close, timeout=10)
        try:
            client.wait_for_workers(1, timeout=args.dask_wait)
        except TimeoutError:
            raise UsageError(f"no Dask worker joined {label.removeprefix('on ')} within "
                             f"{args.dask_wait:g} s (--dask-wait); "
                             + ("are the Slurm jobs pending? squeue -u $USER" if args.dask_slurm
                                else "are its workers running?")) from None
        yield DaskReader(client, label, args.log_time_limit)


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line: distributed's FutureCancelledError, for one, says
    "... cancelled for reason: scheduler-connection-lost.\nClient lost the connection ...",
    which split the command's one line in two (tests/triage/test_dask.py, now and then)."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())
