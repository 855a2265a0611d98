"""Rules on the request stream: small requests, serial small I/O that wants buffering,
misalignment, redundant traffic, random access."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose import batch_scripts, fixes
from iolab.diagnose.rules.base import (
    DRISHTI,
    KAUST,
    NERSC_KNL,
    FileEvidence,
    Fix,
    Hit,
    Rule,
    Source,
    Value,
    fmt_bytes,
    pct,
)
from iolab.diagnose.rules.common import (
    DIR_NAMES,
    claims_of,
    cost,
    costliest,
    enough,
    file_rows,
    file_time,
    mpi_files,
    per_op,
    shared_app_files,
    small_bins,
    small_limit,
    worst,
)
from iolab.model.files import APP
from iolab.model.metrics import DIRECTIONS, SIZE_BINS, SMALL_BINS, exact_mib_requests
from iolab.model.trace import misalignment_share, off_alignment, traced_request_time

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model
    from iolab.model.tables import ModuleData

def _small_sizes(model: Model, d: str, limit: int) -> tuple[list[int], int, int, str, str]:
    """Size bins, small requests (below ``limit``), exactly-1-MiB requests, where they come
    from and the most common sizes: the trace's exact lengths when it holds every request of
    this direction, else the counters' bins wholly below the limit (see small_bins; when the
    limit reaches 1 MiB, Darshan's 100K_1M bin holds 1 MiB itself: exact_mib_requests)."""
    tm = model.metrics.trace
    if tm is not None and tm.exact[d]:
        s = tm.sizes[d]
        common = ", ".join(f"{fmt_bytes(n)} x {c}" for n, c in s.common)
        return s.bins, s.below(limit), s.exactly_1mib, "trace", common
    px = model.metrics.ifaces["POSIX"]
    hist = px.hist.get(d, [0] * len(SIZE_BINS))
    nb = small_bins(limit)
    exact = px.hist.get(d + "_exact_1mib", [0])[0] if nb >= SMALL_BINS else 0
    return hist, sum(hist[:nb]) - exact, exact, "counters", ""


def _small(model: Model, th: Thresholds) -> list[Hit]:
    px = model.metrics.ifaces.get("POSIX")
    if px is None:
        return []
    hits = []
    app = model.files.category == APP
    shared = shared_app_files(model)
    limit = small_limit(model, th)
    nb = small_bins(limit)
    for d in DIRECTIONS:
        hist, small, exact, source, common = _small_sizes(model, d, limit)
        ops = px.ops[d]
        if not enough(small, ops, th.small_requests_min, th.small_requests_share):
            continue
        per = model.layers.posix.size_hist[d][:, :max(nb, 1)].sum(axis=1)
        md = model.mods["POSIX"]
        if nb >= SMALL_BINS:
            per = per - np.bincount(md.file_index, weights=exact_mib_requests(md, d),
                                    minlength=len(per))[:len(per)]
        per = np.where(app, per, 0)
        top = costliest(model, per > 0, per, (d,), ("POSIX",))
        small_shared = int(per[shared].sum())
        concerned = per > 0
        file_ops = model.layers.posix.reads if d == "read" else model.layers.posix.writes
        share = min(float(per.sum()) / max(float(file_ops[concerned].sum()), 1.0), 1.0)
        hits.append(Hit(
            direction=d,
            summary=(f"{small} of {ops} POSIX {d}s ({pct(small / ops)}) are below "
                     f"{fmt_bytes(limit)}; {small_shared} of them on files shared by several "
                     "ranks" + (f"; sizes from the trace: {common}" if common else "")),
            values={f"posix_{d}s": ops, f"small_{d}s": small,
                    "small_share": round(small / ops, 4), f"small_{d}s_shared_files": small_shared,
                    "small_below_bytes": limit,
                    f"exactly_1mib_{d}s_not_small": exact, "sizes_from": source,
                    **({"common_sizes": common} if common else {}),
                    **{f"posix_size_{d}_{b.lower()}": hist[i] for i, b in enumerate(SIZE_BINS)
                       if i < SMALL_BINS}},
            files=file_rows(model, top, {f"small_{d}s": per.astype(np.int64),
                                          "ranks": model.files.nranks,
                                          f"{d}_time_s": np.round(file_time(
                                              model, (d,), ("POSIX",)), 3)}),
            data={"mpi": bool(mpi_files(model)[top].any()) if top else False,
                  "collective": _already_collective(model, top, d),
                  # collective aggregation merges the pieces of several ranks, none of one
                  "shared": bool((model.files.nranks[top] > 1).any()) if top else False,
                  "paths": [model.files.paths[i] for i in top]},
            cost_s=cost(model, concerned, (d,), ("POSIX",), share),
        ))
    return hits


