"""Rules on Lustre striping and on the node: stripe count and size by file size and writer
count, and direct I/O (how many processes do the I/O: rules.streams)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from iolab.diagnose import fixes
from iolab.diagnose.fixes_lustre import lfs_setstripe, stripe_size
from iolab.diagnose.rules.base import (
    CSC_LUSTRE,
    CUG_2017,
    KAUST,
    NERSC_KNL,
    NUG_2017,
    FileEvidence,
    Fix,
    Hit,
    Rule,
    Source,
    fmt_bytes,
    pct,
)
from iolab.diagnose.rules.common import claims_of, cost, needs_lustre, per_op
from iolab.diagnose.striping import StripeCount, stripe_counts
from iolab.model.files import APP
from iolab.settings.change import CodeChange

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model

MiB = 1 << 20


def _file_sizes(model: Model) -> np.ndarray:
    px = model.layers.posix
    a = np.maximum(px.max_byte["write"], px.max_byte["read"])
    return np.maximum(a + 1, 0)


def _striped(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per file: is the layout known, stripe size, stripe count."""
    n = len(model.files)
    known = np.zeros(n, dtype=bool)
    size = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    if model.stripes:
        pos = {int(i): k for k, i in enumerate(model.files.ids)}
        for rid, (s, c) in model.stripes.items():
            k = pos.get(int(rid))
            if k is not None:
                known[k], size[k], count[k] = True, s, c
    return known, size, count


def _writers(model: Model) -> np.ndarray:
    w = model.layers.posix.writes > 0
    return np.where(w, model.files.nranks, 0)


def _stripe_hit(model: Model, sel: np.ndarray, what: str, sizes: np.ndarray,
                count: np.ndarray, writers: np.ndarray,
                plans: dict[str, StripeCount] | None = None) -> list[Hit]:
    """``plans``: each file's stripe count and its origin (None: one stripe each)."""
    if not sel.any():
        return []
    idx = np.nonzero(sel)[0]
    top = idx[np.argsort(-sizes[idx])][:10]
    first = model.files.paths[top[0]]
    want = plans[first].count if plans else 1
    return [Hit(
        summary=f"{len(idx)} file(s) {what}",
        values={"files": int(len(idx)), "largest_bytes": int(sizes[idx].max()),
                "stripe_count": int(count[top[0]]), "recommended_stripe_count": want},
        files=[FileEvidence(model.files.paths[i], {
            "size_bytes": int(sizes[i]), "stripe_count": int(count[i]),
            "writers": int(writers[i]),
            **({"recommended_stripe_count": plans[model.files.paths[i]].count}
               if plans else {})}) for i in top],
        data={"paths": [model.files.paths[i] for i in idx], "plans": plans,
              "why": plans[first].comment if plans else ""},
        cost_s=cost(model, sel, ("read", "write")),
        claims=claims_of(model, sel, "read", "write"),
    )]


def _shared_unstriped(model: Model, th: Thresholds) -> list[Hit]:
    known, _, count = _striped(model)
    sizes, writers = _file_sizes(model), _writers(model)
    sel = (known & (model.files.category == APP) & (count <= 1)
           & (writers >= th.stripe_min_writers) & (sizes >= th.stripe_large_file))
    return _stripe_hit(model, sel, f"of at least {fmt_bytes(th.stripe_large_file)} written by "
                       f"{th.stripe_min_writers}+ ranks sit on one OST", sizes, count, writers,
                       stripe_counts(model, sel, at_least=2))


def _huge_unstriped(model: Model, th: Thresholds) -> list[Hit]:
    known, _, count = _striped(model)
    sizes = _file_sizes(model)
    sel = known & (model.files.category == APP) & (count <= 1) & (sizes > th.stripe_huge_file)
    # KAUST: such files must be striped whoever writes them (they fill single OSTs).
    return _stripe_hit(model, sel, "larger than 100 GB on a single OST", sizes, count,
                       _writers(model), stripe_counts(model, sel, by_writers=False))


