"""What the store keeps of a job beyond its totals: the slowest rank's I/O time in each layer,
the file systems it used, and its costliest files per layer (a bounded file table).

Computed in the worker from the model (iolab.model), so the pool sends back rows, never a
model. Layers are counted each on its own: a file written through HDF5 shows its wait in
HDF5, MPI-IO and POSIX alike, so the layers' times overlap and do not add up to the job's
``io_time_s`` (which counts each file once, at the layer where it took longest).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from iolab.model.files import APP
from iolab.model.metrics import layer_time
from iolab.model.tables import unique_rows
from iolab.triage.layers import FS_LAYERS, LAYERS, LayerSpec

if TYPE_CHECKING:
    from iolab.model.job import Model

# A 65,536-rank log can name 100,000 files: the store keeps the costliest per job and layer,
# and one row standing for the rest (their count and sums), so the totals stay whole.
FILES_PER_LAYER = 16
UNKNOWN_MOUNT = "(unknown)"


def _per_rank_s(lt: Any, n: int, files: Any = None) -> Any:
    """Each rank's time in one layer (per-rank records added up per rank; a reduced record's
    slowest rank's time given to every rank of its log), over the files selected by the
    boolean mask ``files`` (all when None)."""
    per_rank = np.zeros(n)
    own, red = lt.own, lt.reduced
    if files is not None:
        own = own[files[own[:, 0].astype(np.int64)]] if len(own) else own
        red = red[files[red[:, 0].astype(np.int64)]] if len(red) else red
    if len(own):
        np.add.at(per_rank, np.minimum(np.maximum(own[:, 1].astype(np.int64), 0), n - 1), own[:, 2])
    if len(red):
        spans, inv = unique_rows(red[:, 1:3].astype(np.int64), return_inverse=True)
        sums = np.bincount(inv.reshape(-1), weights=red[:, 3], minlength=len(spans))
        for (lo, k), s in zip(spans.tolist(), sums.tolist()):
            per_rank[max(lo, 0):lo + k] += s
    return per_rank


def _per_file(model: Model, module: str, counter: str) -> Any:
    md = model.mods.get(module)
    n = len(model.files)
    if md is None or len(md) == 0:
        return np.zeros(n)
    keep = md.file_index >= 0  # a dataset whose file is unknown belongs to no file
    vals = md.pos(counter).astype(np.float64)[keep]
    return np.bincount(md.file_index[keep], weights=vals, minlength=n)[:n]


class _Mounts:
    """The mount of a path (longest mount point that holds it), cached per folder."""

    def __init__(self, mounts: list[tuple[str, str]]) -> None:
        self.mounts = sorted(mounts, key=lambda m: -len(m[0]))
        self.cache: dict[str, tuple[str, str]] = {}

    def of(self, path: str) -> tuple[str, str]:
        folder = os.path.dirname(path)
        hit = self.cache.get(folder)
        if hit is None:
            hit = (UNKNOWN_MOUNT, "")
            for point, fstype in self.mounts:
                pre = point.rstrip("/") + "/"
                if point == "/" or path == point or path.startswith(pre):
                    hit = (point, fstype)
                    break
            self.cache[folder] = hit
        return hit


@dataclass
class _LayerFiles:
    spec: LayerSpec
    present: Any  # bool per file
    read: Any
    written: Any
    slowest_s: Any  # the slowest rank's time on each file
    time_s: Any  # summed over ranks


def _layer_files(model: Model, spec: LayerSpec, lt: Any) -> _LayerFiles:
    nf = len(model.files)
    present = np.zeros(nf, dtype=bool)
    for mod, _ in spec.time_mods:
        md = model.mods.get(mod)
        if md is not None and len(md):
            present[md.file_index[md.file_index >= 0]] = True
    present &= model.files.category == APP
    read = sum((_per_file(model, m, f"{p}_BYTES_READ") for m, p in spec.byte_mods),
               np.zeros(nf))
    written = sum((_per_file(model, m, f"{p}_BYTES_WRITTEN") for m, p in spec.byte_mods),
                  np.zeros(nf))
    return _LayerFiles(spec, present, read, written, lt.slowest(nf), lt.kinds.sum(axis=1))


def job_columns(model: Model, job_key: str, day: str
                ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The jobs table's per-layer and file-system columns, and the job's file table rows."""
    mounts = _Mounts(list(model.job.mounts))
    n = max(int(model.job.nprocs), 1)
    cols: dict[str, Any] = {}
    files: list[dict[str, Any]] = []
    fs_layers = []
    for spec in LAYERS:
        if not any(len(model.mods.get(mod) or ()) for mod, _ in spec.time_mods):
            cols[spec.column] = 0.0  # a layer the job did not use: no time, no file rows
            continue
        lt = layer_time(model, spec.time_mods)
        per_rank = _per_rank_s(lt, n)
        cols[spec.column] = round(float(per_rank.max()), 6)
        lf = _layer_files(model, spec, lt)
        if spec.name in FS_LAYERS:
            fs_layers.append((lt, lf, per_rank))
        files += _file_rows(model, lf, mounts, job_key, day)
    cols["file_systems"] = _file_systems(model, mounts, fs_layers, n)
    return cols, files