def _already_collective(model: Model, idx: list[int], d: str) -> bool:
    """The MPI-IO calls on these files are mostly collective already."""
    calls = model.layers.calls.of(d)
    coll = float(sum(calls["COLL"][i] + calls["SPLIT"][i] for i in idx))
    total = float(sum(model.layers.calls.total(d)[i] for i in idx))
    return total > 0 and coll >= 0.5 * total


def _small_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    paths = hit.data.get("paths", [])
    larger = [fixes.transfer_size(fixes.io_layer(model, paths) if hit.data.get("mpi")
                                  else "posix", hit.direction)]
    if hit.data.get("mpi") and hit.data.get("collective"):
        # Already collective: collective buffering is on and still issues small requests;
        # the call sizes themselves are the lever (the tiny-collective-calls rule says more).
        return Fix(
            text=("The MPI-IO calls are already collective: make each call carry more data "
                  "(one call through a file view, or several variables per call), so that "
                  "aggregators issue requests of a stripe or more."),
            artifacts=fixes.collective_code(model, paths, hit.direction,
                                            fixes.more_per_call(model, paths, hit.direction)),
            code=larger)
    if hit.data.get("mpi") and not hit.data.get("shared"):
        verb = "read" if hit.direction == "read" else "write"
        pick = "pick the pieces from memory" if verb == "read" else "gather the pieces first"
        return Fix(
            text=("Issue fewer, larger MPI-IO calls: each file here is used by one rank, so "
                  f"collective buffering has nothing to merge; {verb} blocks of 1 MiB or more "
                  f"(or one derived datatype covering many pieces) and {pick}."),
            artifacts=fixes.snippets("buffered_writes") if verb == "write" else [],
            code=larger)
    if hit.data.get("mpi"):
        # independent calls: the collective-buffering hint waits for collective calls
        # (romio_hints leaves it out until then); data sieving where it acts on them
        sieve_text, sieve = fixes.independent_pieces(model, paths, hit.direction)
        return Fix(
            text=("Aggregate before the file system: collective "
                  + {"hdf5": "HDF5 transfers (H5Pset_dxpl_mpio with H5FD_MPIO_COLLECTIVE)",
                     "pnetcdf": "PnetCDF calls (ncmpi_*_all)"}.get(
                         fixes.io_layer(model, paths), "MPI-IO")
                  + " with a larger collective buffer, so that aggregators issue large "
                  "contiguous requests." + sieve_text),
            artifacts=fixes.romio_hints(model, {"romio_cb_write" if hit.direction == "write"
                                                else "romio_cb_read": "enable"},
                                        paths=paths)
            + sieve + fixes.collective_code(model, paths, hit.direction), code=larger)
    return Fix(
        text=("Issue fewer, larger requests: gather data in memory and write/read it in "
              "blocks of 1 MiB or more, or buffer transparently with iolab buffer."),
        artifacts=fixes.iolab_buffer(model, paths)
        + fixes.snippets("buffered_reads" if hit.direction == "read" else "buffered_writes"),
        code=larger)


