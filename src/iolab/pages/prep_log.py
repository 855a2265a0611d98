"""Tables and plot series of a Darshan log or iolab profile (one job model).

Only numbers and labels here, no drawing: each function is tested on known logs and
synthetic jobs. Application files only (the MPI runtime's and the system's are left out,
as everywhere in iolab).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from iolab.model.metrics import SIZE_BINS
from iolab.model.trace import MPIIO_CODE, POSIX_CODE
from iolab.pages.fmt import human_bytes, human_count, human_seconds

if TYPE_CHECKING:
    from iolab.model.job import Model
    from iolab.model.tables import ModuleData

# Darshan's bin labels, as its job summary prints them.
BIN_LABELS = ("0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M",
              "10M-100M", "100M-1G", "1G+")
# Layers from the one the application called down to the file system.
LAYER_ORDER = ("HDF5", "PnetCDF", "MPI-IO", "POSIX", "STDIO")


@dataclass
class SizeHistogram:
    interface: str
    bins: tuple[str, ...]
    read: list[int]
    write: list[int]


def access_sizes(model: Model) -> list[SizeHistogram]:
    """Request counts per Darshan size bin, per interface that has a histogram."""
    out = []
    for name in LAYER_ORDER:
        iface = model.metrics.ifaces.get(name)
        if iface is None or not iface.hist or not iface.hist.get("read"):
            continue
        r, w = list(iface.hist["read"][:len(SIZE_BINS)]), list(iface.hist["write"][:len(SIZE_BINS)])
        if sum(r) + sum(w) == 0:
            continue
        out.append(SizeHistogram(name, BIN_LABELS, r, w))
    return out


@dataclass
class RankBars:
    ranks: np.ndarray
    time_s: np.ndarray
    bytes: np.ndarray
    slowest: int  # rank with the most I/O time
    median_time_s: float


def rank_bars(model: Model) -> RankBars | None:
    """I/O time and bytes of each rank (reduced records spread over their ranks)."""
    m = model.metrics
    t, b = np.asarray(m.rank_io_time_s, dtype=float), np.asarray(m.rank_bytes, dtype=float)
    if t.size == 0 or (t.sum() == 0 and b.sum() == 0):
        return None
    return RankBars(np.arange(t.size), t, b, int(t.argmax()), float(np.median(t)))


@dataclass
class LayerRow:
    layer: str
    bytes_read: int
    bytes_written: int
    time_s: dict[str, float]  # read / write / meta, summed over ranks
    ops: int

    @property
    def time_total_s(self) -> float:
        return sum(self.time_s.values())


def layers(model: Model) -> list[LayerRow]:
    """Bytes and time per layer, from the application's interface down to POSIX."""
    out = []
    for name in LAYER_ORDER:
        f = model.metrics.ifaces.get(name)
        if f is None or (f.total_bytes == 0 and sum(f.time_s.values()) == 0 and f.opens == 0):
            continue
        out.append(LayerRow(name, f.bytes["read"], f.bytes["write"], dict(f.time_s),
                            f.ops["read"] + f.ops["write"]))
    return out


@dataclass
class TimelineSeries:
    """Bytes moved per time bin (each byte counted once), and which layer was counted."""

    edges: np.ndarray  # seconds since job start, len(bins) + 1
    read: np.ndarray  # bytes per bin
    write: np.ndarray
    layer_of_file: dict[int, str] = field(default_factory=dict)  # file index -> counted layer
    ops: int = 0

    def rate(self, direction: str) -> np.ndarray:
        width = np.diff(self.edges)
        vals = self.read if direction == "read" else self.write
        return np.divide(vals, width, out=np.zeros_like(vals), where=width > 0)


def _counted_rows(model: Model) -> tuple[np.ndarray, dict[int, str]]:
    """Trace rows to count: per application file, its MPI-IO operations when the trace has
    any (the POSIX operations under them move the same bytes again), else its POSIX ones."""
    tr = model.trace
    assert tr is not None
    app = model.files.is_app()[tr.file_index] if len(model.files) else np.zeros(0, bool)
    mp_files = np.unique(tr.file_index[(tr.module == MPIIO_CODE) & app])
    has_mp = np.isin(tr.file_index, mp_files)
    rows = app & np.where(has_mp, tr.module == MPIIO_CODE, tr.module == POSIX_CODE)
    layer = {int(i): ("MPI-IO" if i in set(mp_files.tolist()) else "POSIX")
             for i in np.unique(tr.file_index[rows])}
    return rows, layer


