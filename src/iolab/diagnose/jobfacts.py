"""What a fix artifact must know about the job it is for, read once from the model.

Every emitted file (hints, ``lfs`` commands, Slurm lines, buffering specs) is computed from
these facts, never from placeholders: which MPI library ran (ROMIO hints mean nothing to
Open MPI's OMPIO), how many ranks on how many nodes, which OSTs the LUSTRE records saw, the
layout of each file, the mount each file sits on, which files go through MPI-IO, and the
program and arguments from the log's command line.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from iolab.model.files import APP

if TYPE_CHECKING:
    from iolab.model.job import Model

# Which MPI library ran, from the traces it leaves (measured here: a 4-rank Open MPI 4.1 run
# logs ``<file>.locktest.<rank>`` records, made by OMPIO's sharedfp/lockedfile component).
_OPEN_MPI = re.compile(r"/ompi\.|openmpi-sessions|/vader_segment|/sm_segment|"
                       r"\.locktest\.\d+$|/openmpi[/-]|/libmpi\.so\.(?:20|40)\b|orterun|prterun")
_CRAY_MPICH = re.compile(r"/opt/cray/pe/mpich|libmpi_cray|/cray-mpich|cray_mpich")
_CRAY_NODE = re.compile(r"^nid\d{5,6}$")  # Cray XC/EX compute node names (DXT host names)
_CRAY_PE = re.compile(r"^(/var)?/opt/cray/pe(/|$)")  # mounts of the Cray programming environment
_MPICH = re.compile(r"libmpich|/mpich[-_/.]|mpich[-_]?\d|mpiexec\.hydra|mpirun\.mpich|/impi/|"
                    r"intel_mpi|mvapich|/opt/aurora/")
# Keys ROMIO always reports through MPI_File_get_info (OMPIO only echoes what was set).
_ROMIO_REPORTED = {"cb_buffer_size", "romio_cb_read", "romio_cb_write", "romio_no_indep_rw",
                   "ind_rd_buffer_size", "ind_wr_buffer_size"}
# Darshan keeps at most this many characters of the command line (DARSHAN_EXE_LEN - 1).
_DARSHAN_EXE_MAX = 1023
# Lustre: stripe sizes are multiples of 64 KiB, below 4 GiB.
LUSTRE_STRIPE_UNIT = 64 << 10
LUSTRE_STRIPE_MAX = (4 << 30) - LUSTRE_STRIPE_UNIT
PARALLEL_FS = ("lustre", "gpfs", "beegfs", "pvfs2", "orangefs", "panfs", "dvs", "wekafs")


@dataclass(frozen=True)
class MpiLibrary:
    name: str  # "open-mpi", "mpich", "cray-mpich", "none" (no MPI-IO), "unknown"
    io: str  # the MPI-IO layer: "ompio", "romio", "none", "unknown"
    evidence: str  # why we think so, for the artifact's header

    @property
    def label(self) -> str:
        names = {"open-mpi": "Open MPI", "mpich": "MPICH (ROMIO)", "cray-mpich": "Cray MPICH",
                 "none": "no MPI-IO", "unknown": "unknown MPI library"}
        io = {"ompio": " with OMPIO", "romio": " with ROMIO"}.get(self.io, "")
        return names.get(self.name, self.name) + (io if self.name == "open-mpi" else "")


@dataclass(frozen=True)
class JobFacts:
    mpi: MpiLibrary
    nprocs: int
    nodes: int | None
    ranks_per_node: int | None  # the most crowded node's ranks, when nodes are known
    cores_per_node: int | None
    command: tuple[str, ...]  # program and arguments from the log; empty when unknown
    command_note: str  # why the command may be incomplete ("" when it is complete)
    osts_known: int  # the file system has at least this many OSTs (0: no LUSTRE records)
    layouts: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (size, count)
    mounts: tuple[tuple[str, str], ...] = ()  # (mount point, type), longest first
    mpi_paths: frozenset[str] = frozenset()  # files accessed through MPI-IO
    app_paths: frozenset[str] = frozenset()  # the application's own files

    def mount_of(self, path: str) -> tuple[str, str] | None:
        """The mount point holding ``path`` and its type (None when unknown)."""
        for mnt, typ in self.mounts:
            if path == mnt or path.startswith(mnt.rstrip("/") + "/"):
                return mnt, typ
        return None

    def on_lustre(self, path: str) -> bool:
        """Lustre: the file has a layout in the LUSTRE records, or sits on a Lustre mount."""
        if path in self.layouts:
            return True
        m = self.mount_of(path)
        return m is not None and m[1].lower() == "lustre"

    def is_mount_root(self, path: str) -> bool:
        p = path.rstrip("/") or "/"
        return p == "/" or any(p == (mnt.rstrip("/") or "/") for mnt, _ in self.mounts)

    @property
    def command_line(self) -> str:
        """The program and arguments, shell-quoted; "" when the log does not have them."""
        return shlex.join(self.command)


def mpi_library(model: Model) -> MpiLibrary:
    """The MPI library and its MPI-IO layer, from what the log shows (file records of the
    MPI runtime, library and install paths, mounts, the launch line, hints in effect)."""
    job = model.job
    has_mpiio = "MPI-IO" in model.mods and len(model.mods["MPI-IO"]) > 0
    texts = [job.exe, job.metadata.get("launch", "")] + list(model.files.paths)
    hay = "\n".join(texts)

    def seen(m: re.Match[str]) -> str:  # the line that matched, for the evidence
        start = hay.rfind("\n", 0, m.start()) + 1
        end = hay.find("\n", m.end())
        line = hay[start:end if end >= 0 else None]
        return line if len(line) <= 70 else "..." + line[-67:]
    keys = {k for h in job.hints.values() for k in h}
    romio_seen = len(keys & _ROMIO_REPORTED) >= 3
    cray_pe = [m for m, _ in job.mounts if _CRAY_PE.match(m)]
    io_default = "romio" if romio_seen else "unknown"
    if not has_mpiio:  # hints have nothing to act on
        return MpiLibrary("none", "none", "no MPI-IO records")
    if (m := _OPEN_MPI.search(hay)) is not None:
        io = "romio" if romio_seen else "ompio"
        why = f"Open MPI's trace in the log: {seen(m)}"
        if romio_seen:
            why += "; the hints in effect are ROMIO's"
        return MpiLibrary("open-mpi", io, why)
    if (m := _CRAY_MPICH.search(hay)) is not None:
        return MpiLibrary("cray-mpich", "romio", f"Cray MPICH in the log: {seen(m)}")
    if (m := _MPICH.search(hay)) is not None:
        return MpiLibrary("mpich", "romio", f"MPICH family in the log: {seen(m)}")
    if cray_pe and not re.search(r"/opt/aurora/", hay + "\n".join(m for m, _ in job.mounts)):
        return MpiLibrary("cray-mpich", "romio",
                          f"Cray programming environment mounted ({cray_pe[0]})")
    nid = next((h for h in job.rank_hosts.values() if _CRAY_NODE.match(h)), None)
    if nid is not None:
        return MpiLibrary("cray-mpich", "romio", f"Cray node names ({nid})")
    return MpiLibrary("unknown", io_default,
                      "the log does not say which MPI library ran"
                      + ("; the hints in effect are ROMIO's" if romio_seen else ""))


def _command(model: Model) -> tuple[tuple[str, ...], str]:
    exe = model.job.exe.strip()
    if not exe:
        return (), "the log does not record the command line"
    if model.job.source_kind == "iolab-profile":
        try:
            return tuple(shlex.split(exe)), ""
        except ValueError:
            pass
    # Darshan stores the command line as words joined by spaces, cut at 1023 characters.
    words = tuple(exe.split())
    note = ""
    if len(model.job.exe) >= _DARSHAN_EXE_MAX:
        note = "Darshan cut the command line at 1023 characters: check the last arguments"
    if model.job.n_logs > 1:
        note = (note + "; " if note else "") + "the first log's command of a workflow"
    return words, note


def _ranks_per_node(model: Model) -> int | None:
    job = model.job
    if job.rank_hosts and len(job.rank_hosts) >= job.nprocs:
        counts: dict[str, int] = {}
        for host in job.rank_hosts.values():
            counts[host] = counts.get(host, 0) + 1
        return max(counts.values())
    if job.nodes:
        return -(-max(job.nprocs, 1) // job.nodes)
    return None


def job_facts(model: Model) -> JobFacts:
    """The facts of ``model`` (computed once per model and kept on it)."""
    cached = vars(model).get("_iolab_job_facts")
    if isinstance(cached, JobFacts):
        return cached
    files = model.files
    pos = {int(i): k for k, i in enumerate(files.ids)}
    layouts = {files.paths[pos[rid]]: (int(s), int(c)) for rid, (s, c) in model.stripes.items()
               if rid in pos and s > 0 and c > 0}
    osts = {o for v in model.lustre_osts.values() for o in v if o >= 0}
    # OST indices are numbered from 0: the highest one seen bounds the file system's count.
    osts_known = max([max(osts) + 1 if osts else 0] + [c for _, c in layouts.values()])
    md = model.mods.get("MPI-IO")
    mpi_paths = frozenset(files.paths[i] for i in set(md.file_index.tolist())) if (
        md is not None and len(md)) else frozenset()
    command, note = _command(model)
    facts = JobFacts(
        mpi=mpi_library(model),
        nprocs=max(model.job.nprocs, 1),
        nodes=model.job.nodes,
        ranks_per_node=_ranks_per_node(model),
        cores_per_node=model.job.cores_per_node,
        command=command,
        command_note=note,
        osts_known=osts_known,
        layouts=layouts,
        mounts=tuple(sorted(((m, t) for m, t in model.job.mounts if m.startswith("/")),
                            key=lambda mt: -len(mt[0]))),
        mpi_paths=mpi_paths,
        app_paths=frozenset(p for p, c in zip(files.paths, files.category) if c == APP),
    )
    vars(model)["_iolab_job_facts"] = facts
    return facts


def own_file(facts: JobFacts, path: str) -> bool:
    """A path a fix may name: one of the job's application files, absolute, not a mount
    root, a real name (not an anonymised record) and printable on one line."""
    return (path in facts.app_paths and os.path.isabs(path) and not facts.is_mount_root(path)
            and not path.startswith("<") and path.isprintable())