def _serial_small(model: Model, th: Thresholds) -> list[Hit]:
    """Non-MPI files accessed by one rank in many small sequential requests."""
    files = model.files
    cand = (files.category == APP) & (files.nranks <= 1) & ~mpi_files(model)
    hits = []
    for d in DIRECTIONS:
        rows = []
        for mod in ("POSIX", "STDIO"):
            lay = model.layers.layer(mod)
            ops = lay.reads if d == "read" else lay.writes
            byt = lay.bytes_read if d == "read" else lay.bytes_written
            avg = per_op(byt, ops)
            sel = cand & (ops >= th.buffer_min_ops) & (avg < th.buffer_max_avg_bytes)
            # A stream closed after every request or two has nothing for a buffer to merge
            # (each close flushes it): the reopening is the problem, frequent-open-close's.
            sel &= ops >= 2 * lay.opens
            if mod == "POSIX":  # STDIO has no offsets: a stream is sequential by construction
                sel &= lay.consec[d] >= th.sequential_share * ops
            for i in np.nonzero(sel)[0]:
                rows.append((mod, int(i), int(ops[i]), int(byt[i]), float(avg[i])))
        if not rows:
            continue
        rows.sort(key=lambda r: -r[2])
        n_ops = sum(r[2] for r in rows)
        n_bytes = sum(r[3] for r in rows)
        hits.append(Hit(
            direction=d,
            summary=(f"{n_ops} small sequential {d}s (average {fmt_bytes(n_bytes / n_ops)}) "
                     f"from one process on {len(rows)} file(s) not using MPI-IO"),
            values={f"{d}s": n_ops, "bytes": n_bytes, "avg_bytes": round(n_bytes / n_ops, 1),
                    "files": len(rows), "interfaces": ",".join(sorted({r[0] for r in rows}))},
            files=[FileEvidence(files.paths[i], {"interface": mod, d + "s": o, "bytes": b,
                                                 "avg_bytes": round(a, 1)})
                   for mod, i, o, b, a in rows[:10]],
            data={"paths": [files.paths[r[1]] for r in rows]},
            cost_s=cost(model, np.isin(np.arange(len(files)), [r[1] for r in rows]), (d,)),
        ))
    return hits


def _serial_small_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    paths = hit.data.get("paths", [])
    program = batch_scripts.program_short(model)
    return Fix(
        text=(f"Buffer the stream: run under `iolab buffer -- {program}` "
              "(LD_PRELOAD "
              "libiolab-buffer.so, no relinking), or Cray IOBUF, or give the stream a large "
              "buffer with setvbuf; each turns many small calls into a few 64 MiB ones."),
        artifacts=fixes.iolab_buffer(model, paths)
        + fixes.snippets("buffered_reads" if hit.direction == "read" else "buffered_writes"),
        code=[fixes.transfer_size("stdio" if hit.values.get("interfaces") == "STDIO"
                                  else "posix", hit.direction)])


