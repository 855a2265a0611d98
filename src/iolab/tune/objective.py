"""What a tune measures: an ``iolab bench`` workload, or any command.

A trial applies one configuration (knob -> value) the way a user would apply it, runs the
workload once and returns one number:

- :class:`BenchObjective` runs ``iolab bench`` with the user's workload, knobs set
  (:class:`~iolab.tune.workload.Workload`), and ``--json``: the run is stored in the
  results database like any bench run (rank counts and phases checked there), and the
  engine's read-back hints tell which ROMIO hints the library really honoured.
- :class:`CommandObjective` runs the user's own command (``mpirun -np 16 ./app``) with the
  hints in ``ROMIO_HINTS`` (a hints file) and ``MPICH_MPIIO_HINTS``, OMPIO parameters as
  ``OMPI_MCA_*``, striping with ``lfs setstripe`` on ``--output-dir``; the score is the wall
  time, or a number parsed from its output (``--metric REGEX``).
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from iolab import backends
from iolab.bench.subrun import run_bench
from iolab.errors import UsageError
from iolab.launch import allocation_nodes, allocation_tasks_per_node, sbatch_command
from iolab.runs.engine_doc import MeasuredRun, from_json
from iolab.settings.apply import hints_file, mpich_mpiio_hints
from iolab.settings.apply import lfs_setstripe as lfs_command
from iolab.tune.knobs import LAUNCH, Knob, all_knobs, knob
from iolab.tune.space import DEFAULT
from iolab.tune.workload import Workload

MIB = float(1 << 20)


@dataclass
class TrialOutcome:
    status: str  # "ok" | "failed" | "interrupted"
    value: float | None  # the score in the objective's unit (MiB/s, s, the metric)
    wall_time_s: float
    run_id: int | None = None
    error: str | None = None
    ignored: tuple[str, ...] = ()  # knobs the library did not honour (read back)
    implementation: str | None = None  # "romio" | "ompio" | None (unknown)
    settings: dict[str, str] = field(default_factory=dict)  # knob -> value in effect (read back)


class Objective(Protocol):
    kind: str
    unit: str
    maximize: bool

    def evaluate(self, params: Mapping[str, str], label: str) -> TrialOutcome: ...

    def to_json(self) -> dict[str, Any]: ...


def set_params(params: Mapping[str, str]) -> dict[Knob, str]:
    """The knobs a configuration actually sets (DEFAULT means: leave it alone)."""
    return {knob(n): v for n, v in params.items() if v != DEFAULT}


def hints_of(params: Mapping[str, str]) -> dict[str, str]:
    """The ROMIO hints a configuration sets (as a workload takes them)."""
    return dict(Workload().with_settings(params).hints)


def mca_env(params: Mapping[str, str]) -> dict[str, str]:
    """OMPIO's parameters a configuration sets, as the environment Open MPI reads."""
    return dict(Workload().with_settings(params).env)


def srun_env(params: Mapping[str, str],
             allocation: Mapping[str, str] | None = None) -> dict[str, str]:
    """Launch knobs as srun's input environment (SLURM_CPU_BIND, SLURM_NTASKS_PER_NODE,
    SLURM_CPUS_PER_TASK): the user's own srun line takes them without a change. Ranks per
    node also set the task count from the ``allocation``'s node count: inside salloc srun
    inherits SLURM_NTASKS, which wins over a per-node count ("can't honor
    --ntasks-per-node ... Ignoring"), so the trial would run with the allocation's layout."""
    env = {LAUNCH[k.name][1]: v for k, v in set_params(params).items() if k.kind == "launch"}
    per_node = env.get(LAUNCH["slurm.ranks_per_node"][1])
    nodes = allocation_nodes(allocation or {})
    if per_node and per_node.isdigit() and nodes:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(nodes * int(per_node))
    return env


