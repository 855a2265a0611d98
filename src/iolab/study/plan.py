"""The CUG'17 study as a list of sweeps, sized by --quick / default / --full, and the
experiments this machine cannot run, with the reason (decided before anything runs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from iolab.launch import in_slurm_allocation
from iolab.sweep.grid import bench_options


@dataclass(frozen=True)
class Experiment:
    name: str
    what: str  # one line for people
    grid: list[tuple[str, list[str]]]
    bench_args: list[str]
    reps: int


@dataclass(frozen=True)
class Machine:
    """What the plan depends on (probed by :func:`probe`, set by tests)."""

    cores: int
    direct_io: bool  # O_DIRECT opens in the study folder
    direct_why: str = ""
    hdf5: bool = True  # the engine has the HDF5 backend
    slurm: bool = False  # inside an allocation (srun available)
    cpu_freqs: list[str] = field(default_factory=list)  # --cpu-freq values asked for
    numa_nodes: int = 1
    nodes: int = 1  # nodes of the Slurm allocation (1 outside one)


_PARAMS = {  # size -> (rank counts' upper bound, block per rank, reps)
    "quick": (2, "4m", 2),
    "default": (0, "64m", 3),
    "full": (0, "1g", 5),
}


def rank_counts(cores: int, upper: int) -> list[str]:
    """1, 2, 4, ... up to the cores of this node (``upper`` caps it when > 0)."""
    top = max(1, min(cores, upper) if upper else cores)
    out, n = [], 1
    while n < top:
        out.append(str(n))
        n *= 2
    out.append(str(top))
    return out


def plan(size: str, m: Machine) -> tuple[list[Experiment], list[tuple[str, str]]]:
    """The experiments to run and the (experiment, why skipped) pairs."""
    upper, block, reps = _PARAMS[size]
    ranks = rank_counts(m.cores, upper)
    modes = ["buffered", "direct"] if m.direct_io else ["buffered"]
    common = ["-a", "posix", "-t", "1m", "-b", block]
    exps = [Experiment("single-stream", "one writer, dd-like: buffered / O_DSYNC / O_DIRECT",
                       [("posix.mode", ["buffered", "sync", *(["direct"] if m.direct_io
                                                              else [])])],
                       [*common, "--np", "1", "-w"], reps),
            Experiment("fpp", "file per process, 1..N ranks: write, then read once (cold)",
                       [("np", ranks), ("posix.mode", modes)],
                       [*common, "--layout", "fpp", "--evict"], reps),
            Experiment("fpp-read3", "file per process: read three times, cache kept",
                       [("np", ranks)], [*common, "--layout", "fpp", "--read-times", "3"],
                       reps)]
    skipped: list[tuple[str, str]] = []
    if not m.direct_io:
        skipped.append(("direct I/O", m.direct_why or "O_DIRECT is refused here"))
    if m.hdf5:
        n = ranks[-1] if int(ranks[-1]) >= 2 else "2"
        exps.append(Experiment("shared-hdf5", "one shared HDF5 file: independent vs collective",
                               [("collective", ["off", "on"])],
                               ["-a", "hdf5", "-t", "1m", "-b", block, "--layout",
                                "segmented", "--np", n], reps))
    else:
        skipped.append(("shared-hdf5", "the engine was built without HDF5"))
    if m.slurm and m.cpu_freqs:
        exps.append(Experiment("cpu-freq", "single writer against CPU frequency (srun "
                               "--cpu-freq), linear fit per mode",
                               [("launcher-args", [f"--cpu-freq={f}" for f in m.cpu_freqs]),
                                ("posix.mode", modes)],
                               [*common, "--np", "1", "-w", "--launcher", "srun"], reps))
    elif m.cpu_freqs:
        skipped.append(("cpu-freq", "not inside a Slurm allocation: --cpu-freq needs srun"))
    else:
        skipped.append(("cpu-freq", "no --cpu-freq values given (needs Slurm)"))
    skipped.append(("MPI between nodes", "the allocation has one node" if m.nodes <= 1 else
                    "several nodes, but the inter-node ping-pong is not implemented yet"))
    if m.numa_nodes > 1:
        skipped.append(("memory binding", "numactl shows several memory nodes but the "
                        "binding comparison is not implemented yet"))
    else:
        skipped.append(("memory binding", "numactl shows one memory node"))
    return exps, skipped


def probe(folder: str, cpu_freqs: list[str]) -> Machine:
    """This machine: cores, O_DIRECT in ``folder``, Slurm, NUMA nodes, HDF5 backend."""
    direct, why = True, ""
    try:
        fd, name = tempfile.mkstemp(prefix=".iolab-study-", dir=folder)
        os.close(fd)
        try:
            os.close(os.open(name, os.O_RDWR | getattr(os, "O_DIRECT", 0)))
        except OSError as exc:
            direct, why = False, f"O_DIRECT refused in {folder} ({exc.strerror})"
        finally:
            os.unlink(name)
    except OSError as exc:
        direct, why = False, f"cannot create files in {folder} ({exc.strerror})"
    numa = 1
    if shutil.which("numactl"):
        out = subprocess.run(["numactl", "--hardware"], capture_output=True, text=True,
                             check=False).stdout
        for line in out.splitlines():
            if line.startswith("available:"):
                numa = int(line.split()[1])

    hdf5 = "hdf5.chunk" in bench_options()
    nodes = os.environ.get("SLURM_JOB_NUM_NODES", "1")
    return Machine(len(os.sched_getaffinity(0)), direct, why, hdf5, in_slurm_allocation(),
                   cpu_freqs, numa, int(nodes) if nodes.isdigit() else 1)