def _misaligned_file(model: Model, th: Thresholds) -> list[Hit]:
    md = model.mods.get("POSIX")
    if md is None or len(md) == 0:
        return []
    app = model.app_mask(md)
    ops = md.pos("POSIX_READS") + md.pos("POSIX_WRITES")
    byt = md.pos("POSIX_BYTES_READ") + md.pos("POSIX_BYTES_WRITTEN")
    align = md.pos("POSIX_FILE_ALIGNMENT")
    avg = per_op(byt, ops)
    # A request shorter than the alignment unit cannot be aligned: the small-request rules
    # judge those, so only requests of at least one unit count here.
    sel = app & (ops > 0) & (align > 0) & (avg >= align)
    na = md.pos("POSIX_FILE_NOT_ALIGNED")
    n_na, n_ops = int(na[sel].sum()), int(ops[sel].sum())
    if not enough(n_na, n_ops, th.misaligned_min_ops, th.misaligned_share):
        return []
    fidx = md.file_index[sel]
    on = np.isin(np.arange(len(model.files)), fidx)
    # With a complete trace: each misaligned request's time times the share of its units
    # alignment would save (trace.misalignment_share; pncput-openmpi: 5.2 ms of the 23 ms
    # of its misaligned requests, written by OMPIO's one aggregator).
    file_align = model.per_file_max("POSIX", "POSIX_FILE_ALIGNMENT")
    # Without a trace: a file of one rank shares no unit with another writer, so each
    # misaligned request costs at most the one extra unit it touches (1 / (units + 1));
    # a shared file's misaligned requests all of their time (contention), a bound.
    lone = model.files.nranks[md.file_index] == 1
    units = np.ceil(avg / np.maximum(align, 1))
    na_cost = float((na * np.where(lone, 1 / (units + 1), 1.0))[sel].sum())
    traced = traced_request_time(model, on, lambda tr, r: off_alignment(tr, r, file_align),
                                 lambda tr, r: misalignment_share(tr, r, file_align))
    stripes = [model.stripes.get(int(model.files.ids[i])) for i in np.unique(fidx)]
    stripe = next((s[0] for s in stripes if s), None)
    top = np.argsort(-np.where(sel, na, -1))[:10]
    return [Hit(
        summary=(f"{n_na} of {n_ops} POSIX requests ({pct(n_na / n_ops)}) start off the "
                 f"{int(np.max(align[sel]))}-byte file alignment"
                 + (f" (Lustre stripe {fmt_bytes(stripe)})" if stripe else "")),
        values={"file_not_aligned": n_na, "posix_ops": n_ops, "share": round(n_na / n_ops, 4),
                "file_alignment_bytes": int(np.max(align[sel])), "stripe_size_bytes": stripe},
        files=[FileEvidence(model.files.paths[md.file_index[i]],
                            {"not_aligned": int(na[i]), "ops": int(ops[i])})
               for i in top if sel[i] and na[i] > 0],
        data={"stripe": stripe or int(np.max(align[sel])),
              "mpi": bool(mpi_files(model)[np.unique(fidx)].any()),
              "hdf5": bool((model.layers.library[np.unique(fidx)] == "HDF5").any())},
        cost_s=(traced if traced is not None
                else cost(model, on, ("read", "write"), ("POSIX",), na_cost / n_ops)),
        claims=claims_of(model, on, "read", "write"),
    )]


def _misaligned_file_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    """Only the means the job can use: MPI-IO's striping_unit for MPI-IO files, HDF5's
    alignment for HDF5 files, else the program's own request offsets."""
    unit = int(hit.data.get("stripe") or 1 << 20)
    how = []
    if hit.data.get("mpi"):
        how.append("tell MPI-IO the stripe (striping_unit) so that its file domains start on "
                   "stripe boundaries")
    if hit.data.get("hdf5"):
        how.append("align HDF5 objects to it (H5Pset_alignment)")
    how.append("make records and per-rank blocks multiples of it (pad them)")
    return Fix(
        text=f"Start requests on {fmt_bytes(unit)} boundaries: " + "; ".join(how) + ".",
        artifacts=(fixes.romio_hints(model, {"striping_unit": str(unit)}, "romio_hints_align")
                   if hit.data.get("mpi") else [])
        + (fixes.hdf5_metadata_code(model) if hit.data.get("hdf5") else []))


def _misaligned_mem(model: Model, th: Thresholds) -> list[Hit]:
    m = model.metrics
    if not enough(m.mem_not_aligned, m.posix_ops, th.misaligned_min_ops, th.misaligned_share):
        return []
    share = m.mem_not_aligned / m.posix_ops
    return [Hit(
        summary=(f"{m.mem_not_aligned} of {m.posix_ops} POSIX requests ({pct(share)}) use "
                 f"buffers not aligned to {m.mem_alignment} bytes"),
        values={"mem_not_aligned": m.mem_not_aligned, "posix_ops": m.posix_ops,
                "share": round(share, 4), "mem_alignment_bytes": m.mem_alignment},
        # No counter measures the extra copy an unaligned buffer costs (was: a tenth of the
        # POSIX time, "23.3 s" on a job where nothing supported it): cost unknown.
        cost_s=None,
    )]