def _small_striped(model: Model, th: Thresholds) -> list[Hit]:
    known, _, count = _striped(model)
    sizes, writers = _file_sizes(model), _writers(model)
    sel = (known & (model.files.category == APP) & (count > 1) & (sizes > 0)
           & (sizes < th.stripe_small_file) & (model.files.nranks <= 1))
    hits = _stripe_hit(model, sel, f"smaller than {fmt_bytes(th.stripe_small_file)}, used by "
                       "one process, striped over several OSTs", sizes, count, writers)
    for h in hits:
        # Extra stripes cost at open, close and stat (one object per OST), not in moving the
        # bytes: the metadata time on those files, not their whole read and write time.
        h.cost_s = cost(model, sel, ("meta",))
        h.claims = claims_of(model, sel, "meta")
        h.data["inputs"] = not bool((writers[sel] > 0).any())
    return hits


def _stripe_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    plans: dict[str, StripeCount] | None = hit.data.get("plans")
    paths = hit.data.get("paths", [])
    if not plans:
        nxt = ("or create the data set in a directory with one stripe when it is next written"
               if hit.data.get("inputs") else
               "or give the next run's output a new directory with one stripe")
        return Fix(text=("Re-create these files on one OST (a new file with the layout, then a "
                         f"copy), {nxt}."),
                   artifacts=lfs_setstripe(model, paths, 1, MiB, "stripe_count_1.lfs.sh"))
    counts = sorted({p.count for p in plans.values()})
    shown = str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    return Fix(text=(f"Re-create these files with a stripe count of {shown} (a new file with "
                     "the layout, then a copy), or give the next run's output a new directory "
                     f"with that layout. For the largest: {hit.data.get('why', '')}."),
               artifacts=lfs_setstripe(model, paths, plans, MiB,
                                       f"stripe_count_{counts[-1]}.lfs.sh", more_stripes=True))


def _stripe_size(model: Model, th: Thresholds) -> list[Hit]:
    known, ssize, _ = _striped(model)
    md = model.mods.get("POSIX")
    if md is None or not known.any():
        return []
    acc = np.zeros(len(model.files), dtype=np.int64)
    cnt = np.zeros(len(model.files))
    # The most common access size of each file, from its busiest record.
    a1 = md.pos("POSIX_ACCESS1_ACCESS")
    c1 = md.pos("POSIX_ACCESS1_COUNT").astype(np.float64)
    for i in np.argsort(c1):
        acc[md.file_index[i]], cnt[md.file_index[i]] = a1[i], c1[i]
    ok = known & (model.files.category == APP) & (ssize > 0) & (acc >= 64 * 1024)
    ok &= cnt >= th.small_requests_min
    mism = ok & (acc % np.maximum(ssize, 1) != 0) & (np.maximum(ssize, 1) % np.maximum(acc, 1) != 0)
    if not mism.any():
        return []
    idx = np.nonzero(mism)[0]
    return [Hit(
        summary=(f"{len(idx)} file(s) accessed in pieces that do not divide into the stripe: "
                 f"e.g. {fmt_bytes(acc[idx[0]])} requests on {fmt_bytes(ssize[idx[0]])} stripes"),
        values={"files": int(len(idx)), "access_bytes": int(acc[idx[0]]),
                "stripe_size_bytes": int(ssize[idx[0]])},
        files=[FileEvidence(model.files.paths[i], {"access_bytes": int(acc[i]),
                                                   "count": int(cnt[i]),
                                                   "stripe_size_bytes": int(ssize[i])})
               for i in idx[:10]],
        data={"paths": [model.files.paths[i] for i in idx], "stripe": int(acc[idx[0]])},
        cost_s=cost(model, mism, ("read", "write"), ("POSIX",), 0.5),
        claims=claims_of(model, mism, "read", "write"),
    )]


def _stripe_size_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    s = stripe_size(int(hit.data.get("stripe", MiB)))  # a Lustre size: 64 KiB multiple
    return Fix(text=(f"Match stripe size and request size: stripe {fmt_bytes(s)} and tell MPI-IO "
                     "(striping_unit), or make requests a multiple of the stripe."),
               artifacts=fixes.romio_hints(model, {"striping_unit": str(s)}, "romio_hints_stripe",
                                           hit.data.get("paths", []))
               + lfs_setstripe(model, hit.data.get("paths", []), 1, s, "stripe_size.lfs.sh",
                               keep_count=True))


