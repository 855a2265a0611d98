"""The measured part of the one job model: job facts, a file table and per-module columns.

:class:`Columns` is what the derivations (iolab.model.metrics, .layers, .trace, .mpilib) read;
:class:`~iolab.model.job.Model` is Columns with what they derived, built in one step by
:func:`~iolab.model.job.build_model`. Kept apart from job.py so that the derivations type
against Columns without importing the module that imports them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iolab.model.files import APP
from iolab.model.tables import ModuleData
from iolab.model.trace import Trace
from iolab.model.workflow import LogSpan

# Modules whose record names are file paths (H5D / PNETCDF_VAR name datasets and variables).
FILE_MODULES = ("POSIX", "STDIO", "MPI-IO", "H5F", "PNETCDF_FILE")
# Modules whose records are datasets / variables named "<file path>:<name>" (Darshan 3.2+);
# their file_index is the file's, or -1 when the name does not start with a known file.
DATASET_MODULES = ("H5D", "PNETCDF_VAR")


@dataclass(frozen=True)
class Job:
    sources: list[str]
    source_kind: str
    exe: str
    nprocs: int
    run_time_s: float
    start_time: float
    end_time: float
    nodes: int | None
    node_memory_bytes: int | None
    cores_per_node: int | None
    format_versions: list[str]
    metadata: dict[str, str]
    mounts: list[tuple[str, str]]
    partial_modules: list[str]
    notes: list[str]
    n_logs: int = 1
    # MPI-IO hints in effect per file, when the source knows them (iolab profiles record
    # MPI_File_get_info at open). Never Darshan's 'h' field: those are the hints Darshan
    # used to write its own log.
    hints: dict[str, dict[str, str]] = field(default_factory=dict)
    # Host of each rank (ranks renumbered like the records), when a source knows it: iolab
    # profiles record it per process, Darshan's DXT records per rank.
    rank_hosts: dict[int, str] = field(default_factory=dict)
    # The log's file names are hashes or obfuscated paths (darshan-convert --obfuscate,
    # anonymised archives): rules that read names (directories, suffixes) cannot judge.
    names_anonymised: bool = False
    # The MPI-IO implementation the log shows (iolab.model.mpilib): "ROMIO" (MPICH, Cray
    # MPICH, or Open MPI with its hints read back), "OMPIO" (Open MPI's default), "" unknown.
    mpiio_implementation: str = ""
    # Each log of the job, in the order given (several logs of one workflow).
    logs: list[LogSpan] = field(default_factory=list)
    # I/O interfaces the log recorded that no loader reads (Darshan's DFS, DAOS, MDHIM):
    # "no problem found" says nothing about the I/O that went through them.
    unread_io_modules: list[str] = field(default_factory=list)
    # Why each partial module is partial (RawJob.partial_why), for the words of a report.
    partial_why: dict[str, str] = field(default_factory=dict)
    # CPUs the job could use per host (RawJob.host_cpus; --cores-per-node sets every host).
    host_cpus: dict[str, int] = field(default_factory=dict)

    def oversubscribed(self) -> list[tuple[str, int, int]]:
        """(host, ranks, CPUs) of each node that ran more ranks than it had CPUs, when both
        are known (ranks per host from rank_hosts, CPUs from host_cpus or --cores-per-node);
        empty when not, or when either is unknown (a Darshan log: never guessed)."""
        out = []
        for host, ranks in sorted(Counter(self.rank_hosts.values()).items()):
            cpus = self.cores_per_node or self.host_cpus.get(host)
            if cpus and ranks > cpus:
                out.append((host, ranks, cpus))
        return out

    def cpus_known(self) -> bool:
        """Whether every rank's host and its CPU count are known."""
        hosts = set(self.rank_hosts.values())
        return bool(hosts) and len(self.rank_hosts) >= self.nprocs and (
            bool(self.cores_per_node) or hosts <= set(self.host_cpus))


@dataclass(frozen=True)
class FileTable:
    """Every file (record name) seen by a file-level module, sorted by record id."""

    ids: np.ndarray  # uint64, sorted
    paths: list[str]
    category: np.ndarray  # int8, see iolab.model.files
    nranks: np.ndarray  # ranks that opened the file (a reduced record counts all its ranks)
    ranks_first: np.ndarray  # one rank that opened it (-1 when reduced)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def is_app(self) -> np.ndarray:
        return self.category == APP


@dataclass(frozen=True)
class Columns:
    """A job's facts and columns, before anything is derived from them."""


    job: Job
    files: FileTable
    mods: dict[str, ModuleData]
    stripes: dict[int, tuple[int, int]]
    trace: Trace | None = None
    # Record id -> the Lustre OST indices the file is striped over (Darshan LUSTRE module).
    lustre_osts: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # Per-job results of pure functions of the records, asked for by the metrics, the
    # layers, the rules and triage's columns alike (iolab.model.metrics.layer_time): once.
    # Shared, not copied, with the Model built from these columns.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def mod(self, name: str) -> ModuleData | None:
        return self.mods.get(name)

    def app_mask(self, md: ModuleData) -> np.ndarray:
        """For each record of ``md``: does it belong to an application file?"""
        if md.module not in FILE_MODULES:
            return np.ones(len(md), dtype=bool)
        return self.files.category[md.file_index] == APP

    def per_file(self, module: str, counter: str) -> np.ndarray:
        """Counter ``counter`` of ``module`` summed per file (index of :attr:`files`)."""
        md = self.mods.get(module)
        n = len(self.files)
        if md is None or len(md) == 0 or module not in FILE_MODULES:
            return np.zeros(n)
        vals = md.fcol(counter) if "_F_" in counter else md.pos(counter).astype(np.float64)
        return np.bincount(md.file_index, weights=vals, minlength=n)[:n]

    def per_file_max(self, module: str, counter: str) -> np.ndarray:
        md = self.mods.get(module)
        out = np.full(len(self.files), -1.0)
        if md is None or len(md) == 0 or module not in FILE_MODULES:
            return out
        vals = md.fcol(counter) if "_F_" in counter else md.col(counter).astype(np.float64)
        np.maximum.at(out, md.file_index, vals)
        return out