def _misaligned_mem_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text=("Allocate I/O buffers with posix_memalign(&p, 4096, size) (needed anyway "
                     "for O_DIRECT, which requires 512-byte aligned memory)."),
               artifacts=fixes.snippets("direct_io"))


def _redundant(model: Model, th: Thresholds) -> list[Hit]:
    md = model.mods.get("POSIX")
    if md is None or len(md) == 0:
        return []
    app = model.app_mask(md)
    hits = []
    for d in DIRECTIONS:
        byt = md.pos(f"POSIX_{DIR_NAMES[d][2]}")
        ext = md.col(f"POSIX_MAX_BYTE_{'READ' if d == 'read' else 'WRITTEN'}") + 1
        # Per record: bytes moved beyond the extent touched = the same bytes moved again. A
        # record reduced over ranks adds every rank's bytes: that is every rank re-reading the
        # same data (the read-once-and-broadcast rule judges small inputs).
        excess = np.maximum(byt - np.maximum(ext, 0), 0) * app
        if d == "read":  # reads the program never made (read-modify-write judges them)
            excess = np.where(_reads_by_mpiio(model)[md.file_index], 0, excess)
        excess = excess * _program_share(model, md, excess, d)
        tot, ex = int(byt[app].sum()), int(excess.sum())
        if not enough(ex, tot, th.redundant_min_bytes, th.redundant_share):
            continue
        top = worst(excess)
        hits.append(Hit(
            direction=d,
            summary=(f"{fmt_bytes(ex)} of {fmt_bytes(tot)} {d} ({pct(ex / tot)}) moved the same "
                     f"bytes again (beyond each file's extent)"),
            values={f"bytes_{d}": tot, "redundant_bytes": ex, "share": round(ex / tot, 4)},
            files=[FileEvidence(model.files.paths[md.file_index[i]],
                                {"bytes": int(byt[i]), "extent_bytes": int(ext[i]),
                                 "rank": int(md.ranks[i])}) for i in top],
            cost_s=cost(model, np.isin(np.arange(len(model.files)),
                                       md.file_index[excess > 0]), (d,), ("POSIX",), ex / tot),
            # each rank re-reading its own data (passes, epochs: records of one rank) rather
            # than many ranks reading the same bytes (a reduced record): nobody to broadcast to
            data={"own": float(excess[md.ranks >= 0].sum()) >= 0.5 * ex},
        ))
    return hits


def _program_share(model: Model, md: ModuleData, excess: np.ndarray, d: str) -> np.ndarray:
    """Per POSIX record: the share of its repeated bytes the program moved. In a file
    accessed through MPI-IO the program's bytes are the MPI-IO ones: POSIX bytes beyond
    them are MPI-IO's own (data sieving rewriting whole buffers, read-modify-write), which
    write-amplification and read-modify-write report; only MPI-IO bytes beyond the file's
    extent are the same data moved again by the program."""
    L = model.layers
    n = len(model.files)
    mpi_b = L.mpiio.bytes_read if d == "read" else L.mpiio.bytes_written
    extent = np.maximum(L.posix.max_byte[d] + 1, 0)
    allowed = np.maximum(mpi_b - extent, 0)
    posix_ex = np.bincount(md.file_index, weights=excess.astype(np.float64), minlength=n)[:n]
    share = np.divide(allowed, posix_ex, out=np.ones(n), where=posix_ex > 0)
    share = np.where(L.mpiio.present, np.minimum(share, 1.0), 1.0)
    return share[md.file_index]


def _reads_by_mpiio(model: Model) -> np.ndarray:
    """Per file: POSIX reads inside a file the program only writes through MPI-IO (data
    sieving or collective buffering reading before they write): not the program's reads."""
    return model.layers.posix_reads_under_mpi_writes > 0