def lfs_setstripe(params: Mapping[str, str], directory: str | os.PathLike[str]) -> list[str] | None:
    """``lfs setstripe`` for the lfs knobs of a configuration, or None when none is set."""
    return _lfs_words(Workload().with_settings(params), directory)


def _lfs_words(workload: Workload, directory: str | os.PathLike[str]) -> list[str] | None:
    lfs = workload.lfs
    if not lfs:
        return None
    # one lfs writer with diagnose's fix files, bench's striping and the winner's lfs.sh
    return lfs_command(str(directory), lfs.get("lfs.stripe_count"), lfs.get("lfs.stripe_size"))


def _apply_lfs(cmd: list[str] | None) -> str | None:
    if cmd is None:
        return None
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"{shlex.join(cmd)} failed: {(done.stderr or done.stdout).strip()[:200]}"
    return None


def effective_settings(run: MeasuredRun) -> dict[str, str]:
    """What a run actually used, per knob name, from the engine's document: its own options
    from "config", ROMIO hints from the read-back "effective" hints (when verifiable)."""
    config = run.config
    effective = run.hints.effective if run.hints.verifiable else {}
    out: dict[str, str] = {}
    for k in all_knobs():
        raw: Any = None
        if k.kind == "engine":
            raw = config.get(k.config_key)
        elif k.kind == "romio":
            raw = effective.get(k.library_key)
        if raw is None:
            continue
        text = ("true" if raw else "false") if isinstance(raw, bool) else str(raw)
        try:
            out[k.name] = k.normalise(text)
        except UsageError:
            continue  # a value outside the knob's domain (e.g. ROMIO's own spelling)
    per_host = set(run.environment.ranks_per_host.values())
    if len(per_host) == 1:  # as the ranks were placed, whoever placed them
        out["slurm.ranks_per_node"] = str(per_host.pop())
    return out


# srun options that set a step's layout themselves: a line with any of them (anywhere, to
# stay on the safe side of the program's own arguments) runs a layout iolab cannot infer.
_SRUN_LAYOUT = ("-n", "--ntasks", "-N", "--nodes", "--ntasks-per-node", "-m", "--distribution",
                "-w", "--nodelist", "--arbitrary", "--multi-prog")


def srun_settings(argv: Sequence[str], env: Mapping[str, str]) -> dict[str, str]:
    """The ranks per node a user's ``srun`` line runs with, when the line sets no layout of
    its own: srun then takes the trial's SLURM_NTASKS_PER_NODE (srun_env) or, for the
    baseline, the allocation's tasks per node. Empty when it cannot be known (a script or
    another launcher, an uneven allocation, the line's own -n/-N/...)."""
    if not argv or Path(argv[0]).name != "srun":
        return {}
    if any(a.split("=", 1)[0] in _SRUN_LAYOUT or (a[:2] in ("-n", "-N", "-m", "-w")
                                                  and len(a) > 2) for a in argv[1:]):
        return {}
    trial = env.get(LAUNCH["slurm.ranks_per_node"][1], "")
    per_node = int(trial) if trial.isdigit() else allocation_tasks_per_node(env)
    return {"slurm.ranks_per_node": str(per_node)} if per_node else {}