def _direct(model: Model, th: Thresholds) -> list[Hit]:
    files = model.files
    app = files.category == APP
    px = model.layers.posix
    read, reads, consec = px.bytes_read, px.reads, px.consec["read"]
    size = np.maximum(px.max_byte["read"] + 1, 0)
    avg = per_op(read, reads)
    once = (app & (read >= th.direct_io_min_bytes) & (read <= 1.05 * size)
            & (consec >= th.sequential_share * reads) & (avg >= MiB))
    hits = []
    if once.any():
        idx = np.nonzero(once)[0]
        hits.append(Hit(
            direction="read",
            summary=(f"{len(idx)} large file(s) read once, sequentially, in large requests "
                     f"({fmt_bytes(read[idx].sum())})"),
            values={"files": int(len(idx)), "bytes_read": int(read[idx].sum())},
            files=[FileEvidence(files.paths[i], {"bytes_read": int(read[i]),
                                                 "avg_request_bytes": int(avg[i])})
                   for i in idx[:10]],
            cost_s=cost(model, once, ("read",), ("POSIX",), 0.1),
        ))
    case, info = _write_case(model, th)
    if case == "yes":
        per_node, mem = info["per_node"], info["memory"]
        hits.append(Hit(
            direction="write",
            summary=(f"{fmt_bytes(per_node)} written per node, more than "
                     f"{pct(th.dirty_ratio)} of the {fmt_bytes(mem)} node memory"
                     + ("" if info["memory_known"] else " (the largest node memory assumed: "
                        "node_memory_max_bytes)")),
            values={"bytes_written_per_node": int(per_node), "node_memory_bytes": int(mem),
                    "dirty_ratio": th.dirty_ratio, "nodes": info["nodes"],
                    "judged": "measured" if info["memory_known"] else "assumed memory"},
            cost_s=cost(model, model.files.category == APP, ("write",), ("POSIX",), 0.1),
        ))
    return hits


def _write_case(model: Model, th: Thresholds) -> tuple[str, dict[str, Any]]:
    """The dirty-ratio case (NERSC: writes per node much larger than 40% of node memory):
    "yes", "no" or "unknown", with the numbers. The busiest node wrote between the bytes
    per node of an even spread and everything (when the node count is unknown, each node
    holds at least one rank); the node memory is the one given or in the log, else the
    assumed range node_memory_min_bytes .. node_memory_max_bytes decides when it can."""
    written = float(model.metrics.bytes_by_dir["write"])
    n = max(model.job.nprocs, 1)
    nodes = model.job.nodes or (1 if n == 1 else None)
    lo, hi = (written / nodes, written / nodes) if nodes else (written / n, written)
    mem = model.job.node_memory_bytes or th.node_memory_bytes
    small, large = (mem, mem) if mem else (th.node_memory_min_bytes, th.node_memory_max_bytes)
    info: dict[str, Any] = {"per_node": lo, "memory": large, "nodes": nodes,
                            "memory_known": bool(mem), "lo": lo, "hi": hi}
    if lo > th.dirty_ratio * large:
        return "yes", info
    if hi <= th.dirty_ratio * small:
        return "no", info
    return "unknown", info


def _needs_memory(model: Model, th: Thresholds) -> str | None:
    """node memory (--node-memory) or the node count (--nodes), for the write case"""
    case, info = _write_case(model, th)
    if case != "unknown":
        return None
    if info["memory_known"]:
        return (f"the node count, for the write case: pass --nodes N (between "
                f"{fmt_bytes(info['lo'])} and {fmt_bytes(info['hi'])} written per node)")
    below = info["hi"] / th.dirty_ratio
    return (f"node memory, for the write case: pass --node-memory SIZE, one node's memory "
            f"(e.g. --node-memory 256G); it applies to nodes of less than {fmt_bytes(below)}")