def _redundant_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    if hit.direction == "read" and (model.job.nprocs <= 1 or hit.data.get("own")):
        # ranks re-read their own data (epochs, passes): no other rank to broadcast to
        return Fix(text=("Read the data once and keep it in memory, or in a node-local cache "
                         "(/dev/shm, local SSD) when it does not fit, instead of reading it "
                         "again from the shared file system at every pass."))
    if hit.direction == "read":
        return Fix(text=("Read data once and keep it in memory, or read on one rank and "
                         "broadcast it to the others."),
                   artifacts=fixes.snippets("read_once_bcast"))
    return Fix(text=("Write each region once: accumulate updates in memory and write the final "
                     "version, instead of rewriting the same bytes."),
               artifacts=fixes.snippets("buffered_writes"))


def _random(model: Model, th: Thresholds) -> list[Hit]:
    """Random share per direction: measured in the trace when it holds every request (real
    backward and irregular forward jumps per file per rank), else estimated from counters."""
    hits = []
    tm = model.metrics.trace
    for d in DIRECTIONS:
        a = model.metrics.access[d]
        values: dict[str, Value] = {f"posix_{d}s": a.ops, "consecutive": a.consec,
                                    "sequential": a.seq, "random_estimate": a.random_est,
                                    "same_offset_estimate": a.rereads}
        if tm is not None and tm.exact[d]:
            t = tm.access[d]
            n_random, share = t.random, t.random_share
            summary = (f"{t.random} of {t.ops} POSIX {d}s ({pct(share)}) are random, measured "
                       f"in the trace: {t.backward} jumped backward, {t.random_forward} forward "
                       f"by irregular amounts; {t.strided} strided, {t.consecutive} consecutive")
            values.update({"backward": t.backward, "forward_random": t.random_forward,
                           "strided": t.strided, "repeated_offset": t.repeated,
                           "trace_consecutive": t.consecutive, "measured_by": "trace"})
        else:
            n_random, share = a.random_est, a.random_share
            summary = (f"about {a.random_est} of {a.ops} POSIX {d}s ({pct(share)}) are random: "
                       f"{a.backward} went backward, {a.consec} were consecutive")
            values.update({"backward": a.backward, "measured_by": "counters (estimate)"})
        if not enough(n_random, a.ops, max(th.random_min_ops, 1), th.random_share):
            continue
        values.update({"random": n_random, "random_share": round(share, 4)})
        hits.append(Hit(direction=d, summary=summary, values=values,
                        cost_s=cost(model, model.files.category == APP, (d,), ("POSIX",),
                                    share),
                        claims=claims_of(model, model.files.category == APP, d)))
    return hits


def _app_paths(model: Model) -> list[str]:
    return [p for p, c in zip(model.files.paths, model.files.category) if c == APP]


def _random_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    if hit.direction == "read":
        text = ("Sort or batch the offsets before reading, read larger blocks that cover "
                "several records, or load the data set once into memory; for truly random "
                "reads of a file larger than memory, O_DIRECT avoids useless read-ahead.")
        return Fix(text=text, artifacts=fixes.snippets("direct_io"))
    return Fix(text=("Sort writes by offset or gather them in memory and write contiguous "
                     "blocks; with MPI-IO, describe the layout with a file view and write "
                     "collectively."),
               artifacts=fixes.collective_code(model, _app_paths(model), hit.direction))