@dataclass
class BenchObjective:
    """An ``iolab bench`` workload (parsed once: :mod:`iolab.tune.workload`) and the phase
    whose median bandwidth is the score; a trial is the workload with its knobs set."""

    workload: Workload
    target: str = "write"  # "write" | "read"
    db: str | None = None
    kind: str = "bench"
    unit: str = "MiB/s"
    maximize: bool = True
    env: dict[str, str] = field(default_factory=dict)
    # --from-log: the log, how the proxy was built, and the diagnosis's predictions
    from_log: dict[str, Any] | None = None
    # --sbatch: each trial is a batch job (sbatch --wait) with these extra sbatch options
    sbatch: list[str] | None = None
    time_limit_s: float | None = None  # a local trial still running then is stopped, failed

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "bench_args": self.workload.argv(), "target": self.target,
                "from_log": self.from_log, "sbatch": self.sbatch,
                "time_limit_s": self.time_limit_s}

    def infeasible(self, params: Mapping[str, str]) -> str | None:
        """Why a configuration must not run, or None: romio_no_indep_rw=true lets only the
        aggregators open the file, so independent calls from the other ranks cannot work
        (ROMIO errors out, or under MPICH the run hangs)."""
        if hints_of(params).get("romio_no_indep_rw") == "true" and not \
                self.workload.with_settings(params).collective:
            return "romio_no_indep_rw=true needs collective transfers"
        return None

    def inert(self, params: Mapping[str, str]) -> tuple[str, ...]:
        """The knobs of a configuration that cannot act on its runs: the ones read only inside
        collective MPI-IO calls (collective buffering, OMPIO's aggregation) when its MPI-IO
        calls are all independent (--api mpiio without --collective). HDF5 and PnetCDF are
        left alone: their metadata I/O can be collective when the data's is not."""
        trial = self.workload.with_settings(params)
        if trial.api != "mpiio" or trial.collective:
            return ()
        return tuple(k.name for k in set_params(params) if k.collective_only)

    def _batch(self, cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        """``iolab bench`` as a batch job that Slurm schedules (--sbatch); its output file is
        read back, so the results database and the output must be on a file system the
        login node sees, as for any batch job."""
        assert self.sbatch is not None
        with tempfile.TemporaryDirectory(prefix="iolab-tune-job-", dir=".") as d:
            script, out, err = Path(d) / "trial.sh", Path(d) / "out.json", Path(d) / "err"
            script.write_text("#!/bin/bash\n" + shlex.join(cmd) + "\n")
            argv = sbatch_command(str(script), wait=True, output=str(out),
                                  extra=["-e", str(err), "-J", "iolab-tune", *self.sbatch])
            done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False,
                                  stdin=subprocess.DEVNULL)
            stdout = out.read_text() if out.exists() else ""
            stderr = (err.read_text() if err.exists() else "") + done.stderr
            if done.returncode != 0 and not stdout and "sbatch" in done.stderr:
                raise UsageError(f"sbatch failed: {done.stderr.strip()[:300]}")
        return subprocess.CompletedProcess(argv, done.returncode, stdout, stderr)

    def evaluate(self, params: Mapping[str, str], label: str) -> TrialOutcome:
        trial = self.workload.with_settings(params)
        err = _apply_lfs(_lfs_words(trial, trial.test_dir or Path(".")))
        if err:
            return TrialOutcome("failed", None, 0.0, error=err)
        run = run_bench(trial.argv(), label, self.db, {**self.env, **trial.env},
                        self._batch if self.sbatch is not None else None,
                        time_limit_s=self.time_limit_s)
        if run.status == "refused":
            if not set_params(params):  # the workload itself is bad: stop the tune
                raise UsageError(run.error or "iolab bench refused the workload")
            return TrialOutcome("failed", None, run.wall_time_s,
                                error=f"refused for this workload: {run.error}")
        measured = from_json(run.doc)
        does_mpiio = measured.api in backends.OVER_MPIIO
        impl = measured.environment.mpiio_implementation if does_mpiio else None
        ignored = measured.hints.not_applied
        if run.status != "ok":
            return TrialOutcome(run.status, None, run.wall_time_s, run.run_id,
                                run.error or "the run failed", ignored, impl)
        median = measured.op_summary(self.target).bw_bytes_per_s.median
        if median is None:
            return TrialOutcome("failed", None, run.wall_time_s, run.run_id,
                                f"the workload has no {self.target} phase", ignored, impl)
        return TrialOutcome("ok", float(median) / MIB, run.wall_time_s, run.run_id, None,
                            ignored, impl, effective_settings(measured))