def _direct_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text=("Try direct I/O for this stream (O_DIRECT with 4 KiB-aligned buffers and "
                     "sizes, MPIO_DIRECT_READ/WRITE, H5Pset_fapl_direct); keep buffered I/O if it "
                     "does not measure faster: most patterns gain from the page cache."),
               artifacts=fixes.snippets("direct_io", CodeChange(
                   "direct I/O (O_DIRECT, aligned buffers)", "posix",
                   ("open(O_DIRECT)", "posix_memalign"), knob="posix.mode", value="direct",
                   direction=hit.direction or "")) + fixes.cray_direct_io(model))


def rules() -> list[Rule]:
    stripe_src = (Source(KAUST, "Lustre file striping / WRF 12x speedup with file striping",
                         "files larger than 100 GB must be striped; striping aggregates OST "
                         "bandwidth"),
                  Source(NUG_2017, "Tip 6", "lfs setstripe --size --count filename"))
    return [
        Rule(id="stripe-shared-file", family="lustre", severity="high",
             title="A large shared file written by many ranks sits on one OST",
             why="One OST serves every writer; striping spreads them over several servers.",
             sources=stripe_src,
             effect=("WRF: default striping 1 -> 144 OSTs, I/O 2094 s -> 174 s (12x), total "
                     "3x; a combustion code 2.14x I/O with 4 stripes (KAUST)."),
             trigger=_shared_unstriped, fix=_stripe_fix, requires=needs_lustre,
             cost="the slowest rank's time on those files (a bound)"),
        Rule(id="stripe-huge-file", family="lustre", severity="high",
             title="A file larger than 100 GB is not striped",
             why="Unstriped huge files fill single OSTs and serialise on one server.",
             sources=stripe_src,
             effect="WRF 12x I/O speedup from striping over 144 OSTs (KAUST).",
             trigger=_huge_unstriped, fix=_stripe_fix, requires=needs_lustre,
             cost="the slowest rank's time on those files (a bound)"),
        Rule(id="stripe-small-files", family="lustre", severity="info",
             title="Small single-process files striped over several OSTs",
             why=("A small file used by one process gains nothing from striping and costs a "
                  "request to each OST."),
             sources=(Source(KAUST, "I/O Best Practices",
                             "Place small files (< 1 MB to 1 GB) on single OSTs: "
                             "lfs setstripe -s 1m -i -1 -c 1"),),
             effect="No published figure.",
             trigger=_small_striped, fix=_stripe_fix, requires=needs_lustre,
             cost=("the slowest rank's metadata time (open, close, stat) on those files: extra "
                   "stripes cost there, one object per OST, not in moving the bytes")),
        Rule(id="stripe-size-mismatch", family="lustre", severity="warn",
             title="Request size and stripe size do not match",
             why="Requests that straddle stripes touch two OSTs and contend with neighbours.",
             sources=(Source(CSC_LUSTRE, "Striping",
                             "striping_unit hint equal to the 1 MB stripe: 2.27x"),
                      Source(KAUST, "File Striping: Physical and Logical Views",
                             "not stripe aligned -> contention")),
             effect="BTIO: striping_unit = stripe size, 1293 -> 2940 MiB/s (2.27x, CSC).",
             trigger=_stripe_size, fix=_stripe_size_fix, requires=needs_lustre,
             cost="the slowest rank's time on those files (a bound)"),
        Rule(id="direct-io", family="node", severity="info", directional=True,
             title="Candidate for direct I/O",
             why=("Large one-time sequential reads, or writes per node above the 40% dirty "
                  "ratio of node memory, gain little from the page cache."),
             sources=(Source(NERSC_KNL, "Direct I/O vs. Buffered I/O",
                             "IO per node much larger than 40% (dirty ratio) of node memory"),
                      Source(NUG_2017, "Tip 3", "Direct IO can be better in large one-time read"),
                      Source(CUG_2017, "IO Path in Different IO Modes",
                             "buffered vs sync vs direct I/O")),
             effect="HDF5 with H5Pset_fapl_direct: up to 11% faster (NERSC).",
             trigger=_direct, fix=_direct_fix,
             partly=_needs_memory,
             cost="a tenth of the time in that direction (the published gain is 11%)"),
    ]
