"""Derived metrics, computed once per model (the only place they are computed).

Conventions: application files only unless a name says otherwise; bytes in bytes, times in
seconds; ``read``/``write`` keys give a direction. Darshan's cumulative times of a record
reduced over ranks (rank -1) are sums over those ranks.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING

import numpy as np

from iolab.model.files import APP, CATEGORY_NAMES
from iolab.model.tables import unique_rows, unique_values
from iolab.model.trace import TraceMetrics, derive_trace
from iolab.model.workflow import log_io_times, workflow_io_time

if TYPE_CHECKING:
    from iolab.model.columns import Columns
    from iolab.model.tables import ModuleData

DIRECTIONS = ("read", "write")
SIZE_BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
             "10M_100M", "100M_1G", "1G_PLUS")
SMALL_BINS = 5  # bins up to 1 MiB (Darshan's bins include their upper edge)
# Upper edge of each bin, in bytes (the last one open).
BIN_UPPER = (100, 1024, 10 * 1024, 100 * 1024, 1 << 20, 4 << 20, 10 << 20, 100 << 20,
             1 << 30, 1 << 62)
# Module -> (counter prefix, histogram infix, label shown to users)
INTERFACES = {
    "POSIX": ("POSIX", "SIZE_{D}_", "POSIX"),
    "MPI-IO": ("MPIIO", "SIZE_{D}_AGG_", "MPI-IO"),
    "STDIO": ("STDIO", "", "STDIO"),
    "H5D": ("H5D", "SIZE_{D}_AGG_", "HDF5"),
    "PNETCDF_VAR": ("PNETCDF_VAR", "SIZE_{D}_AGG_", "PnetCDF"),
}


@dataclass
class Iface:
    """Totals of one interface over application files."""

    name: str
    bytes: dict[str, int]
    ops: dict[str, int]
    time_s: dict[str, float]  # read, write, meta (cumulative over ranks)
    opens: int
    files: int
    hist: dict[str, list[int]] = field(default_factory=dict)  # empty when the module has none

    @property
    def total_bytes(self) -> int:
        return self.bytes["read"] + self.bytes["write"]


@dataclass
class Access:
    """POSIX access pattern of one direction (application files)."""

    ops: int
    consec: int
    seq: int
    backward: int  # accesses at a lower offset than the previous one (first access excluded)
    random_est: int  # 2 x backward: a random access goes backward half of the time
    rereads: int = 0  # requests of records whose every request covered the whole extent

    @property
    def random_share(self) -> float:
        return self.random_est / self.ops if self.ops else 0.0


@dataclass
class Metrics:
    run_time_s: float
    io_time_s: float  # slowest rank's estimated I/O time (read + write + metadata)
    io_fraction: float
    io_time_by_kind_s: dict[str, float]  # read / write / meta, cumulative over ranks
    rank_io_time_s: np.ndarray  # per rank (reduced records spread over their ranks)
    rank_bytes: np.ndarray
    ifaces: dict[str, Iface]
    access: dict[str, Access]
    mem_not_aligned: int
    file_not_aligned: int
    posix_ops: int
    file_alignment: int
    mem_alignment: int
    meta_time_s: float  # cumulative over ranks
    meta_fraction: float  # of the I/O time
    files_by_category: dict[str, int]
    app_files: int
    shared_files: int
    per_rank_files: int
    files_per_dir: dict[str, int]
    top_layer: str  # the interface the application called: HDF5, PnetCDF, MPI-IO, POSIX, STDIO
    total_bytes: int
    bytes_by_dir: dict[str, int]
    trace: TraceMetrics | None = None  # exact values from a trace (DXT, iolab --trace)
    # each file's name before its last "/" (model.files' order): made once, for the counts
    # above and the directory rule (a second split of 64,000 names cost 40 ms)
    file_dirs: list[str] = field(default_factory=list)


def _sum(a: np.ndarray, mask: np.ndarray) -> int:
    return int(a[mask].sum()) if a.size else 0


def _iface(model: Columns, mod: str) -> Iface | None:
    md = model.mods.get(mod)
    if md is None or len(md) == 0:
        return None
    prefix, hist_fmt, label = INTERFACES[mod]
    m = model.app_mask(md)
    s = md.pos_sums(_iface_counters(mod), m)  # every integer total below, in one call
    b = {"read": s[f"{prefix}_BYTES_READ"], "write": s[f"{prefix}_BYTES_WRITTEN"]}
    if mod == "MPI-IO":
        ops = {d: sum(s[f"MPIIO_{k}_{d.upper()}S"] for k in ("INDEP", "COLL", "SPLIT", "NB"))
               for d in DIRECTIONS}
        opens = s["MPIIO_INDEP_OPENS"] + s["MPIIO_COLL_OPENS"]
    elif mod == "PNETCDF_VAR":
        ops = {d: sum(s[f"PNETCDF_VAR_{k}_{d.upper()}S"] for k in ("INDEP", "COLL", "NB"))
               for d in DIRECTIONS}
        opens = s["PNETCDF_VAR_OPENS"]
    else:
        ops = {d: s[f"{prefix}_{d.upper()}S"] for d in DIRECTIONS}
        if mod == "POSIX":
            # cycle: model.layers imports this module at its top
            from iolab.model.layers import posix_opens

            opens = _sum(posix_opens(md), m)
        else:
            opens = s[f"{prefix}_OPENS"] + s[f"{prefix}_FDOPENS"]
    t = {"read": float(md.fcol(f"{prefix}_F_READ_TIME")[m].sum()),
         "write": float(md.fcol(f"{prefix}_F_WRITE_TIME")[m].sum()),
         "meta": float(md.fcol(f"{prefix}_F_META_TIME")[m].sum())}
    hist: dict[str, list[int]] = {}
    if hist_fmt:
        for d in DIRECTIONS:
            inf = hist_fmt.format(D=d.upper())
            hist[d] = [s[f"{prefix}_{inf}{b_}"] for b_ in SIZE_BINS]
        if mod == "POSIX":
            for d in DIRECTIONS:
                hist[d + "_exact_1mib"] = [_sum(exact_mib_requests(md, d), m)]
    nfiles = int(unique_values(md.ids[m]).size)
    return Iface(name=label, bytes=b, ops=ops, time_s=t, opens=opens, files=nfiles, hist=hist)


@functools.cache
def _iface_counters(mod: str) -> list[str]:
    """The integer counters _iface totals for module ``mod``."""
    prefix, hist_fmt, _ = INTERFACES[mod]
    names = [f"{prefix}_BYTES_READ", f"{prefix}_BYTES_WRITTEN"]
    kinds = {"MPI-IO": ("INDEP", "COLL", "SPLIT", "NB"), "PNETCDF_VAR": ("INDEP", "COLL", "NB")}
    for d in DIRECTIONS:
        names += [f"{prefix}_{k}_{d.upper()}S" for k in kinds.get(mod, ())]
        names.append(f"{prefix}_{d.upper()}S")
        if hist_fmt:
            inf = hist_fmt.format(D=d.upper())
            names += [f"{prefix}_{inf}{b_}" for b_ in SIZE_BINS]
    return names + [f"{prefix}_{k}" for k in ("OPENS", "FDOPENS", "INDEP_OPENS", "COLL_OPENS")]


def kind_times(md: ModuleData, prefix: str) -> np.ndarray:
    """Per record: its read, write and metadata seconds (columns in ``KINDS`` order).

    PnetCDF's non-blocking calls (iput, iget, bput) only post their requests: the data moves
    in ncmpi_wait/ncmpi_wait_all, which PNETCDF_FILE_F_WAIT_TIME holds, so a job writing
    through iput showed half its PnetCDF time. The record does not say which way a wait moved
    data: it is shared out by the bytes the file read and wrote (all of it to writes when
    PnetCDF could not tell its bytes).
    """
    t = np.stack([md.fcol(f"{prefix}_F_{k.upper()}_TIME") for k in KINDS], axis=1)
    if prefix == "PNETCDF_FILE":
        wait = md.fcol("PNETCDF_FILE_F_WAIT_TIME")
        rd = md.pos("PNETCDF_FILE_BYTES_READ").astype(np.float64)
        wr = md.pos("PNETCDF_FILE_BYTES_WRITTEN").astype(np.float64)
        read_share = np.divide(rd, rd + wr, out=np.zeros(len(md)), where=(rd + wr) > 0)
        t[:, 0] += wait * read_share
        t[:, 1] += wait * (1.0 - read_share)
    return t


def _library_file_time(model: Columns, ifaces: dict[str, Iface]) -> None:
    """HDF5's and PnetCDF's file calls (open, close, flush: H5F, PNETCDF_FILE) are their
    layer's metadata time too: a slow H5Fclose is HDF5 time even in a job with no dataset
    (its groups' metadata flushed at the close), the time the job's I/O share counts."""
    for mod, prefix, label in (("H5F", "H5F", "HDF5"), ("PNETCDF_FILE", "PNETCDF_FILE",
                                                        "PnetCDF")):
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        m = model.app_mask(md)
        if not m.any():
            continue
        spent = kind_times(md, prefix)[m].sum(axis=0)  # PnetCDF's waits are data time
        f = ifaces.get(label)
        if f is None:
            opens = _sum(md.pos("H5F_OPENS") if mod == "H5F" else
                         md.pos("PNETCDF_FILE_CREATES") + md.pos("PNETCDF_FILE_OPENS"), m)
            f = ifaces[label] = Iface(name=label, bytes={"read": 0, "write": 0},
                                      ops={"read": 0, "write": 0},
                                      time_s={"read": 0.0, "write": 0.0, "meta": 0.0},
                                      opens=opens, files=int(unique_values(md.ids[m]).size))
        for j, k in enumerate(KINDS):
            f.time_s[k] += float(spent[j])


def exact_mib_requests(md: ModuleData, d: str) -> np.ndarray:
    """Per POSIX record: requests of exactly 1 MiB in direction ``d``.

    Darshan's 100K_1M bin includes 1 MiB itself (``size <= 1048576``), so counting the bin as
    "small" calls a program writing 1 MiB blocks small (a Drishti false positive). The four
    common access sizes tell how many requests were exactly 1 MiB; they mix reads and writes,
    so they are shared out in proportion to each direction's 100K_1M bin.
    """
    exact = np.zeros(len(md), dtype=np.int64)
    for k in range(1, 5):
        exact += np.where(md.col(f"POSIX_ACCESS{k}_ACCESS") == 1 << 20,
                          md.pos(f"POSIX_ACCESS{k}_COUNT"), 0)
    r = md.pos("POSIX_SIZE_READ_100K_1M")
    w = md.pos("POSIX_SIZE_WRITE_100K_1M")
    mine = r if d == "read" else w
    share = np.divide(mine, r + w, out=np.zeros(len(md)), where=(r + w) > 0)
    return np.minimum(mine, np.rint(exact * share).astype(np.int64))


def _access(md: ModuleData, m: np.ndarray) -> dict[str, Access]:
    out = {}
    for d in DIRECTIONS:
        ops = md.pos(f"POSIX_{d.upper()}S")[m]
        seq = md.pos(f"POSIX_SEQ_{d.upper()}S")[m]
        consec = md.pos(f"POSIX_CONSEC_{d.upper()}S")[m]
        # The first access of each record is neither sequential nor consecutive when it is at
        # offset 0; it is not a backward seek either.
        back = np.maximum(ops - seq - (ops > 0), 0)
        rnd = np.minimum(2 * back, np.maximum(ops - consec, 0))
        # A record whose bytes are ops x its extent read (wrote) the whole extent each time,
        # all from the same offset: re-reads, not random access (1,000,000 reads of byte 0
        # in partial_data_dxt looked 100% random).
        byt = md.pos(f"POSIX_BYTES_{'READ' if d == 'read' else 'WRITTEN'}")[m]
        ext = md.col(f"POSIX_MAX_BYTE_{'READ' if d == 'read' else 'WRITTEN'}")[m] + 1
        same_spot = (ops > 1) & (ext > 0) & (byt == ops * ext)
        rnd = np.where(same_spot, 0, rnd)
        out[d] = Access(ops=int(ops.sum()), consec=int(consec.sum()), seq=int(seq.sum()),
                        backward=int(back.sum()), random_est=int(rnd.sum()),
                        rereads=int(ops[same_spot].sum()))
    return out


def _top_layer(model: Columns) -> str:
    for mod, label in (("H5D", "HDF5"), ("H5F", "HDF5"), ("PNETCDF_VAR", "PnetCDF"),
                       ("PNETCDF_FILE", "PnetCDF"), ("MPI-IO", "MPI-IO"), ("POSIX", "POSIX"),
                       ("STDIO", "STDIO")):
        md = model.mods.get(mod)
        if md is not None and len(md) and model.app_mask(md).any():
            return label
    return "none"


def _rank_spread(nprocs: int, md: ModuleData, m: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-rank sums of ``values``; a reduced record's value is spread over its ranks."""
    out = np.zeros(nprocs, dtype=np.float64)
    own = m & (md.ranks >= 0)
    np.add.at(out, np.minimum(np.maximum(md.ranks[own], 0), nprocs - 1), values[own])
    reduced = np.nonzero(m & (md.ranks < 0))[0]
    if len(reduced) and not _spread_one_span(out, md, reduced, values):
        for i in reduced:
            lo, n = int(md.span_lo[i]), max(int(md.span_n[i]), 1)
            out[lo:lo + n] += values[i] / n
    return out


def _spread_one_span(out: np.ndarray, md: ModuleData, reduced: np.ndarray,
                     values: np.ndarray) -> bool:
    """The reduced records of one log all cover the same ranks: each rank adds the same
    shares in record order, so the ranks starting from the same value (by its bits) end
    on the same one, added up once in Python floats (IEEE doubles, as numpy's) instead of
    one numpy slice per record (thousands on a log of shared files: issue 31). False (and
    nothing done) when the records span several logs or the ranks start from many values."""
    lo, n = md.span_lo[reduced], np.maximum(md.span_n[reduced], 1)
    if not ((lo == lo[0]).all() and (n == n[0]).all()):
        return False
    first, count = int(lo[0]), int(n[0])
    ranks = out[first:first + count]
    starts, which = np.unique(ranks.view(np.int64), return_inverse=True)
    if len(starts) > 8:
        return False
    shares = (values[reduced] / count).tolist()
    ends = []
    for start in starts.view(np.float64).tolist():
        for share in shares:
            start += share
        ends.append(start)
    out[first:first + count] = np.array(ends, dtype=np.float64)[which.reshape(-1)]
    return True


# The layers of a file's stack, top first: a call of an upper layer holds the calls it makes
# to the layers below (H5Dwrite -> MPI_File_write_at_all -> pwrite), so one file's time is
# counted at one layer. STDIO calls are not made through POSIX's wrappers: they add up.
STACK = (("HDF5", (("H5F", "H5F"), ("H5D", "H5D"))),
         ("PnetCDF", (("PNETCDF_FILE", "PNETCDF_FILE"), ("PNETCDF_VAR", "PNETCDF_VAR"))),
         ("MPI-IO", (("MPI-IO", "MPIIO"),)),
         ("POSIX", (("POSIX", "POSIX"),)))
KINDS = ("read", "write", "meta")


@dataclass
class _LayerTime:
    """One layer's time per file: what each rank spent (per-rank records) and, per log, the
    slowest rank's (records reduced over the ranks of that log)."""

    own: np.ndarray  # (file, rank, seconds) rows, one per (file, rank)
    reduced: np.ndarray  # (file, first rank, ranks, slowest rank's seconds) rows
    kinds: np.ndarray  # files x (read, write, meta), summed over ranks

    def slowest(self, n_files: int) -> np.ndarray:
        out = np.zeros(n_files)
        for rows in (self.own, self.reduced):
            if len(rows):
                np.maximum.at(out, rows[:, 0].astype(np.int64), rows[:, -1])
        return out


def _group_sum(keys: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique rows of ``keys`` and the sum of ``vals`` over each."""
    if not len(keys):
        return keys, vals
    uk, inv = unique_rows(keys, return_inverse=True)
    return uk, np.bincount(inv.reshape(-1), weights=vals, minlength=len(uk))


def layer_time(model: Columns, mods: tuple[tuple[str, str], ...]) -> _LayerTime:
    """The time of one layer (one or more Darshan modules) per file and rank, computed once
    per job (its arrays read-only: shared by every caller).

    A reduced record keeps its slowest rank's time; a layer with several reduced records per
    file (HDF5's file and datasets, PnetCDF's variables) gives the slowest rank at least the
    largest of those and at least the mean rank's total (a lower bound: the slowest ranks
    may differ from record to record). A record without a slowest-rank time (H5F,
    PNETCDF_FILE) counts its mean rank's.
    """
    key = ("layer_time", mods)
    got = model.memo.get(key)
    if got is None:
        got = model.memo[key] = _layer_time(model, mods)
        for a in (got.own, got.reduced, got.kinds):
            a.flags.writeable = False
    return got


def _layer_time(model: Columns, mods: tuple[tuple[str, str], ...]) -> _LayerTime:
    nf = len(model.files)
    own_k, own_v, red_k, red_sum, red_slow = [], [], [], [], []
    kinds = np.zeros((nf, len(KINDS)))
    for mod, prefix in mods:
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        m = model.app_mask(md) & (md.file_index >= 0)
        t = kind_times(md, prefix)
        for j in range(len(KINDS)):
            kinds[:, j] += np.bincount(md.file_index[m], weights=t[m, j], minlength=nf)[:nf]
        tot = t.sum(axis=1)
        o = m & (md.ranks >= 0)
        own_k.append(np.stack([md.file_index[o], md.ranks[o]], axis=1))
        own_v.append(tot[o])
        r = m & (md.ranks < 0)
        red_k.append(np.stack([md.file_index[r], md.span_lo[r],
                               np.maximum(md.span_n[r], 1)], axis=1))
        red_sum.append(tot[r])
        red_slow.append(md.fcol(f"{prefix}_F_SLOWEST_RANK_TIME")[r])
    if not own_k:
        return _LayerTime(np.zeros((0, 3)), np.zeros((0, 4)), kinds)
    ok, ov = _group_sum(np.concatenate(own_k).astype(np.int64), np.concatenate(own_v))
    rk = np.concatenate(red_k).astype(np.int64)
    rk_u, rsum = _group_sum(rk, np.concatenate(red_sum))
    rslow = np.zeros(len(rk_u))
    if len(rk):
        inv = unique_rows(rk, return_inverse=True)[1]
        np.maximum.at(rslow, inv, np.concatenate(red_slow))
    red = np.maximum(rslow, rsum / np.maximum(rk_u[:, 2], 1)) if len(rk_u) else rsum
    return _LayerTime(np.column_stack([ok, ov]) if len(ok) else np.zeros((0, 3)),
                      np.column_stack([rk_u, red]) if len(rk_u) else np.zeros((0, 4)), kinds)


def _rank_io(model: Columns) -> tuple[np.ndarray, np.ndarray, float, dict[str, float]]:
    """Per-rank I/O time and bytes, the slowest rank's I/O time, and the time by kind.

    Each file's time is counted once, at the layer of its stack (HDF5 / PnetCDF, MPI-IO,
    POSIX) where its slowest rank spent the most: a file written through HDF5 shows the same
    wait in its H5F/H5D, MPI-IO and POSIX records, and the top layer's holds the others
    (an HDF5 metadata flush in H5Fclose is HDF5 time that MPI-IO sees only in part); a layer
    below can hold calls the top layer's counters miss (HDF5 metadata written while creating
    groups), hence the largest rather than always the top. STDIO adds to it.
    """
    n = max(model.job.nprocs, 1)
    nf = len(model.files)
    t = np.zeros(n)
    b = np.zeros(n)
    kinds = {"read": 0.0, "write": 0.0, "meta": 0.0}
    stack = [layer_time(model, mods) for _, mods in STACK]
    slowest = np.vstack([lt.slowest(nf) for lt in stack]) if nf else np.zeros((len(stack), 0))
    chosen = np.argmax(slowest, axis=0) if nf else np.zeros(0, dtype=np.int64)  # ties: top
    layers = [(lt, chosen == j) for j, lt in enumerate(stack)]
    layers.append((layer_time(model, (("STDIO", "STDIO"),)), np.ones(nf, dtype=bool)))
    shared = np.zeros(n)  # per rank: the slowest-rank time of the shared files of its log
    for lt, mine in layers:
        if not len(lt.own) and not len(lt.reduced):
            continue  # a layer the job did not use (its kinds are zeros): nothing to add
        if len(lt.own):
            f, r = lt.own[:, 0].astype(np.int64), lt.own[:, 1].astype(np.int64)
            np.add.at(t, np.minimum(np.maximum(r[mine[f]], 0), n - 1), lt.own[mine[f], 2])
        red = lt.reduced[mine[lt.reduced[:, 0].astype(np.int64)]]
        spans, v = _group_sum(red[:, 1:3].astype(np.int64), red[:, 3])  # one per log
        for (lo, k), s in zip(spans.tolist(), v.tolist()):
            shared[max(lo, 0):lo + k] += s  # every rank of that log took part
        for j, k in enumerate(KINDS):
            kinds[k] += float(lt.kinds[mine, j].sum())
    mpi_files = set()
    mp = model.mods.get("MPI-IO")
    if mp is not None:
        mpi_files = set(mp.file_index[model.app_mask(mp)].tolist())
    for mod, prefix in (("MPI-IO", "MPIIO"), ("POSIX", "POSIX"), ("STDIO", "STDIO")):
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        m = model.app_mask(md)
        if mod == "POSIX" and mpi_files:
            m = m & ~np.isin(md.file_index, list(mpi_files))
        byt = md.pos(f"{prefix}_BYTES_READ") + md.pos(f"{prefix}_BYTES_WRITTEN")
        b += _rank_spread(n, md, m, byt.astype(np.float64))
    rank_t = t + shared
    logs = model.job.logs
    if len(logs) > 1:  # a workflow: logs one after another add up, overlapping ones do not
        return rank_t, b, workflow_io_time(logs, log_io_times(logs, rank_t)), kinds
    return rank_t, b, float(rank_t.max() if rank_t.size else 0.0), kinds


def derive(model: Columns) -> Metrics:
    job = model.job
    ifaces = {}
    for mod in INTERFACES:
        f = _iface(model, mod)
        if f is not None:
            ifaces[f.name] = f
    _library_file_time(model, ifaces)
    px = model.mods.get("POSIX")
    if px is not None and len(px):
        pm = model.app_mask(px)
        access = _access(px, pm)
        mem_na, file_na = _sum(px.pos("POSIX_MEM_NOT_ALIGNED"), pm), _sum(
            px.pos("POSIX_FILE_NOT_ALIGNED"), pm)
        pops = _sum(px.pos("POSIX_READS") + px.pos("POSIX_WRITES"), pm)
        fal = px.pos("POSIX_FILE_ALIGNMENT")[pm]
        mal = px.pos("POSIX_MEM_ALIGNMENT")[pm]
        file_al = int(np.bincount(fal).argmax()) if fal.size and fal.max() < 1 << 24 else 0
        mem_al = int(np.bincount(mal).argmax()) if mal.size and mal.max() < 1 << 24 else 0
    else:
        access = {d: Access(0, 0, 0, 0, 0) for d in DIRECTIONS}
        mem_na = file_na = pops = file_al = mem_al = 0
    rank_t, rank_b, slowest, kinds = _rank_io(model)
    run = job.run_time_s
    files = model.files
    app = files.category == APP
    file_dirs = [p.rsplit("/", 1)[0] for p in files.paths]
    # counted in C, in the order the directories first appear (a 64,000-file log); a file
    # at the root ("/x": "") counts for "/", where it first appears
    dirs = dict(Counter(compress(file_dirs, app.tolist())))
    if "" in dirs:
        dirs = dict(Counter(d or "/" for d in compress(file_dirs, app.tolist())))
    by_cat = {name: int((files.category == c).sum()) for c, name in CATEGORY_NAMES.items()}
    low = ifaces.get("POSIX")
    std = ifaces.get("STDIO")
    bytes_dir = {d: (low.bytes[d] if low else 0) + (std.bytes[d] if std else 0)
                 for d in DIRECTIONS}
    io_total = sum(kinds.values())
    return Metrics(
        run_time_s=run,
        io_time_s=slowest,
        io_fraction=min(slowest / run, 1.0) if run > 0 else 0.0,
        io_time_by_kind_s=kinds,
        rank_io_time_s=rank_t,
        rank_bytes=rank_b,
        ifaces=ifaces,
        access=access,
        mem_not_aligned=mem_na,
        file_not_aligned=file_na,
        posix_ops=pops,
        file_alignment=file_al,
        mem_alignment=mem_al,
        meta_time_s=kinds["meta"],
        meta_fraction=kinds["meta"] / io_total if io_total > 0 else 0.0,
        files_by_category=by_cat,
        app_files=int(app.sum()),
        shared_files=int((app & (files.nranks > 1)).sum()),
        per_rank_files=int((app & (files.nranks == 1)).sum()),
        files_per_dir=dirs,
        top_layer=_top_layer(model),
        total_bytes=sum(bytes_dir.values()),
        bytes_by_dir=bytes_dir,
        trace=derive_trace(model, model.trace) if model.trace is not None else None,
        file_dirs=file_dirs,
    )
