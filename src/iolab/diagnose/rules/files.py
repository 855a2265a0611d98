"""Rules on files and ranks: file per process, files per directory, opens, small shared
inputs read by every rank, stragglers on shared files, imbalance among per-rank files."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose import fixes, fixes_lustre
from iolab.diagnose.rules.base import (
    CSC_LUSTRE,
    DRISHTI,
    KAUST,
    FileEvidence,
    Fix,
    Hit,
    Rule,
    Source,
    fmt_bytes,
    pct,
)
from iolab.diagnose.rules.common import (
    claims_of,
    cost,
    costliest,
    file_rows,
    file_time,
    mpi_files,
    needs_complete,
    needs_real_names,
    rank_worlds,
    ranks_in_one_world,
    worst,
)
from iolab.diagnose.rules.time_skew import waiting_files
from iolab.model.files import APP
from iolab.model.raw import TRACE_MODULES
from iolab.model.tables import unique_values
from iolab.model.trace import MPIIO_CODE
from iolab.settings.change import CodeChange

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model


def _fpp(model: Model, th: Thresholds) -> list[Hit]:
    m = model.metrics
    n = model.job.nprocs
    if n < 2 or m.per_rank_files < th.fpp_min_files:
        return []
    firsts = model.files.ranks_first[(model.files.category == APP) & (model.files.nranks == 1)]
    writers = int(unique_values(firsts[firsts >= 0]).size)  # one rank per file: 64,000
    if writers < max(2, n // 2):
        return []
    return [Hit(
        summary=(f"{m.per_rank_files} application files each opened by one rank, from "
                 f"{writers} of {n} ranks: file per process at scale"),
        values={"per_rank_files": m.per_rank_files, "ranks_with_own_files": writers,
                "nprocs": n, "shared_files": m.shared_files},
        cost_s=cost(model, (model.files.category == APP) & (model.files.nranks == 1),
                    ("meta",)),
    )]


def _fpp_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    files = model.files
    own = [p for p, c, n in zip(files.paths, files.category, files.nranks)
           if c == APP and n == 1]  # the per-process files: their layer picks the calls
    return Fix(
        text=("Write one shared file with collective MPI-IO (or HDF5/PnetCDF), or a file per "
              "group of ranks (subset aggregation), instead of one file per process."),
        artifacts=fixes.collective_code(model, own))


def _per_dir(model: Model, th: Thresholds) -> list[Hit]:
    dirs = model.metrics.files_per_dir
    big = sorted(((n, d) for d, n in dirs.items() if n >= th.files_per_dir), reverse=True)
    if not big:
        return []
    big_dirs = {d for _, d in big}
    in_big = np.fromiter(map(big_dirs.__contains__, model.metrics.file_dirs), dtype=bool,
                         count=len(model.files.paths))
    return [Hit(
        summary=(f"{len(big)} director{'y' if len(big) == 1 else 'ies'} with at least "
                 f"{th.files_per_dir} files; the largest holds {big[0][0]}"),
        values={"directories": len(big), "max_files_in_one_dir": big[0][0]},
        files=[FileEvidence(d, {"files": n}) for n, d in big[:10]],
        data={"dirs": [d for _, d in big]},
        cost_s=cost(model, in_big, ("meta",)),
        claims=claims_of(model, in_big, "meta"),
    )]


def _per_dir_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    dirs = hit.data.get("dirs", [])
    lfs = fixes_lustre.lfs_new_dirs(model, dirs, 1 << 20, "small_files_dirs.lfs.sh")
    return Fix(
        text=("Spread files over sub-directories (e.g. one per 1000 files or per rank group)"
              # Lustre only: elsewhere a stripe count means nothing
              + ("; set the stripe count of directories holding many small files to 1 "
                 "(KAUST)." if lfs else ".")),
        artifacts=lfs)


def _opens(model: Model, th: Thresholds) -> list[Hit]:
    files = model.files
    L = model.layers
    opens = L.posix.opens + L.stdio.opens
    app = files.category == APP
    per_rank = np.divide(opens, np.maximum(files.nranks, 1))
    sel = app & (per_rank >= th.opens_per_file)
    total = int(opens[sel].sum())
    if total < th.opens_min_total:
        return []
    idx = np.nonzero(sel)[0]
    return [Hit(
        summary=(f"{total} opens on {len(idx)} file(s), up to {per_rank[idx].max():.0f} per "
                 f"rank on one file"),
        values={"opens": total, "files": int(len(idx)),
                "max_opens_per_rank": round(float(per_rank[idx].max()), 1)},
        files=file_rows(model, costliest(model, sel, opens, ("meta",)),
                        {"opens": opens.astype(np.int64), "ranks": files.nranks,
                         "meta_time_s": np.round(file_time(model, ("meta",)), 3)}),
        cost_s=cost(model, sel, ("meta",)),
        claims=claims_of(model, sel, "meta"),
    )]


def _opens_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text="Open each file once, keep the handle, and close it at the end.",
               artifacts=fixes.snippets("fewer_opens"))


def _bcast(model: Model, th: Thresholds) -> list[Hit]:
    files = model.files
    L = model.layers
    read = L.posix.bytes_read + L.stdio.bytes_read
    written = L.posix.bytes_written + L.stdio.bytes_written
    size = np.maximum(L.posix.max_byte["read"], L.stdio.max_byte["read"]) + 1
    mpi = mpi_files(model)
    need = max(th.bcast_min_ranks, 2)
    ranks = ranks_in_one_world(model)  # a broadcast reaches the ranks of one MPI world
    sel = ((files.category == APP) & (ranks >= need) & (read > 0) & (written == 0)
           & (size > 0) & (size <= th.bcast_max_bytes) & ~mpi)
    if not sel.any():
        return []
    idx = np.nonzero(sel)[0]
    return [Hit(
        summary=(f"{len(idx)} small input file(s) read by up to {int(ranks[idx].max())} "
                 f"ranks each ({fmt_bytes(read[idx].sum())} read in total)"),
        values={"files": int(len(idx)), "max_ranks": int(ranks[idx].max()),
                "bytes_read": int(read[idx].sum())},
        files=file_rows(model, worst(ranks, sel),
                        {"size_bytes": size.astype(np.int64), "ranks": ranks,
                         "bytes_read": read.astype(np.int64)}),
        cost_s=cost(model, sel, ("read", "meta")),
        claims=claims_of(model, sel, "read", "meta"),
    )]


def _bcast_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text="Read the file on one rank and MPI_Bcast its contents to the others.",
               artifacts=fixes.snippets("read_once_bcast"))


def _straggler_rows(model: Model, th: Thresholds) -> list[tuple]:
    """(interface, file, fastest s, slowest s, fastest bytes, slowest bytes, time imbalance,
    bytes imbalance, fastest rank, slowest rank) per shared file with a straggler.

    A file the trace holds completely is judged on each rank's measured busy time (which
    rank, how long); the others on Darshan's fastest/slowest counters.
    """
    rows: list[tuple] = []
    tm = model.metrics.trace
    # Equal shares but unequal MPI-IO time that the file system did not spend: the ranks
    # wait (mpiio-time-skew says so, with its cause, when it is worth reporting); not a
    # straggler with more work. Whether reported or not: a time gap between ranks that the
    # MPI-IO time beyond the POSIX time covers is waiting in MPI (a collective open or close,
    # oversubscribed ranks), not a rank the file system served slowly (was: "the slow one
    # waited on the file system" for 0.24 s on a file whose POSIX calls took 1 ms).
    waiting = waiting_files(model, th)
    beyond_fs = np.maximum(model.layers.mpiio.slowest_rank_time_s
                        - model.layers.posix.slowest_rank_time_s, 0)
    mpi_layer = mpi_files(model)

    def waits(i: int, gap: float) -> bool:
        return bool(waiting[i] or (mpi_layer[i] and gap <= beyond_fs[i]))

    traced = set()
    for b in (tm.busy if tm is not None else []):
        if not b.covered or model.files.category[b.file_index] != APP:
            continue
        traced.add(b.file_index)
        gap = b.slowest_s - b.fastest_s
        dt = gap / b.slowest_s if b.slowest_s > 0 else 0.0
        big_b = max(b.slowest_bytes, b.fastest_bytes)
        db = abs(b.slowest_bytes - b.fastest_bytes) / big_b if big_b > 0 else 0.0
        at_mpiio = b.module == TRACE_MODULES[MPIIO_CODE]  # busy time in MPI-IO calls
        if ((waiting[b.file_index] or (at_mpiio and waits(b.file_index, gap)))
                and db < th.imbalance):
            traced.add(b.file_index)
            continue
        if b.slowest_s >= th.imbalance_min_time_s and dt >= th.imbalance:
            rows.append((b.module + " trace", b.file_index, b.fastest_s, b.slowest_s,
                         b.fastest_bytes, b.slowest_bytes, dt, db, b.fastest_rank,
                         b.slowest_rank))
    mpi = mpi_layer
    for mod, p in (("MPI-IO", "MPIIO"), ("POSIX", "POSIX"), ("STDIO", "STDIO")):
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        sel = model.app_mask(md) & (md.ranks < 0) & (md.span_n > 1)
        if mod == "POSIX":
            # Under MPI-IO, collective buffering makes a few aggregators do all POSIX I/O by
            # design: judge those files at the MPI-IO layer only.
            sel &= ~mpi[md.file_index]
        fast_t = md.fcol(f"{p}_F_FASTEST_RANK_TIME")
        slow_t = md.fcol(f"{p}_F_SLOWEST_RANK_TIME")
        fast_b = md.col(f"{p}_FASTEST_RANK_BYTES")
        slow_b = md.col(f"{p}_SLOWEST_RANK_BYTES")
        fast_r = md.col(f"{p}_FASTEST_RANK")
        slow_r = md.col(f"{p}_SLOWEST_RANK")
        for i in np.nonzero(sel)[0]:
            if int(md.file_index[i]) in traced:
                continue
            dt = (slow_t[i] - fast_t[i]) / slow_t[i] if slow_t[i] > 0 else 0.0
            big_b = max(int(slow_b[i]), int(fast_b[i]))
            db = abs(int(slow_b[i]) - int(fast_b[i])) / big_b if big_b > 0 else 0.0
            t_ok = slow_t[i] >= th.imbalance_min_time_s and dt >= th.imbalance
            b_ok = big_b >= th.imbalance_min_bytes and db >= th.imbalance
            if waits(int(md.file_index[i]), float(slow_t[i] - fast_t[i])) and not b_ok:
                continue
            if t_ok or b_ok:
                rows.append((mod, int(md.file_index[i]), float(fast_t[i]), float(slow_t[i]),
                             int(fast_b[i]), int(slow_b[i]), dt, db, int(fast_r[i]),
                             int(slow_r[i])))
    return rows


def _stragglers(model: Model, th: Thresholds) -> list[Hit]:
    rows = _straggler_rows(model, th)
    if not rows:
        return []
    seen: set[int] = set()
    uniq = []
    for r in rows:  # trace, then MPI-IO: a file seen in several layers is reported once
        if r[1] not in seen:
            seen.add(r[1])
            uniq.append(r)
    uniq.sort(key=lambda r: -r[3])
    w = uniq[0]
    how = "measured in the trace" if w[0].endswith("trace") else "Darshan's rank counters"
    return [Hit(
        summary=(f"{len(uniq)} shared file(s) with a straggler rank; worst: rank {w[9]} took "
                 f"{w[3]:.2f} s, rank {w[8]} {w[2]:.2f} s ({pct(w[6])} apart, {how})"),
        values={"files": len(uniq), "worst_slowest_time_s": round(w[3], 6),
                "worst_fastest_time_s": round(w[2], 6), "worst_slowest_rank": w[9],
                "worst_fastest_rank": w[8], "worst_time_imbalance": round(w[6], 4),
                "worst_bytes_imbalance": round(w[7], 4), "measured_by": how},
        files=[FileEvidence(model.files.paths[r[1]],
                            {"interface": r[0], "fastest_rank": r[8],
                             "fastest_time_s": round(r[2], 6), "slowest_rank": r[9],
                             "slowest_time_s": round(r[3], 6), "fastest_bytes": r[4],
                             "slowest_bytes": r[5]}) for r in uniq[:10]],
        # the slow rank moved no more than the others: it waited on the file system
        data={"equal_shares": w[7] <= 0.05,
              "collective": bool(sum(model.layers.calls.of(d)["COLL"][w[1]]
                                     + model.layers.calls.of(d)["SPLIT"][w[1]]
                                     for d in ("read", "write")) > 0)},
        cost_s=sum(max(r[3] - r[2], 0.0) for r in uniq),
    )]


def _stragglers_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    paths = [e.path for e in hit.files]
    if hit.data.get("equal_shares"):
        # "the same share" is what the job already does: the time went to contention;
        # calls already collective need no switch to collective, only aligned ranges
        aligned = CodeChange("each rank's range aligned to the stripe",
                             fixes.io_layer(model, paths))
        return Fix(text=("Every rank already moves the same bytes: the slow one waited on the "
                         "file system (its range shares stripes and locks with its neighbours' "
                         "ranges, KAUST: not stripe aligned -> contention). Align each rank's "
                         "range to the stripe size"
                         + (" (the calls are already collective: set striping_unit to the "
                            "stripe so that aggregators' domains follow it)."
                            if hit.data.get("collective") else
                            ", or make the calls collective so that each aggregator writes "
                            "whole stripes.")),
                   artifacts=[] if hit.data.get("collective") else
                   fixes.collective_code(model, paths), code=[aligned])
    return Fix(text=("Give every rank the same share of the shared file and let MPI-IO "
                     "aggregate (collective calls); check that the slow rank is not also the "
                     "one doing extra work (headers, metadata) alone."),
               artifacts=fixes.collective_code(model, paths))


def _per_rank_imbalance(model: Model, th: Thresholds) -> list[Hit]:
    """Judged within each MPI world (one log): the processes of different logs of a
    workflow never wait for one another."""
    files = model.files
    sel = (files.category == APP) & (files.nranks == 1) & (files.ranks_first >= 0)
    if sel.sum() < 2:
        return []
    b = model.layers.posix.bytes + model.layers.stdio.bytes
    # Time of each rank on its own files: the job waits for the busiest one.
    t = model.layers.posix.time_total_s + model.layers.stdio.time_total_s
    ranks = files.ranks_first[sel]
    n = max(int(ranks.max()) + 1, 1)
    all_bytes = np.bincount(ranks, weights=b[sel], minlength=n)
    all_t = np.bincount(ranks, weights=t[sel], minlength=n)
    has_files = np.bincount(ranks, minlength=n) > 0
    best: Hit | None = None
    for world in rank_worlds(model):
        active = np.array([r for r in world if r < n and has_files[r]], dtype=np.int64)
        if active.size < 2:
            continue
        per_rank, rank_t = all_bytes[active], all_t[active]
        if per_rank.max() < th.imbalance_min_bytes:
            continue
        imb = (per_rank.max() - per_rank.min()) / per_rank.max()
        if imb < th.imbalance:
            continue
        hi, lo = int(active[per_rank.argmax()]), int(active[per_rank.argmin()])
        hit = Hit(
            summary=(f"bytes in per-rank files differ by {pct(imb)} between ranks: rank {hi} "
                     f"moved {fmt_bytes(per_rank.max())}, rank {lo} "
                     f"{fmt_bytes(per_rank.min())}"),
            values={"ranks": int(active.size), "max_rank": hi, "max_bytes": int(per_rank.max()),
                    "min_rank": lo, "min_bytes": int(per_rank.min()),
                    "imbalance": round(imb, 4)},
            # Balanced, every rank would take the mean time: the job waits that much less
            # (max - min only if all the others were as fast as the fastest).
            cost_s=float(rank_t.max() - rank_t.mean()),
        )
        if best is None or (hit.cost_s or 0.0) > (best.cost_s or 0.0):
            best = hit
    return [best] if best else []


def _per_rank_imbalance_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text=("Balance the data among ranks (decomposition), or let a few aggregator "
                     "ranks write for all; the job waits for the rank with the most data."))


def rules() -> list[Rule]:
    return [
        Rule(id="file-per-process", family="files", severity="warn",
             title="One file per process at scale",
             why=("File per process is simple but does not scale: the number of files "
                  "overloads metadata and simultaneous accesses contend."),
             sources=(Source(KAUST, "Parallel I/O: File-per-Process",
                             "Pattern does not scale at large process counts"),
                      Source(CSC_LUSTRE, "File per process", "this approach is not scalable")),
             effect="No published figure.",
             trigger=_fpp, fix=_fpp_fix,
             cost="the slowest rank's metadata time on per-rank files"),
        Rule(id="files-per-directory", family="files", severity="warn",
             title="Many files in one directory",
             why="Large directories serialise creates and lookups on the metadata server.",
             sources=(Source(KAUST, "I/O Best Practices",
                             "Limit the number of files within a single directory; stripe count "
                             "1 for directories of many small files"),),
             effect="No published figure.",
             trigger=_per_dir, fix=_per_dir_fix,
             requires=needs_real_names,
             cost="the slowest rank's metadata time on files of those directories"),
        Rule(id="frequent-open-close", family="files", severity="warn",
             title="Files opened and closed over and over",
             why="Every open/close is a metadata round trip; excessive overhead is created.",
             sources=(Source(KAUST, "I/O Best Practices (2)",
                             "Avoid opening and closing files frequently"),),
             effect="No published figure.",
             trigger=_opens, fix=_opens_fix,
             cost="the slowest rank's metadata time on the files concerned"),
        Rule(id="small-shared-input", family="files", severity="warn",
             title="A small file is read by many ranks",
             why=("Every rank reading the same small file hammers one OST and the metadata "
                  "server; one read plus a broadcast costs a single request."),
             sources=(Source(KAUST, "I/O Best Practices",
                             "Read small, shared files from a single task and broadcast"),),
             effect="No published figure.",
             trigger=_bcast, fix=_bcast_fix,
             cost="the slowest rank's read and metadata time on those files"),
        Rule(id="shared-file-stragglers", family="balance", severity="warn",
             title="A straggler rank on a shared file",
             why=("The job waits for the slowest rank; imbalance below one second or a few "
                  "MiB is noise and is not reported."),
             sources=(Source(DRISHTI, "stragglers", "(slowest - fastest) / slowest > 15%"),
                      Source(KAUST, "Variance in Shared Files", "Darshan's fastest/slowest rank")),
             effect="At most the difference between the slowest and the fastest rank.",
             trigger=_stragglers, fix=_stragglers_fix,
             cost="slowest minus fastest rank time, summed over the files"),
        Rule(id="per-rank-imbalance", family="balance", severity="warn",
             title="Unequal amounts of data in per-rank files",
             why="Ranks with more data finish later and the others wait for them.",
             sources=(Source(DRISHTI, "size imbalance", "per-rank files differ by > 15%"),),
             effect="The busiest rank's time above the mean: balanced, every rank takes the mean.",
             trigger=_per_rank_imbalance, fix=_per_rank_imbalance_fix,
             requires=needs_complete("POSIX", "STDIO"),
             cost="the busiest rank's time on per-rank files above the ranks' mean"),
    ]