# What MPI launchers print around a failed job, not the program's words: Open MPI's boxes
# between lines of dashes, MPICH's (hydra's) "BAD TERMINATION" box of '=' lines and the
# lines after it, the launchers' one-line notices.
_RULE = re.compile(r"^\s*(-{10,}|={10,})\s*$")
_LAUNCHER_LINE = re.compile(
    r"^\s*(=\s|YOUR APPLICATION TERMINATED WITH THE EXIT STRING|This typically refers to a "
    r"problem with your application|Please see the FAQ page|Primary job\s+terminated|"
    r"mpi(run|exec)\S* (detected that one or more processes exited|noticed that)|"
    r"\[mpiexec@|\[proxy:|srun: error: |slurmstepd: error: \*+ STEP|"
    # the MPI runtime's report of a crashed rank: Open MPI's "[host:pid] *** Process
    # received signal ***" block, UCX's "[host:pid:...] Caught signal" and backtrace
    r"\[[^\]\s]+:\d+[^\]]*\]\s)", re.I)
# a backtrace's frames say where, never why ("libc.so.6(gsignal+0x12)"); two ranks' frames
# interleave through the launcher's forwarding, so a frame may lose its "[host:pid] [ 1]"
# prefix to another line ("/path/fails_to_open(+0x1289)[0x55a9...]": not an error)
_FRAME = re.compile(r"^\s*(\[[^\]]*\]\s*)?(\[ ?\d+\]\s*|\d+\s+)\S*\(\S*\+0x|^\s*=+ backtrace|"
                    r"\(\S*\+0x[0-9a-fA-F]+\)\s*\[0x[0-9a-fA-F]+\]\s*$")
_NOT_WHY = ("job has been aborted", "End of error message")
_SAYS_WHY = re.compile(r"error|cannot|can't|could not|fail|abort|denied|no such|not found|"
                       r"invalid|fatal|killed|signal|segmentation|exception", re.I)


METRIC_MISSED = "matched nothing in the output"


def closest_lines(pattern: str, output: str, n: int = 1) -> list[str]:
    """The output lines most like what ``pattern`` looks for: a program that printed
    "bw: 1.5 GB/s" to a regex for "bw: ([0-9.]+) MB/s" is told so, not only that nothing
    matched. Lines holding the pattern's literal text before its group come first; among
    the rest, the most similar text (difflib)."""
    lines = [x.strip() for x in output.splitlines() if x.strip()]
    if not lines:
        return []
    lead = re.split(r"[\\(\[.*+?{^$|]", pattern, maxsplit=1)[0].strip()
    literal = re.sub(r"[\\()\[\].*+?{}^$|]", " ", pattern)

    def likeness(line: str) -> tuple[bool, float]:
        return (bool(lead) and lead in line,
                difflib.SequenceMatcher(None, literal, line).ratio())

    return sorted(lines, key=likeness, reverse=True)[:n]


def error_line(output: str) -> str:
    """The line of a failed command's output that says why: the program's own last line
    that reads like an error, outside the launcher's banners; else the banner's line that
    does (a rank killed by a signal); else the program's last line."""
    own: list[str] = []
    banner: list[str] = []
    in_box = False
    for line in output.splitlines():
        if not line.strip() or _FRAME.search(line):
            continue
        if _RULE.match(line):
            in_box = not in_box if line.strip()[0] == "-" else in_box
            continue
        (banner if in_box or _LAUNCHER_LINE.match(line) else own).append(line.strip())
    for lines in ([x for x in own if _SAYS_WHY.search(x)],
                  [x for x in banner if _SAYS_WHY.search(x)
                   and not any(n in x for n in _NOT_WHY)],
                  own):
        if lines:
            return lines[-1]
    return "no output"