def _file_systems(model: Model, mounts: _Mounts,
                  fs_layers: list[tuple[Any, _LayerFiles, Any]], n: int) -> list[dict[str, Any]]:
    """Per mount the job's application files touched (POSIX and STDIO): files, bytes, and
    the slowest rank's time on that mount's files."""
    nf = len(model.files)
    on = np.zeros(nf, dtype=bool)
    for _, lf, _ in fs_layers:
        on |= lf.present
    where: dict[tuple[str, str], list[int]] = {}
    for i in np.nonzero(on)[0].tolist():
        where.setdefault(mounts.of(model.files.paths[i]), []).append(i)
    out = []
    for (point, fstype), idx in where.items():
        mask = np.zeros(nf, dtype=bool)
        mask[idx] = True
        per_rank = sum((_on_mount_per_rank_s(lt, whole, n, mask) for lt, _, whole in fs_layers),
                       np.zeros(n))
        moved = sum(float(lf.read[mask].sum() + lf.written[mask].sum())
                    for _, lf, _ in fs_layers)
        out.append({"mount": point, "fs_type": fstype or None, "files": len(idx),
                    "bytes": int(moved), "io_time_s": round(float(per_rank.max()), 6)})
    return sorted(out, key=lambda r: (-r["bytes"], r["mount"]))


def _on_mount_per_rank_s(lt: Any, whole: Any, n: int, mask: Any) -> Any:
    """Each rank's time in one layer on the files of ``mask``: ``whole`` (the layer's, already
    computed) when the mask holds every file the layer timed, as on a job whose files are
    all on one mount (the same rows added in the same order: the same floats)."""
    if all(mask[rows[:, 0].astype(np.int64)].all() for rows in (lt.own, lt.reduced)):
        return whole
    return _per_rank_s(lt, n, mask)


def _file_rows(model: Model, lf: _LayerFiles, mounts: _Mounts, job_key: str,
               day: str) -> list[dict[str, Any]]:
    """The costliest files of one layer (by the slowest rank's time, then bytes), and one
    row for the rest of them."""
    idx = np.nonzero(lf.present)[0]
    if not len(idx):
        return []
    order = idx[np.lexsort((-(lf.read[idx] + lf.written[idx]), -lf.slowest_s[idx]))]
    top, rest = order[:FILES_PER_LAYER], order[FILES_PER_LAYER:]
    rows = []
    # one file's numbers read as Python scalars, all at once: four numpy sums of one element
    # a row were ~0.15 ms of a log's ~9 ms in a worker (the same values: a one-element sum
    # is the element)
    sel = top.tolist()
    cols = zip(sel, lf.read[top].tolist(), lf.written[top].tolist(),
               lf.slowest_s[top].tolist(), lf.time_s[top].tolist(),
               model.files.nranks[top].tolist())
    for i, read, written, slowest, spent, ranks in cols:
        path = model.files.paths[i]
        point, fstype = mounts.of(path)
        rows.append({"job_key": job_key, "layer": lf.spec.name, "path": path, "mount": point,
                     "fs_type": fstype or None, "files": 1, "ranks": int(ranks),
                     "bytes_read": int(read), "bytes_written": int(written),
                     "slowest_rank_time_s": round(slowest, 6), "time_s": round(spent, 6),
                     "day": day})
    if len(rest):
        rows.append(_file_row(job_key, day, lf.spec.name, None, None, None, len(rest), None,
                              lf, rest))
    return rows


def _file_row(job_key: str, day: str, layer: str, path: str | None, mount: str | None,
              fstype: str | None, n: int, ranks: int | None, lf: _LayerFiles,
              sel: Any) -> dict[str, Any]:
    return {"job_key": job_key, "layer": layer, "path": path, "mount": mount,
            "fs_type": fstype or None, "files": n, "ranks": ranks,
            "bytes_read": int(lf.read[sel].sum()), "bytes_written": int(lf.written[sel].sum()),
            "slowest_rank_time_s": round(float(lf.slowest_s[sel].sum()), 6),
            "time_s": round(float(lf.time_s[sel].sum()), 6), "day": day}