def spread_bytes(start: np.ndarray, end: np.ndarray, length: np.ndarray,
                 edges: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """Bytes per bin when each operation moves its bytes evenly over [start, end]; an
    operation of no duration puts them all in the bin holding its start. Every byte lands
    in exactly one bin: the result sums to ``length.sum()``."""
    out = np.zeros(len(edges) - 1)
    lo_edge, hi_edge = edges[:-1], edges[1:]
    for k in range(0, len(start), chunk):
        s, e, n = start[k:k + chunk, None], end[k:k + chunk, None], length[k:k + chunk, None]
        dur = e - s
        inst = dur[:, 0] <= 0
        overlap = np.clip(np.minimum(e, hi_edge) - np.maximum(s, lo_edge), 0, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(dur > 0, overlap / np.where(dur > 0, dur, 1), 0.0)
        out += (share * n)[~inst].sum(axis=0)
        if inst.any():
            idx = np.clip(np.searchsorted(edges, s[inst, 0], side="right") - 1, 0, len(out) - 1)
            np.add.at(out, idx, n[inst, 0].astype(float))
    return out


def timeline(model: Model, bins: int = 120) -> TimelineSeries | None:
    """Read and write bytes over the run from the trace (DXT or ``--trace``), None without
    one. Bins span from the first operation's start to the last one's end."""
    tr = model.trace
    if tr is None or len(tr) == 0:
        return None
    rows, layer = _counted_rows(model)
    if not rows.any():
        return None
    start, end = tr.start[rows], np.maximum(tr.end[rows], tr.start[rows])
    t0, t1 = float(start.min()), float(end.max())
    edges = np.linspace(t0, t1 if t1 > t0 else t0 + 1e-6, bins + 1)
    wr = tr.write[rows]
    length = tr.length[rows].astype(float)
    read = spread_bytes(start[~wr], end[~wr], length[~wr], edges)
    write = spread_bytes(start[wr], end[wr], length[wr], edges)
    return TimelineSeries(edges, read, write, layer, int(rows.sum()))


def rank_activity(model: Model, max_ranks: int = 64, max_spans: int = 400
                  ) -> dict[int, list[tuple[float, float]]]:
    """Per rank (the first ``max_ranks``), when it was in I/O: its counted operations merged
    into at most ``max_spans`` (start, duration) spans, for a Gantt chart."""
    tr = model.trace
    if tr is None or len(tr) == 0:
        return {}
    rows, _ = _counted_rows(model)
    out: dict[int, list[tuple[float, float]]] = {}
    for r in np.unique(tr.rank[rows])[:max_ranks]:
        sel = rows & (tr.rank == r)
        order = np.argsort(tr.start[sel])
        s, e = tr.start[sel][order], np.maximum(tr.end[sel][order], tr.start[sel][order])
        span = float(e.max() - s.min()) or 1.0
        gap = span / max_spans  # merge operations closer than this: the chart stays light
        spans: list[tuple[float, float]] = []
        cur_s, cur_e = float(s[0]), float(e[0])
        for a, b in zip(s[1:].tolist(), e[1:].tolist()):
            if a - cur_e <= gap:
                cur_e = max(cur_e, b)
            else:
                spans.append((cur_s, max(cur_e - cur_s, gap / 4)))
                cur_s, cur_e = a, b
        spans.append((cur_s, max(cur_e - cur_s, gap / 4)))
        out[int(r)] = spans
    return out


# --- Darshan job-summary tables --------------------------------------------------------


def _app_rows(model: Model, mod: str) -> tuple[ModuleData | None, np.ndarray]:
    md = model.mods.get(mod)
    if md is None or len(md) == 0:
        return None, np.zeros(0, dtype=bool)
    return md, model.app_mask(md)


def common_access_sizes(model: Model, top: int = 4) -> list[list[str]]:
    """The most common POSIX (and MPI-IO) access sizes over all records, with their counts
    (Darshan keeps each record's four most common)."""
    rows = []
    for mod, prefix in (("POSIX", "POSIX"), ("MPI-IO", "MPIIO")):
        md, m = _app_rows(model, mod)
        if md is None:
            continue
        counts: dict[int, int] = {}
        for k in range(1, 5):
            sizes = md.col(f"{prefix}_ACCESS{k}_ACCESS")[m]
            cnt = md.pos(f"{prefix}_ACCESS{k}_COUNT")[m]
            for s, c in zip(sizes.tolist(), cnt.tolist()):
                if c > 0 and s >= 0:
                    counts[s] = counts.get(s, 0) + c
        for s, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
            rows.append([mod, human_bytes(s), human_count(c)])
    return rows


def file_counts(model: Model) -> list[list[str]]:
    """Darshan's file count summary: files read only, written only, both; their sizes
    (the highest byte touched + 1, over the POSIX and STDIO records)."""
    n = len(model.files)
    rd, wr, size = np.zeros(n), np.zeros(n), np.zeros(n)
    for mod, prefix in (("POSIX", "POSIX"), ("STDIO", "STDIO")):
        md, m = _app_rows(model, mod)
        if md is None:
            continue
        fi = md.file_index[m]
        np.add.at(rd, fi, md.pos(f"{prefix}_BYTES_READ")[m])
        np.add.at(wr, fi, md.pos(f"{prefix}_BYTES_WRITTEN")[m])
        top = np.maximum(md.col(f"{prefix}_MAX_BYTE_READ")[m],
                         md.col(f"{prefix}_MAX_BYTE_WRITTEN")[m]) + 1
        np.maximum.at(size, fi, top.astype(float))
    app = model.files.is_app() if n else np.zeros(0, dtype=bool)
    kinds = (("total opened", app), ("read-only", app & (rd > 0) & (wr == 0)),
             ("write-only", app & (wr > 0) & (rd == 0)), ("read/write", app & (rd > 0) & (wr > 0)))
    out = []
    for label, sel in kinds:
        k = int(sel.sum())
        out.append([label, human_count(k), human_bytes(size[sel].mean()) if k else "-",
                    human_bytes(size[sel].max()) if k else "-"])
    return out


def average_io_per_process(model: Model) -> list[list[str]]:
    """Per interface: the cumulative time and bytes divided by the process count."""
    p = max(model.job.nprocs, 1)
    out = []
    for row in layers(model):
        out.append([row.layer, human_seconds(row.time_s["read"] / p),
                    human_seconds(row.time_s["write"] / p), human_seconds(row.time_s["meta"] / p),
                    human_bytes(row.bytes_read / p), human_bytes(row.bytes_written / p)])
    return out


def _mount_of(path: str, mounts: list[tuple[str, str]]) -> tuple[str, str]:
    best = ("", "")
    for point, fstype in mounts:
        pre = point.rstrip("/") + "/"
        if (path == point or path.startswith(pre) or point == "/") and len(point) > len(best[0]):
            best = (point, fstype)
    return best if best[0] else ("(unknown)", "")


def data_per_file_system(model: Model) -> list[list[str]]:
    """Bytes read and written per mount point (POSIX and STDIO, application files)."""
    per: dict[tuple[str, str], list[float]] = {}
    for mod, prefix in (("POSIX", "POSIX"), ("STDIO", "STDIO")):
        md, m = _app_rows(model, mod)
        if md is None:
            continue
        for fi, r, w in zip(md.file_index[m].tolist(), md.pos(f"{prefix}_BYTES_READ")[m].tolist(),
                            md.pos(f"{prefix}_BYTES_WRITTEN")[m].tolist()):
            key = _mount_of(model.files.paths[fi], model.job.mounts)
            acc = per.setdefault(key, [0.0, 0.0, 0.0])
            acc[0] += r
            acc[1] += w
    files: dict[tuple[str, str], set[int]] = {}
    for fi in np.nonzero(model.files.is_app())[0].tolist() if len(model.files) else []:
        files.setdefault(_mount_of(model.files.paths[fi], model.job.mounts), set()).add(fi)
    return [[point, fstype or "-", human_count(len(files.get((point, fstype), ()))),
             human_bytes(v[0]), human_bytes(v[1])]
            for (point, fstype), v in sorted(per.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))]


def shared_file_variance(model: Model, top: int = 20) -> list[list[str]]:
    """Shared files (records reduced over their ranks): fastest and slowest rank, and the
    spread of time and bytes across ranks (Darshan's variance counters, shown as σ)."""
    out = []
    for mod, prefix in (("POSIX", "POSIX"), ("MPI-IO", "MPIIO")):
        md, m = _app_rows(model, mod)
        if md is None:
            continue
        sel = np.nonzero(m & (md.ranks < 0))[0]
        slow = md.fcol(f"{prefix}_F_SLOWEST_RANK_TIME")
        for i in sel[np.argsort(-slow[sel])][:top].tolist():
            out.append([
                model.files.paths[md.file_index[i]], mod, human_count(md.span_n[i]),
                f"{md.col(f'{prefix}_FASTEST_RANK')[i]}",
                human_seconds(md.fcol(f"{prefix}_F_FASTEST_RANK_TIME")[i]),
                human_bytes(md.pos(f"{prefix}_FASTEST_RANK_BYTES")[i]),
                f"{md.col(f'{prefix}_SLOWEST_RANK')[i]}", human_seconds(slow[i]),
                human_bytes(md.pos(f"{prefix}_SLOWEST_RANK_BYTES")[i]),
                human_seconds(float(np.sqrt(max(md.fcol(f"{prefix}_F_VARIANCE_RANK_TIME")[i],
                                                0.0)))),
                human_bytes(float(np.sqrt(max(md.fcol(f"{prefix}_F_VARIANCE_RANK_BYTES")[i],
                                              0.0))))])
    return out


def environment_rows(model: Model) -> list[list[str]]:
    """The job's configuration and environment as the log records it."""
    job = model.job
    rows = [["sources", ", ".join(job.sources)], ["kind", job.source_kind],
            ["executable", job.exe or "-"], ["processes", human_count(job.nprocs)],
            ["nodes", human_count(job.nodes) if job.nodes else "unknown"],
            ["run time", human_seconds(job.run_time_s)],
            ["format", ", ".join(job.format_versions) or "-"],
            ["MPI-IO implementation", job.mpiio_implementation or "-"]]
    for key in ("lib_ver", "jobid", "h"):
        if job.metadata.get(key):
            rows.append([f"metadata {key}", job.metadata[key]])
    used = {_mount_of(p, job.mounts) for p, app in zip(model.files.paths,
                                                       model.files.is_app()) if app}
    for point, fstype in sorted(used):
        rows.append(["file system used", f"{point} ({fstype or '?'})"])
    for path, hints in sorted(job.hints.items()):
        rows.append([f"hints {path}", "; ".join(f"{k}={v}" for k, v in sorted(hints.items()))])
    return rows