@dataclass
class CommandObjective:
    """Any command; scored by wall time (lower is better) or by ``metric`` (a regex whose
    first group is a number, from stdout and stderr; the last match counts)."""

    argv: list[str]
    metric: str | None = None
    maximize: bool = False
    time_limit_s: float | None = None
    output_dir: str | None = None
    kind: str = "command"

    def __post_init__(self) -> None:
        if not self.argv:
            raise UsageError("no command given after '--'")
        if shutil.which(self.argv[0]) is None:
            raise UsageError(f"command not found: {self.argv[0]!r} (give a path or put it on "
                             "PATH)")
        if self.metric is not None:
            try:
                rx = re.compile(self.metric)
            except re.error as exc:
                raise UsageError(f"--metric {self.metric!r}: not a valid regular expression "
                                 f"({exc})") from None
            if rx.groups < 1:
                raise UsageError(f"--metric {self.metric!r}: needs one group around the "
                                 "number, e.g. 'bandwidth: ([0-9.]+)'")
        if self.time_limit_s is not None and self.time_limit_s < 1:
            raise UsageError(f"--time-limit {self.time_limit_s}: at least 1 second")

    @property
    def unit(self) -> str:
        return "metric" if self.metric else "s"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "argv": self.argv, "metric": self.metric,
                "maximize": self.maximize, "time_limit_s": self.time_limit_s,
                "output_dir": self.output_dir}

    def environment(self, params: Mapping[str, str], label: str,
                    hints_dir: Path) -> dict[str, str]:
        """What the command runs with: hints file (written in hints_dir), Cray's variable,
        OMPIO's parameters."""
        env = dict(os.environ)
        env.update(mca_env(params))
        env.update(srun_env(params, os.environ))
        hints = hints_of(params)
        if hints:
            path = hints_dir / f"{label.replace(':', '-')}.hints"
            path.write_text(hints_file(hints))
            env["ROMIO_HINTS"] = str(path)
            # Cray MPICH splits the variable on ':' (cb_config_list *:N becomes cb_nodes
            # over the allocation's nodes, as in diagnose's fix files)
            ntasks = env.get("SLURM_NTASKS", "")
            cray, _ = mpich_mpiio_hints(hints, nodes=allocation_nodes(env),
                                        nprocs=int(ntasks) if ntasks.isdigit() else None)
            if cray:
                env["MPICH_MPIIO_HINTS"] = cray
        return env

    def evaluate(self, params: Mapping[str, str], label: str) -> TrialOutcome:
        # the hints file lives as long as its trial: the folder goes on every way out of
        # it (a result, a failure, Ctrl-C), so no iolab-tune-* folder outlives the tune
        with tempfile.TemporaryDirectory(prefix="iolab-tune-") as hints_dir:
            return self._evaluate(params, self.environment(params, label, Path(hints_dir)))

    def _evaluate(self, params: Mapping[str, str], env: dict[str, str]) -> TrialOutcome:
        if self.output_dir:
            err = _apply_lfs(lfs_setstripe(params, Path(self.output_dir)))
            if err:
                return TrialOutcome("failed", None, 0.0, error=err)
        start = time.monotonic()
        proc = subprocess.Popen(self.argv, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=self.time_limit_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return TrialOutcome("failed", None, time.monotonic() - start,
                                error=f"time limit of {self.time_limit_s:g} s reached")
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        wall = time.monotonic() - start
        if proc.returncode != 0:
            return TrialOutcome("failed", None, wall,
                                error=f"exit code {proc.returncode}: {error_line(out)[:200]}")
        settings = srun_settings(self.argv, env)
        if self.metric is None:
            return TrialOutcome("ok", wall, wall, settings=settings)
        found = re.findall(self.metric, out)
        if not found:
            near = closest_lines(self.metric, out)
            return TrialOutcome("failed", None, wall,
                                error=f"--metric {shlex.quote(self.metric)} {METRIC_MISSED}"
                                + (f"; closest line: {near[0]!r}" if near else ""))
        last_match = found[-1][0] if isinstance(found[-1], tuple) else found[-1]
        try:
            return TrialOutcome("ok", float(last_match), wall, settings=settings)
        except ValueError:
            return TrialOutcome("failed", None, wall,
                                error=f"--metric matched {last_match!r}, not a number")
