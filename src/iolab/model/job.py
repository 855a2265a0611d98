"""The one job model: job facts, a file table, per-module columns and derived metrics.

:func:`build_model` is the only way in: it merges one or more :class:`RawJob` (several logs
of one workflow become one job, ranks renumbered one after the other), classifies files,
and computes :class:`~iolab.model.metrics.Metrics` once. Rules read only this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from itertools import compress, repeat
from typing import Any

import numpy as np

from iolab.errors import UsageError
from iolab.model.columns import (
    DATASET_MODULES,
    FILE_MODULES,
    Columns,
    FileTable,
    Job,
)
from iolab.model.files import APP, categorize_all, names_anonymised
from iolab.model.layers import CrossLayer, derive_layers
from iolab.model.metrics import Metrics, derive
from iolab.model.mpilib import library_of, remember_library
from iolab.model.raw import RawJob
from iolab.model.tables import ModuleData, concat_modules, module_tables, unique_values
from iolab.model.trace import build_trace
from iolab.model.workflow import LogSpan, workflow_run_time

__all__ = ["DATASET_MODULES", "FILE_MODULES", "Columns", "FileTable", "Job", "Model",
           "build_model"]

def _dataset_file(name: str, by_path: dict[str, int]) -> int:
    """The file of a dataset record: the longest prefix before a ':' that is a file."""
    cut = name.rfind(":")
    while cut > 0:
        i = by_path.get(name[:cut])
        if i is not None:
            return i
        cut = name.rfind(":", 0, cut)
    return -1


@dataclass(frozen=True, kw_only=True)
class Model(Columns):
    """The job's columns with what is derived from them, computed once by build_model."""

    metrics: Metrics
    layers: CrossLayer


def _merge(raws: Sequence[RawJob]) -> tuple[dict[str, ModuleData], dict[int, str], list[int]]:
    """Columns of all jobs, ranks shifted so that job k's rank r becomes offset_k + r."""
    merged: dict[str, list[ModuleData]] = {}
    paths: dict[int, str] = {}
    offsets: list[int] = []
    off = 0
    for raw in raws:
        mods, p = module_tables(raw)
        paths.update(p)
        for name, md in mods.items():
            shared = md.ranks < 0
            md.ranks = np.where(shared, -1, md.ranks + off)
            md.span_lo = np.where(shared, off, md.ranks)
            md.span_n = np.where(shared, max(raw.nprocs, 1), 1)
            merged.setdefault(name, []).append(md)
        offsets.append(off)
        off += max(raw.nprocs, 1)
    out: dict[str, ModuleData] = {}
    for name, parts in merged.items():
        first = parts[0]
        for part in parts[1:]:
            first = concat_modules(first, part)
        out[name] = first
    return out, paths, offsets


def _file_table(mods: dict[str, ModuleData], paths: dict[int, str]) -> FileTable:
    idlists = [mods[m].ids for m in FILE_MODULES if m in mods]
    ids = unique_values(np.concatenate(idlists)) if idlists else np.zeros(0, dtype=np.uint64)
    id_list = ids.tolist()
    if list(paths) == id_list:  # one log's one file module: the names are already in order
        names = list(paths.values())
    else:
        names = list(map(paths.get, id_list, repeat("")))  # in C, not a loop: 64,000 files
    if "" in names:  # a record without a name is named by its id
        names = [name or f"<record {i:x}>" for name, i in zip(names, id_list)]
    cat = np.array(categorize_all(names), dtype=np.int8)
    nranks = np.zeros(len(ids), dtype=np.int64)
    first = np.full(len(ids), -2, dtype=np.int64)
    keys: list[np.ndarray] = []
    shared_n = np.zeros(len(ids), dtype=np.int64)
    for m in FILE_MODULES:
        md = mods.get(m)
        if md is None:
            continue
        md.file_index = np.searchsorted(ids, md.ids)
        sh = md.ranks < 0
        np.maximum.at(shared_n, md.file_index[sh], md.span_n[sh])
        keys.append(md.file_index[~sh].astype(np.int64) * (1 << 32) + md.ranks[~sh])
        first[md.file_index] = np.where(first[md.file_index] == -2, md.ranks, first[md.file_index])
    if keys:
        uk = unique_values(np.concatenate(keys))
        np.add.at(nranks, (uk >> 32).astype(np.int64), 1)
    nranks = np.maximum(nranks, shared_n)
    by_path: dict[str, int] = {}
    for m, md in mods.items():
        if m in DATASET_MODULES:
            # built only for datasets (hashing 64,000 names costs 30 ms)
            by_path = by_path or dict(zip(names, range(len(names))))
            md.file_index = np.array([_dataset_file(paths.get(int(i), ""), by_path)
                                      for i in md.ids], dtype=np.int64)
        elif m not in FILE_MODULES:
            md.file_index = np.zeros(len(md), dtype=np.int64)
    return FileTable(ids=ids, paths=names, category=cat, nranks=nranks, ranks_first=first)


