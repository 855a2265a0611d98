"""The cross-layer view of each file: what every interface (PnetCDF/HDF5 -> MPI-IO -> POSIX,
and STDIO) moved and how long it took, derived once per model as columns indexed like
:attr:`iolab.model.columns.Columns.files`.

Rules read these columns instead of summing counters by name. Two kinds of records meet
here: a record per (file, rank), and Darshan's record reduced over all the ranks that opened
a file (rank -1), which keeps only sums plus the slowest/fastest rank's time and bytes. Where
a column can only be bounded from a reduced record, its docstring says which bound it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iolab.model.metrics import DIRECTIONS, SIZE_BINS, STACK, layer_time
from iolab.model.trace import POSIX_CODE

if TYPE_CHECKING:
    from iolab.model.columns import Columns
    from iolab.model.tables import ModuleData

# Module -> counter prefix, for the layers that carry per-file bytes, operations and times.
LAYER_PREFIX = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO"}
TIME_KINDS = ("read", "write", "meta")
MPIIO_KINDS = ("INDEP", "COLL", "SPLIT", "NB")


@dataclass
class Layer:
    """One interface's totals per file (float64 arrays; zeros where the layer is absent)."""

    module: str
    present: np.ndarray  # bool: the file has a record of this module
    bytes_read: np.ndarray
    bytes_written: np.ndarray
    reads: np.ndarray
    writes: np.ndarray
    time_s: dict[str, np.ndarray]  # read / write / meta, summed over ranks
    slowest_rank_time_s: np.ndarray  # the slowest rank's time on the file (read+write+meta)
    # Bytes of the rank that moved most: exact with per-rank records, a lower bound (the
    # larger of Darshan's slowest/fastest rank bytes) with a reduced record.
    top_rank_bytes: np.ndarray
    ranks_moving_bytes: np.ndarray  # ranks with bytes > 0 (per-rank records only; else -1)
    # Longest close (start to end of the last close); 0 when unknown or when the file was
    # opened more than once per rank (then Darshan's first-start/last-end span is no close).
    close_s: np.ndarray
    syncs: np.ndarray  # fsync/fdatasync (POSIX), MPI_File_sync, fflush (STDIO)
    opens: np.ndarray
    # Per direction: Darshan's ten request-size bins (n_files x 10; zeros for STDIO, which
    # has none), consecutive requests (POSIX), the highest byte offset touched (-1: none).
    size_hist: dict[str, np.ndarray]
    consec: dict[str, np.ndarray]
    max_byte: dict[str, np.ndarray]
    not_aligned: np.ndarray  # requests off the file alignment (POSIX)
    stats: np.ndarray  # stat/lstat/fstat calls (POSIX)
    # The fastest rank's time on the file (a reduced record's FASTEST_RANK_TIME, else the
    # least of the per-rank records): far below the slowest in a collective, one rank came
    # late and the others waited for it; close to it, every rank spent the time alike.
    fastest_rank_time_s: np.ndarray

    @property
    def bytes(self) -> np.ndarray:
        return self.bytes_read + self.bytes_written

    @property
    def time_total_s(self) -> np.ndarray:
        return self.time_s["read"] + self.time_s["write"] + self.time_s["meta"]


@dataclass
class MpiioCalls:
    """MPI-IO calls per file and direction, by kind (independent, collective, split, nb)."""

    reads: dict[str, np.ndarray]
    writes: dict[str, np.ndarray]

    def of(self, direction: str) -> dict[str, np.ndarray]:
        return self.reads if direction == "read" else self.writes

    def total(self, direction: str) -> np.ndarray:
        return np.sum(list(self.of(direction).values()), axis=0)


