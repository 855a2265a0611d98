"""Which MPI library ran a job, and so which MPI-IO layer read its hints, from the traces
it leaves in the log: Open MPI's runtime files (``/tmp/ompi.*``, ``vader_segment``, OMPIO's
``<file>.locktest.<rank>``), library and install paths in the command line, the launch line
of an iolab profile, the hints ROMIO reports at open, the Cray programming environment's
mounts and Cray node names. ROMIO hints mean nothing to Open MPI's OMPIO: the fix
artifacts, the report and the JSON all read this one answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING

from iolab.model.files import APP

if TYPE_CHECKING:
    from iolab.model.columns import Columns, FileTable
    from iolab.model.tables import ModuleData

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


# Columns.memo's key of the answer build_model found (remember_library).
_MEMO_KEY = ("mpi_library",)


def remember_library(columns: Columns, library: MpiLibrary) -> None:
    """Keep build_model's answer with the job's columns: :func:`mpi_library` asked again
    (triage's mpi_library column, the fix artifacts) returns it rather than searching the
    log's names a second time (0.08 ms CPU a small log, issue 31)."""
    columns.memo[_MEMO_KEY] = library


def mpi_library(model: Columns) -> MpiLibrary:
    """The MPI library and its MPI-IO layer, from what the log shows (file records of the
    MPI runtime, library and install paths, mounts, the launch line, hints in effect)."""
    known = model.memo.get(_MEMO_KEY)
    if known is not None:  # build_model's answer (the same inputs): not searched again
        return known
    job = model.job
    return library_of(exe=job.exe, metadata=job.metadata, hints=job.hints, mounts=job.mounts,
                      rank_hosts=job.rank_hosts, files=model.files, mods=model.mods)


def library_of(*, exe: str, metadata: Mapping[str, str],
               hints: Mapping[str, Mapping[str, str]], mounts: Sequence[tuple[str, str]],
               rank_hosts: Mapping[int, str], files: FileTable,
               mods: Mapping[str, ModuleData]) -> MpiLibrary:
    """:func:`mpi_library` from the job's parts: build_model asks it before the job exists,
    so that the job is built once, with its MPI-IO implementation."""
    has_mpiio = "MPI-IO" in mods and len(mods["MPI-IO"]) > 0
    # The MPI runtime's files and the libraries are never application files: only those
    # (a few) are searched, not the 64,000 names of a large log.
    texts = [exe, metadata.get("launch", "")] + [
        *compress(files.paths, (files.category != APP).tolist())]
    hay = "\n".join(texts)

    def seen(m: re.Match[str]) -> str:  # the line that matched, for the evidence
        start = hay.rfind("\n", 0, m.start()) + 1
        end = hay.find("\n", m.end())
        line = hay[start:end if end >= 0 else None]
        return line if len(line) <= 70 else "..." + line[-67:]
    keys = {k for h in hints.values() for k in h}
    romio_seen = len(keys & _ROMIO_REPORTED) >= 3
    cray_pe = [m for m, _ in mounts if _CRAY_PE.match(m)]
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
    if cray_pe and not re.search(r"/opt/aurora/", hay + "\n".join(m for m, _ in mounts)):
        return MpiLibrary("cray-mpich", "romio",
                          f"Cray programming environment mounted ({cray_pe[0]})")
    nid = next((h for h in rank_hosts.values() if _CRAY_NODE.match(h)), None)
    if nid is not None:
        return MpiLibrary("cray-mpich", "romio", f"Cray node names ({nid})")
    return MpiLibrary("unknown", io_default,
                      "the log does not say which MPI library ran"
                      + ("; the hints in effect are ROMIO's" if romio_seen else ""))