def rules() -> list[Rule]:
    small_src = (Source(KAUST, "I/O Performance",
                        "Increase performance by decreasing the number of I/O operations "
                        "(latency) and increasing size (bandwidth)"),
                 Source(DRISHTI, "small requests", "more than 10% (and 1000) requests < 1 MiB"))
    return [
        Rule(id="small-requests", family="access", severity="high", directional=True,
             title="Many small requests reach the file system",
             why=("Each request pays a full round trip to the servers; below ~1 MiB the "
                  "latency, not the bandwidth, sets the speed."),
             sources=small_src,
             effect=("IOBUF aggregation: 1080 s -> 4.5 s (KAUST); collective buffer tuning "
                     "improves bandwidth on KNL (NERSC)."),
             trigger=_small, fix=_small_fix,
             cost=("the slowest rank's POSIX time in that direction on the files with small "
                   "requests, times their share of those files' requests")),
        Rule(id="small-serial-io", family="access", severity="high", directional=True,
             title="Small sequential I/O from one process: buffer it",
             why=("A single writer issuing millions of tiny sequential calls is the IOBUF case: "
                  "a user-space buffer turns them into a few large requests without touching "
                  "the code."),
             sources=(Source(KAUST, "IOBuf for serial / Case Study: Buffered I/O",
                             "Use I/O buffering for all sequential I/O; 4 x 64 MB buffers"),
                      Source(NERSC_KNL, "Direct I/O vs. Buffered I/O",
                             "Use default (buffered) settings for small reads and writes")),
             effect=("A post-processing application writing 1 GB in 512-byte writes: 1080 s -> "
                     "4.5 s with 4 x 64 MiB IOBUF buffers (99.6% less time, KAUST)."),
             trigger=_serial_small, fix=_serial_small_fix,
             cost="the slowest rank's time in that direction on those files"),
        Rule(id="misaligned-file", family="access", severity="warn",
             title="Requests start off the file-system alignment",
             why=("A request crossing a stripe or block boundary touches two servers or "
                  "forces read-modify-write; with several writers it causes lock contention."),
             sources=(Source(KAUST, "File Striping: Physical and Logical Views",
                             "not stripe aligned: some stripes are accessed by more than one "
                             "process -> contention"),
                      Source(DRISHTI, "misaligned file requests", "more than 10% misaligned")),
             effect="striping_unit hint matching the 1 MiB stripe: 2.27x on BTIO (CSC).",
             trigger=_misaligned_file, fix=_misaligned_file_fix,
             cost=("with DXT covering the files, the slowest rank's traced time in the "
                   "misaligned requests times the share of their units alignment would save "
                   "(the extra unit, and the end units another rank's requests touch too); "
                   "else the POSIX time times the misaligned share (1 / (units + 1) of it "
                   "for a file of one rank)")),
        Rule(id="misaligned-memory", family="access", severity="info",
             title="I/O buffers not aligned in memory",
             why=("Unaligned buffers cost an extra copy and cannot be used with direct I/O "
                  "(512-byte alignment required)."),
             sources=(Source(NERSC_KNL, "Direct I/O vs. Buffered I/O",
                             "direct IO has strict in-memory alignment (512 bytes)"),
                      Source(DRISHTI, "misaligned memory requests", "more than 10%")),
             effect="No published figure.",
             trigger=_misaligned_mem, fix=_misaligned_mem_fix,
             cost=("none stated: no counter measures the extra memory copy of an unaligned "
                   "buffer (information only)")),
        Rule(id="redundant-traffic", family="access", severity="warn", directional=True,
             title="The same bytes are moved more than once",
             why=("Bytes moved beyond the extent a process touched were moved before: re-reads "
                  "or rewrites cost bandwidth for nothing."),
             sources=(Source(KAUST, "I/O Best Practices (3)", "Reduce I/O as much as possible"),
                      Source(DRISHTI, "redundant traffic", "bytes beyond max byte offset")),
             effect="Removes the redundant share of the traffic (shown in the evidence).",
             trigger=_redundant, fix=_redundant_fix,
             cost="time in that direction on the files concerned times the redundant share"),
        Rule(id="random-access", family="access", severity="warn", directional=True,
             title="Random access pattern",
             why=("Random requests defeat read-ahead and write-behind; Darshan counts a random "
                  "request as 'sequential' half of the time (any higher offset), so the share "
                  "is measured in the trace (DXT, iolab --trace) when there is one, else "
                  "estimated from backward jumps, not from that counter."),
             sources=(Source(NERSC_KNL, "Direct I/O vs. Buffered I/O",
                             "highly random reads: avoiding the page buffer becomes reasonable"),
                      Source(DRISHTI, "random operations", "more than 20% random")),
             effect="No published figure; depends on how much sorting/batching is possible.",
             trigger=_random, fix=_random_fix,
             cost="POSIX time in that direction times the random share"),
    ]