@dataclass
class CrossLayer:
    posix: Layer
    mpiio: Layer
    stdio: Layer
    calls: MpiioCalls
    library_bytes_written: np.ndarray  # HDF5 dataset / PnetCDF variable bytes, per file
    library: np.ndarray  # str per file: "PnetCDF", "HDF5" or ""
    library_close_s: np.ndarray  # H5Fclose / ncmpi_close duration (same rule as close_s)
    library_flushes: np.ndarray
    library_uses_mpiio: np.ndarray  # bool: HDF5 opened the file with the MPI-IO driver
    # The slowest rank's time in the library's calls on the file (H5F + H5D, PnetCDF file +
    # variables; a lower bound from reduced records, as the job's I/O time counts it)
    library_slowest_rank_time_s: np.ndarray
    # Derived once:
    write_amplification: np.ndarray  # POSIX bytes written / MPI-IO bytes written (0: n/a)
    mpi_write_only: np.ndarray  # bool: MPI-IO writes and no MPI-IO reads
    posix_reads_under_mpi_writes: np.ndarray  # POSIX reads in MPI-IO-write-only files
    posix_bytes_read_under_mpi_writes: np.ndarray
    # POSIX reads that returned no byte at all: exact when a file's reads moved 0 bytes in
    # total (all of them empty), else 0 (the counters cannot tell; a lower bound).
    zero_byte_posix_reads: np.ndarray
    posix_top_rank_share: np.ndarray  # top_rank_bytes / bytes at the POSIX layer

    def layer(self, module: str) -> Layer:
        return {"POSIX": self.posix, "MPI-IO": self.mpiio, "STDIO": self.stdio}[module]


def _zeros(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.float64)