def _hints(raws: Sequence[RawJob]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for r in raws:
        for key, text in r.metadata.items():
            if key.startswith("hints:"):
                kv = (item.split("=", 1) for item in text.split(";") if "=" in item)
                out[key[len("hints:"):]] = {k.strip(): v.strip() for k, v in kv}
    return out


# Darshan modules that record no I/O of their own: summaries of the modules that are read
# (HEATMAP), MPI and platform profiles (APMPI, APXC, BG/Q), layouts (LUSTRE).
_NOT_IO_MODULES = frozenset({"HEATMAP", "APMPI", "APXC", "BG/Q", "LUSTRE", "NULL"})


def _unread_io(raws: Sequence[RawJob]) -> list[str]:
    """The I/O modules a log holds that the loader left out (e.g. DFS, DAOS, MDHIM)."""
    return sorted({m for r in raws for m in r.unread_modules} - _NOT_IO_MODULES)


def build_model(
    raws: Sequence[RawJob],
    *,
    nodes: int | None = None,
    node_memory_bytes: int | None = None,
    cores_per_node: int | None = None,
) -> Model:
    """One model from one or more raw jobs (a workflow of several logs is one job)."""
    if not raws:
        raise UsageError("no job to analyse; give at least one log")
    mods, paths, offsets = _merge(raws)
    files = _file_table(mods, paths)
    stripes: dict[int, tuple[int, int]] = {}
    for r in raws:
        stripes.update(r.stripes)
    start = min(r.start_time for r in raws)
    end = max(r.end_time for r in raws)
    # A log's interval lasts its run time at least: formats before 3.41 keep whole seconds,
    # so start and end are often equal.
    logs = [LogSpan(source=(r.source_paths or [""])[0], jobid=r.jobid, exe=r.exe,
                    start_time=r.start_time, run_time_s=r.run_time_s,
                    end_time=max(r.end_time, r.start_time + r.run_time_s),
                    first_rank=off, nprocs=max(r.nprocs, 1)) for r, off in zip(raws, offsets)]
    run = raws[0].run_time_s if len(raws) == 1 else workflow_run_time(logs)
    rank_hosts = {off + rank: host for r, off in zip(raws, offsets)
                  for rank, host in r.rank_hosts.items() if host}
    known_nodes = nodes or next((r.nodes for r in raws if r.nodes), None)
    if known_nodes is None and any(r.hosts for r in raws):
        known_nodes = len({h for r in raws for h in r.hosts})
    if known_nodes is None and rank_hosts and len(rank_hosts) >= sum(
            max(r.nprocs, 1) for r in raws):  # every rank's host known: count the nodes
        known_nodes = len(set(rank_hosts.values()))
    hints = _hints(raws)
    # One answer for the report, the JSON and the fix files (iolab.model.mpilib).
    library = library_of(exe=raws[0].exe, metadata=raws[0].metadata, hints=hints,
                         mounts=raws[0].mounts, rank_hosts=rank_hosts, files=files, mods=mods)
    job = Job(
        sources=[p for r in raws for p in r.source_paths],
        source_kind=raws[0].source,
        exe=raws[0].exe,
        nprocs=sum(max(r.nprocs, 1) for r in raws),
        run_time_s=run,
        start_time=start,
        end_time=end,
        nodes=known_nodes,
        node_memory_bytes=node_memory_bytes or next(
            (r.node_memory_bytes for r in raws if r.node_memory_bytes), None),
        cores_per_node=cores_per_node,
        format_versions=sorted({r.format_version for r in raws if r.format_version}),
        metadata=dict(raws[0].metadata),
        mounts=list(raws[0].mounts),
        partial_modules=sorted({m for r in raws for m in r.partial_modules}),
        notes=[n for r in raws for n in r.notes],
        n_logs=len(raws),
        hints=hints,
        rank_hosts=rank_hosts,
        names_anonymised=names_anonymised(list(compress(files.paths,
                                                        (files.category == APP).tolist()))),
        mpiio_implementation={"ompio": "OMPIO", "romio": "ROMIO"}.get(library.io, ""),
        logs=logs,
        unread_io_modules=_unread_io(raws),
        partial_why={m: w for r in raws for m, w in r.partial_why.items()},
        host_cpus={h: n for r in raws for h, n in r.host_cpus.items()},
    )
    columns = Columns(job=job, files=files, mods=mods, stripes=stripes,
                      trace=build_trace(raws, offsets, files),
                      lustre_osts={k: v for r in raws for k, v in r.lustre_osts.items()})
    remember_library(columns, library)
    return Model(**_fields(columns), metrics=derive(columns), layers=derive_layers(columns))


def _fields(columns: Columns) -> dict[str, Any]:
    """The columns' fields by name, shared (not copied) with the model built from them."""
    return {f.name: getattr(columns, f.name) for f in fields(Columns)}
