"""Where logs are read: this machine's process pool (``-j N``, the default) or a Dask cluster
(``--dask ADDRESS``, ``--dask-local N``, ``--dask-slurm``).

Whatever reads them, the results come back to the command's own process **in the order the
logs were found** and are written to the store there, a batch at a time: the store, its
incrementality and what a kill loses are the same for every reader, and so is the report,
byte for byte (the first of two copies of a log is the one stored, whoever read it first).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from iolab.errors import UsageError

# Imported where logs are read, not here: `iolab triage --help` builds these options and
# needs neither the process pool nor the log reader (~0.2 s of start-up).
if TYPE_CHECKING:
    import concurrent.futures as cf

    from iolab.triage.read import LogResult


class ReaderLost(Exception):
    """The readers went away mid-run (a Dask cluster lost, every retry of a task's worker
    killed): what was read is stored; a new run reads the rest."""

    done: Any = None  # the run's counts (ingest.Ingested) up to the loss


class Reader(Protocol):
    label: str  # said in the summary line: "on 4 processes", "on Dask at tcp://..."

    def results(self, paths: list[str], known_hashes: frozenset[str]) -> Iterator[LogResult]:
        """One result per path, in the order of ``paths``."""
        ...


# ---- the command-line block: every option that says where logs are read -------------------

def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where logs are read (one of; default: this machine's cores)")
    g.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="processes reading logs on this machine (default: the cores available)")
    g.add_argument("--dask", metavar="ADDRESS",
                   help="read on an existing Dask cluster: its scheduler's address "
                        "(tcp://host:8786) or scheduler file (JSON); the workers must see "
                        "the logs at the same paths")
    g.add_argument("--dask-local", type=int, metavar="N",
                   help="start a Dask cluster of N worker processes on this machine for the run")
    g.add_argument("--dask-slurm", action="store_true",
                   help="start Dask workers as Slurm jobs (dask-jobqueue's SLURMCluster) for "
                        "the run; --slurm-* options, else the dask config's jobqueue.slurm "
                        "keys, else iolab's defaults")
    g.add_argument("--slurm-jobs", type=int, metavar="N",
                   help=f"Slurm jobs of workers at most (default: {SLURM_DEFAULTS['jobs']})")
    g.add_argument("--slurm-partition", metavar="NAME",
                   help="partition (queue) of the worker jobs (default: the cluster's)")
    g.add_argument("--slurm-account", metavar="NAME", help="account charged for the worker jobs")
    g.add_argument("--slurm-cores", type=int, metavar="N",
                   help="cores per worker job, one single-threaded worker process a core "
                        f"(default: {SLURM_DEFAULTS['cores']})")
    g.add_argument("--slurm-memory", metavar="SIZE",
                   help=f"memory per worker job (default: {SLURM_DEFAULTS['memory']})")
    g.add_argument("--slurm-walltime", metavar="HH:MM:SS",
                   help=f"time limit of a worker job (default: {SLURM_DEFAULTS['walltime']})")
    g.add_argument("--slurm-log-dir", metavar="DIR",
                   help="the worker jobs' output files (default: "
                        "$XDG_CACHE_HOME/iolab/dask-slurm)")
    g.add_argument("--dask-config", metavar="FILE",
                   help="a Dask YAML config file read before the cluster starts (e.g. "
                        "jobqueue.slurm: interface, job-extra-directives, local-directory)")
    g.add_argument("--dask-wait", type=float, default=600.0, metavar="S",
                   help="seconds to wait for the first Dask worker (default: %(default)s)")
    g.add_argument("--log-time-limit", type=float, metavar="S",
                   help="seconds a log's reading may take before its reader is stopped and "
                        "the log is a row with the reason (a log libdarshan-util loops on, "
                        "a file system that stopped answering; default: 600 s plus 1 s per "
                        "MiB of the log)")


SLURM_DEFAULTS: dict[str, Any] = {"jobs": 4, "cores": 1, "memory": "2GiB",
                                  "walltime": "01:00:00"}
_SLURM_OPTIONS = ("slurm_jobs", "slurm_partition", "slurm_account", "slurm_cores",
                  "slurm_memory", "slurm_walltime", "slurm_log_dir")


def check_arguments(args: argparse.Namespace) -> None:
    """Bad combinations refused before anything is started or created."""
    chosen = [name for name, on in (("-j", args.jobs is not None), ("--dask", args.dask),
                                    ("--dask-local", args.dask_local is not None),
                                    ("--dask-slurm", args.dask_slurm)) if on]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)}: give one place to read logs")
    for opt, val in (("-j", args.jobs), ("--dask-local", args.dask_local),
                     ("--slurm-jobs", args.slurm_jobs), ("--slurm-cores", args.slurm_cores)):
        if val is not None and val < 1:
            raise UsageError(f"{opt} {val}: must be at least 1")
    if args.log_time_limit is not None and not args.log_time_limit > 0:
        raise UsageError(f"--log-time-limit {args.log_time_limit:g}: must be more than 0 "
                         "seconds")
    if args.dask_wait <= 0:
        raise UsageError(f"--dask-wait {args.dask_wait:g}: must be more than 0 seconds")
    given = [o for o in _SLURM_OPTIONS if getattr(args, o) is not None]
    if given and not args.dask_slurm:
        raise UsageError(f"--{given[0].replace('_', '-')} is an option of --dask-slurm; add "
                         "--dask-slurm or leave it out")
    if args.dask_config is not None and not (args.dask or args.dask_local or args.dask_slurm):
        raise UsageError("--dask-config is for a Dask run; add --dask, --dask-local or "
                         "--dask-slurm, or leave it out")
    if args.dask == "":
        raise UsageError("--dask: empty address; give the scheduler's tcp://host:port")


def uses_dask(args: argparse.Namespace) -> bool:
    return bool(args.dask or args.dask_local or args.dask_slurm)


@contextlib.contextmanager
def open_reader(args: argparse.Namespace) -> Iterator[Reader]:
    """The reader the options ask for, started (a Dask cluster connected, or started and
    stopped at the end); a cluster that cannot be reached is bad input (nothing created)."""
    if not uses_dask(args):
        yield PoolReader(args.jobs or default_jobs(), args.log_time_limit)
        return
    try:
        # deferred: Dask is optional and heavy (a second of start-up); only a Dask run needs it
        from iolab.triage import dask_reader
    except ImportError:
        raise UsageError("Dask is not installed: pip install 'dask[distributed]' "
                         "dask-jobqueue (or pip install -e . in iolab's checkout)") from None
    with dask_reader.open_dask(args) as reader:
        yield reader


# ---- this machine: a process pool ----------------------------------------------------------

_KNOWN: frozenset[str] = frozenset()


def stacks_on_sigusr1() -> None:
    """``kill -USR1 PID`` prints every thread's Python stack on stderr, the run goes on: for a
    run that seems stuck (the command and its pool's workers)."""
    import faulthandler
    import io
    import signal
    import sys

    # The process's own stderr, not sys.stderr: a caller that runs the command in its process
    # with stderr redirected to a string (contextlib.redirect_stderr) has no descriptor there,
    # and faulthandler then refused to register (the command stopped with a traceback).
    stream = sys.__stderr__
    if not hasattr(signal, "SIGUSR1") or stream is None:
        return
    try:
        faulthandler.register(signal.SIGUSR1, file=stream, all_threads=True)
    except (io.UnsupportedOperation, ValueError, OSError):
        pass  # no stderr to write stacks to (closed): the run goes on without them


def _init_worker(known_hashes: frozenset[str]) -> None:
    global _KNOWN  # one copy per worker, set once, instead of one per log sent
    _KNOWN = known_hashes
    stacks_on_sigusr1()


def _read_in_worker(path_text: str) -> LogResult:
    from iolab.triage.read import read_log  # deferred: see the imports

    # In the worker's own process, no fork a log (the fork cost ~60 ms a small log, most of
    # the reading): a log that crashes libdarshan-util kills this worker, not the command,
    # and the command reads what was in flight again, each log in its own fork.
    return read_log(path_text, _KNOWN, isolate=False)


class PoolReader:
    def __init__(self, jobs: int, limit_s: float | None = None) -> None:
        self.jobs = jobs
        self.limit_s = limit_s  # --log-time-limit; None: by each log's size (read.time_limit_s)
        self.label = f"on {jobs} process{'es' if jobs > 1 else ''}"
        self.recovered = 0  # pools broken by a worker's death (a crashing log) and replaced
        self.stalled = 0  # pools stopped because a log's result did not come in its time

    def results(self, paths: list[str], known_hashes: frozenset[str]) -> Iterator[LogResult]:
        from iolab.triage.read import read_log  # deferred: see the imports

        def read_alone(p: str) -> LogResult:  # in a fork, stopped at the log's time limit
            return read_log(p, known_hashes, given_limit_s=self.limit_s)

        if len(paths) <= 1:  # one log: no pool to start, the fork protects this process
            for p in paths:
                yield read_alone(p)
            return
        # A pool even of one (-j 1): reading in a worker, not in a fork a log, is what makes
        # reading cheap, and the command survives what kills the worker.
        done = 0
        while done < len(paths):
            in_flight: list[tuple[str, cf.Future[LogResult]]] = []
            before = done
            for res in self._pool_run(paths[done:], known_hashes, in_flight):
                done += 1
                yield res
            # A worker died (libdarshan-util crashed on a log): what came back is kept, the
            # other logs in flight are read again here, one fork each, so only the log that
            # crashes is unreadable; the rest go on in a new pool.
            for p, fut in in_flight:
                done += 1
                yield _result_or_none(fut) or read_alone(p)
            if done == before:  # a pool that reads nothing (its workers die at start)
                done += 1
                yield read_alone(paths[before])

    def _pool_run(self, paths: list[str], known_hashes: frozenset[str],
                  in_flight: list[tuple[str, cf.Future[LogResult]]]) -> Iterator[LogResult]:
        """Results in order until the end or until the pool breaks; then ``in_flight`` gets
        the logs sent and not handed back, in order, and the iteration ends."""
        import concurrent.futures as cf  # deferred: see the imports
        import multiprocessing
        from concurrent.futures.process import BrokenProcessPool
        # forkserver: the workers do not inherit the parent's threads (pyarrow's pools), which
        # a plain fork would copy in an unknown state.
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        with cf.ProcessPoolExecutor(max_workers=self.jobs, mp_context=ctx,
                                    initializer=_init_worker,
                                    initargs=(known_hashes,)) as pool:
            # A bounded window in flight, handed back in the order found (a 100,000-log run
            # does not queue every future; copies resolve the same way on every run).
            window = self.jobs * 4
            pending: collections.deque[tuple[str, cf.Future[LogResult]]] = collections.deque()
            todo = iter(paths)
            while True:
                with contextlib.suppress(BrokenProcessPool):  # broken: the result says so
                    while len(pending) < window and (p := next(todo, None)) is not None:
                        pending.append((p, pool.submit(_read_in_worker, p)))
                if not pending:
                    return
                p, fut = pending[0]
                try:
                    # The head's own limit: a worker that hangs (a log libdarshan-util loops
                    # on, a file system that stopped answering, a stopped process) never
                    # breaks the pool by itself; it is stopped here and its logs read again.
                    res = _result_in_time(fut, p, self.limit_s)
                except cf.TimeoutError:
                    self.stalled += 1
                    _kill_workers(pool)
                    in_flight.extend(pending)
                    return
                except BrokenProcessPool:
                    self.recovered += 1
                    in_flight.extend(pending)
                    return
                pending.popleft()
                yield res


def _result_in_time(fut: cf.Future[LogResult], path: str, given: float | None) -> LogResult:
    """The log's result, waited for up to its time limit (TimeoutError after). Its size (a
    stat, a metadata call on a centre's file system) is asked only when the result outlasts
    the base limit: never for almost every log."""
    import concurrent.futures as cf  # deferred: see the imports

    from iolab.triage.read import LIMIT_BASE_S, time_limit_s  # deferred: see the imports

    if given is not None:
        return fut.result(timeout=given)
    try:
        return fut.result(timeout=LIMIT_BASE_S)
    except cf.TimeoutError:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        return fut.result(timeout=time_limit_s(size) - LIMIT_BASE_S)


def _kill_workers(pool: cf.ProcessPoolExecutor) -> None:
    """SIGKILL every worker of ``pool`` (reaches a stopped or blocked one too): the pool then
    breaks as when a worker crashes, and its shutdown is not kept waiting by them."""
    kill = getattr(pool, "kill_workers", None)  # Python 3.14
    if kill is not None:
        kill()
        return
    # Before 3.14 the pool's workers are only in its private table (stable since 3.2); not
    # multiprocessing.active_children(), which would take any other child of this process.
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.kill()


def _result_or_none(fut: cf.Future[LogResult]) -> LogResult | None:
    """A result that came back before the pool broke."""
    if fut.done() and not fut.cancelled() and fut.exception() is None:
        return fut.result()
    return None


def default_jobs() -> int:
    """The pool's size by default: the cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)