def _per_file(md: ModuleData, vals: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(md.file_index, weights=vals.astype(np.float64), minlength=n)[:n]


def _per_file_cols(md: ModuleData, cols: list[np.ndarray], n: int) -> np.ndarray:
    """``_per_file`` of each column, as an (n, columns) array, in one bincount: each (file,
    column) bin still adds its records in record order, so the sums are the same bit for
    bit as one bincount per column (~15 a layer: issue 31)."""
    k = len(cols)
    vals = np.stack(cols, axis=1).astype(np.float64)
    rows = max(n, int(md.file_index.max()) + 1)
    flat = (md.file_index[:, None] * k + np.arange(k)).reshape(-1)
    sums = np.bincount(flat, weights=vals.reshape(-1), minlength=rows * k)
    return sums.reshape(rows, k)[:n]


def _per_file_max(md: ModuleData, vals: np.ndarray, n: int) -> np.ndarray:
    out = _zeros(n)
    np.maximum.at(out, md.file_index, vals.astype(np.float64))
    return out


def _layer(model: Columns, module: str) -> Layer:
    n = len(model.files)
    md = model.mods.get(module)
    if md is None or len(md) == 0:
        z = _zeros(n)
        zh = np.zeros((n, len(SIZE_BINS)))
        return Layer(module, np.zeros(n, dtype=bool), z, z, z, z,
                     {k: z for k in TIME_KINDS}, z, z, np.full(n, -1.0), z, z, z,
                     {d: zh for d in DIRECTIONS}, {d: z for d in DIRECTIONS},
                     {d: np.full(n, -1.0) for d in DIRECTIONS}, z, z, z)
    p = LAYER_PREFIX[module]
    present = np.zeros(n, dtype=bool)
    present[md.file_index] = True
    br, bw = md.pos(f"{p}_BYTES_READ"), md.pos(f"{p}_BYTES_WRITTEN")
    if module == "MPI-IO":
        reads = sum((md.pos(f"MPIIO_{k}_READS") for k in MPIIO_KINDS), np.zeros(len(md)))
        writes = sum((md.pos(f"MPIIO_{k}_WRITES") for k in MPIIO_KINDS), np.zeros(len(md)))
        syncs = md.pos("MPIIO_SYNCS")
        opens = md.pos("MPIIO_INDEP_OPENS") + md.pos("MPIIO_COLL_OPENS")
    else:
        reads, writes = md.pos(f"{p}_READS"), md.pos(f"{p}_WRITES")
        syncs = (md.pos("POSIX_FSYNCS") + md.pos("POSIX_FDSYNCS") if module == "POSIX"
                 else md.pos("STDIO_FLUSHES"))
        opens = posix_opens(md) if module == "POSIX" else (
            md.pos("STDIO_OPENS") + md.pos("STDIO_FDOPENS"))
    t = {k: md.fcol(f"{p}_F_{k.upper()}_TIME") for k in TIME_KINDS}
    tot = t["read"] + t["write"] + t["meta"]
    shared = md.ranks < 0
    # The slowest rank: a reduced record says it; per-rank records: the largest one (a
    # file's per-rank records are one per rank).
    slow = np.where(shared, md.fcol(f"{p}_F_SLOWEST_RANK_TIME"), tot)
    fast = np.where(shared, md.fcol(f"{p}_F_FASTEST_RANK_TIME"), tot)
    byt = br + bw
    top = np.where(shared, np.maximum(md.pos(f"{p}_SLOWEST_RANK_BYTES"),
                                      md.pos(f"{p}_FASTEST_RANK_BYTES")), byt)
    posix = module == "POSIX"
    z = np.zeros(len(md))
    summed = _per_file_cols(md, [
        (byt > 0) & ~shared, shared, br, bw, reads, writes, *t.values(), syncs, opens,
        *(md.pos(f"POSIX_CONSEC_{d.upper()}S") if posix else z for d in DIRECTIONS),
        md.pos("POSIX_FILE_NOT_ALIGNED") if posix else z,
        md.pos("POSIX_STATS") if posix else z], n).T.copy()  # a row per column
    moving, any_shared = summed[0], summed[1] > 0
    close = _close_s(md, p, opens, t["meta"], slow)
    return Layer(
        module=module, present=present,
        bytes_read=summed[2], bytes_written=summed[3],
        reads=summed[4], writes=summed[5],
        time_s={k: summed[6 + j] for j, k in enumerate(t)},
        slowest_rank_time_s=_per_file_max(md, slow, n),
        top_rank_bytes=_per_file_max(md, top, n),
        ranks_moving_bytes=np.where(any_shared, -1.0, moving),
        close_s=_per_file_max(md, close, n),
        syncs=summed[9],
        opens=summed[10],
        size_hist={d: _hist(md, module, d, n) for d in DIRECTIONS},
        consec={d: summed[11 + j] for j, d in enumerate(DIRECTIONS)},
        max_byte={d: _per_file_max_signed(md, md.col(
            f"{p}_MAX_BYTE_{'READ' if d == 'read' else 'WRITTEN'}"), n) for d in DIRECTIONS},
        not_aligned=summed[13],
        stats=summed[14],
        fastest_rank_time_s=_per_file_min(md, fast, n),
    )


def _hist(md: ModuleData, module: str, d: str, n: int) -> np.ndarray:
    """Darshan's size bins of direction ``d`` per file (MPI-IO: the aggregate sizes)."""
    out = np.zeros((n, len(SIZE_BINS)))
    if module == "STDIO":
        return out
    infix = f"SIZE_{d.upper()}_" if module == "POSIX" else f"SIZE_{d.upper()}_AGG_"
    out[:, :] = _per_file_cols(
        md, [md.pos(f"{LAYER_PREFIX[module]}_{infix}{b}") for b in SIZE_BINS], n)
    return out


def _per_file_min(md: ModuleData, vals: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, np.inf)
    np.minimum.at(out, md.file_index, vals.astype(np.float64))
    return np.where(np.isfinite(out), out, 0.0)


def _per_file_max_signed(md: ModuleData, vals: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, -1.0)
    np.maximum.at(out, md.file_index, vals.astype(np.float64))
    return out


def posix_opens(md: ModuleData) -> np.ndarray:
    """Real open()/creat() calls per POSIX record: Darshan's POSIX_OPENS also counts each
    fileno() and dup() (its header says so), and a progress log that calls fileno() before
    every fsync() is not opened 2,000 times."""
    return np.maximum(md.pos("POSIX_OPENS") - md.pos("POSIX_FILENOS") - md.pos("POSIX_DUPS"), 0)


def _close_s(md: ModuleData, prefix: str, opens: np.ndarray, meta: np.ndarray,
             slowest: np.ndarray | None = None) -> np.ndarray:
    """Per record: the close's duration when the record saw exactly one open per rank.

    The timestamps are the first close's start and the last close's end: with several opens
    (or none counted: a stream's descriptor seen only through fileno()) the span holds
    everything between the first and the last close, not one close. A reduced record's span
    also holds the ranks' skew. So the span is taken only after one real open per rank, and
    is capped by the record's metadata time (a close is metadata time) and by the slowest
    rank's time, which each bound one rank's close.
    """
    start = md.fcol(f"{prefix}_F_CLOSE_START_TIMESTAMP")
    end = md.fcol(f"{prefix}_F_CLOSE_END_TIMESTAMP")
    shared = md.ranks < 0
    once = (opens >= 1) & (opens <= np.where(shared, np.maximum(md.span_n, 1), 1))
    span = np.where(once & (start > 0) & (end >= start), end - start, 0.0)
    cap = np.where(meta > 0, meta, np.inf)  # no metadata time counted: no bound from it
    if slowest is not None:
        cap = np.where(slowest > 0, np.minimum(cap, slowest), cap)
    return np.minimum(span, cap)


def _library(model: Columns, n: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    lib = np.full(n, "", dtype=object)
    written, close, flushes = _zeros(n), _zeros(n), _zeros(n)
    use_mpi = np.zeros(n, dtype=bool)
    for mod, prefix, name in (("H5F", "H5F", "HDF5"), ("PNETCDF_FILE", "PNETCDF_FILE",
                                                         "PnetCDF")):
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        lib[md.file_index] = name
        opens = md.pos("H5F_OPENS") if mod == "H5F" else (
            md.pos("PNETCDF_FILE_CREATES") + md.pos("PNETCDF_FILE_OPENS"))
        meta = md.fcol(f"{prefix}_F_META_TIME")
        close = np.maximum(close, _per_file_max(md, _close_s(md, prefix, opens, meta), n))
        flushes += _per_file(md, md.pos("H5F_FLUSHES") if mod == "H5F"
                             else md.pos("PNETCDF_FILE_SYNCS"), n)
        if mod == "H5F":
            use_mpi |= _per_file(md, md.pos("H5F_USE_MPIIO"), n) > 0
    # The data the program handed the library: its datasets' / variables' bytes, per file
    # (records named "<file>:<dataset>"), else PnetCDF's per-file total.
    for mod, prefix in (("H5D", "H5D"), ("PNETCDF_VAR", "PNETCDF_VAR")):
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        known = md.file_index >= 0
        written += np.bincount(md.file_index[known], weights=md.pos(
            f"{prefix}_BYTES_WRITTEN")[known].astype(np.float64), minlength=n)[:n]
    md = model.mods.get("PNETCDF_FILE")
    if md is not None and len(md):
        pfile = _per_file(md, md.pos("PNETCDF_FILE_BYTES_WRITTEN"), n)
        written = np.where(written > 0, written, pfile)
    return written, lib, close, flushes, use_mpi


def derive_layers(model: Columns) -> CrossLayer:
    n = len(model.files)
    posix, mpiio, stdio = (_layer(model, m) for m in ("POSIX", "MPI-IO", "STDIO"))
    md = model.mods.get("MPI-IO")
    if md is not None and len(md):  # the eight counters per file in one bincount
        per = _per_file_cols(md, [md.pos(f"MPIIO_{k}_{d}") for d in ("READS", "WRITES")
                                  for k in MPIIO_KINDS], n).T.copy()
        nk = len(MPIIO_KINDS)
        calls = MpiioCalls(reads=dict(zip(MPIIO_KINDS, per[:nk])),
                           writes=dict(zip(MPIIO_KINDS, per[nk:])))
    else:
        calls = MpiioCalls(reads={k: _zeros(n) for k in MPIIO_KINDS},
                           writes={k: _zeros(n) for k in MPIIO_KINDS})
    _exact_rank_bytes(model, posix)
    lib_w, lib, lib_close, lib_flush, lib_mpi = _library(model, n)
    lib_t = np.max([layer_time(model, mods).slowest(n) for name, mods in STACK
                    if name in ("HDF5", "PnetCDF")], axis=0)
    amp = np.divide(posix.bytes_written, mpiio.bytes_written, out=_zeros(n),
                    where=mpiio.bytes_written > 0)
    wonly = mpiio.present & (mpiio.writes > 0) & (mpiio.reads == 0)
    zero_reads = np.where((posix.reads > 0) & (posix.bytes_read == 0), posix.reads, 0.0)
    share = np.divide(posix.top_rank_bytes, posix.bytes, out=_zeros(n), where=posix.bytes > 0)
    return CrossLayer(
        posix=posix, mpiio=mpiio, stdio=stdio, calls=calls,
        library_bytes_written=lib_w, library=lib, library_close_s=lib_close,
        library_flushes=lib_flush, library_uses_mpiio=lib_mpi,
        library_slowest_rank_time_s=lib_t, write_amplification=amp,
        mpi_write_only=wonly,
        posix_reads_under_mpi_writes=np.where(wonly, posix.reads, 0.0),
        posix_bytes_read_under_mpi_writes=np.where(wonly, posix.bytes_read, 0.0),
        zero_byte_posix_reads=zero_reads, posix_top_rank_share=np.minimum(share, 1.0),
    )


def _exact_rank_bytes(model: Columns, posix: Layer) -> None:
    """Where the trace (DXT, iolab --trace) holds every POSIX byte of a file, the bytes of
    each rank are known exactly even under a reduced record: take the top rank's bytes and
    the number of ranks moving bytes from it."""
    tr = model.trace
    if tr is None or len(tr) == 0 or tr.partial_reasons:
        return
    rows = tr.module == POSIX_CODE
    if not rows.any():
        return
    n = len(model.files)
    f, r, b = tr.file_index[rows], tr.rank[rows], tr.length[rows].astype(np.float64)
    key = f.astype(np.int64) * (int(r.max()) + 1) + r
    uk, inv = np.unique(key, return_inverse=True)
    per = np.bincount(inv, weights=b)
    uf = uk // (int(r.max()) + 1)
    total = np.bincount(uf, weights=per, minlength=n)[:n]
    top = np.zeros(n)
    np.maximum.at(top, uf, per)
    moving = np.bincount(uf, weights=(per > 0).astype(np.float64), minlength=n)[:n]
    covered = (total > 0) & (total == posix.bytes)
    posix.top_rank_bytes = np.where(covered, top, posix.top_rank_bytes)
    posix.ranks_moving_bytes = np.where(covered, moving, posix.ranks_moving_bytes)


def slowest_rank_time(model: Columns, module: str, kinds: tuple[str, ...],
                      files: np.ndarray) -> float:
    """The slowest rank's time in ``kinds`` (read/write/meta) of ``module`` over the files
    selected by the boolean mask ``files``: what a fix of those operations can save at most.

    Per-rank records add up per rank (exact). A reduced record adds its slowest rank's time,
    scaled to the kinds asked for: a bound, since the slowest rank of each file may differ.
    """
    md = model.mods.get(module)
    p = LAYER_PREFIX.get(module)
    if md is None or len(md) == 0 or p is None or not files.any():
        return 0.0
    sel = files[md.file_index]
    t = {k: md.fcol(f"{p}_F_{k.upper()}_TIME") for k in TIME_KINDS}
    want = sum((t[k] for k in kinds), np.zeros(len(md)))
    tot = t["read"] + t["write"] + t["meta"]
    own = sel & (md.ranks >= 0)
    per_rank = np.zeros(max(model.job.nprocs, 1))
    np.add.at(per_rank, np.minimum(np.maximum(md.ranks[own], 0), per_rank.size - 1), want[own])
    sh = sel & (md.ranks < 0)
    frac = np.divide(want, tot, out=np.zeros(len(md)), where=tot > 0)
    slow = md.fcol(f"{p}_F_SLOWEST_RANK_TIME")
    # A reduced record without a slowest-rank time (old formats) spreads its sum evenly.
    shared_t = np.where(slow > 0, slow * frac, want / np.maximum(md.span_n, 1))
    return float(per_rank.max()) + float(shared_t[sh].sum())
