"""Rules on where the time and the bytes went: I/O-bound job, metadata time, STDIO share,
read/write balance, formatted text output."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose import batch_scripts, fixes
from iolab.diagnose.rules.base import (
    CSC_LUSTRE,
    DRISHTI,
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
from iolab.diagnose.rules.common import (
    claims_of,
    cost,
    costliest,
    file_time,
    needs_complete,
    per_op,
    small_limit,
)
from iolab.model.files import APP
from iolab.model.raw import DXT_UNREADABLE

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model


def _io_bound(model: Model, th: Thresholds) -> list[Hit]:
    m = model.metrics
    if m.run_time_s < th.min_run_time_s or m.io_fraction < th.io_bound_warn:
        return []
    k = m.io_time_by_kind_s
    sev = "high" if m.io_fraction >= th.io_bound_high else "warn"
    return [Hit(
        summary=(f"I/O took {pct(m.io_fraction)} of the run ({m.io_time_s:.2f} s of "
                 f"{m.run_time_s:.2f} s, slowest rank): read {k['read']:.2f} s, write "
                 f"{k['write']:.2f} s, metadata {k['meta']:.2f} s summed over ranks"),
        values={"io_time_s": round(m.io_time_s, 6), "run_time_s": round(m.run_time_s, 6),
                "io_fraction": round(m.io_fraction, 4),
                "read_time_s": round(k["read"], 6), "write_time_s": round(k["write"], 6),
                "meta_time_s": round(k["meta"], 6)},
        severity=sev,
        cost_s=m.io_time_s,
    )]


def _io_bound_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    # A log whose DXT section could not be read already has DXT: advise what reads
    trace = ("`iolab profile --trace` (this log's DXT could not be read: see the notes)"
             if any(n.startswith(DXT_UNREADABLE) for n in model.job.notes)
             else "Darshan's DXT or `iolab profile`")
    return Fix(
        text=("Fix the costliest findings of this report first (when none is listed, no "
              f"known pattern explains the time: record a trace, {trace}, to see which calls "
              "take it); then keep system noise off the I/O path with core specialisation "
              "and place ranks with explicit affinity."),
        artifacts=batch_scripts.slurm_affinity(model),
    )


def _metadata(model: Model, th: Thresholds) -> list[Hit]:
    m = model.metrics
    meta_rank = 0.0
    for mod, prefix in (("POSIX", "POSIX"), ("STDIO", "STDIO"), ("MPI-IO", "MPIIO")):
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        app = model.app_mask(md)
        t = md.fcol(f"{prefix}_F_META_TIME")
        per = np.zeros(max(model.job.nprocs, 1))
        own = app & (md.ranks >= 0)
        np.add.at(per, np.minimum(np.maximum(md.ranks[own], 0), len(per) - 1), t[own])
        sh = app & (md.ranks < 0)
        spread = float((t[sh] / np.maximum(md.span_n[sh], 1)).sum()) if sh.any() else 0.0
        meta_rank = max(meta_rank, float(per.max()) + spread)
    over_rank = meta_rank >= th.metadata_time_rank_s
    # A share alone needs many metadata calls: one slow close() that flushes a large file
    # is write time showing up as metadata, not a metadata problem.
    n_meta = int(model.layers.posix.opens.sum() + model.layers.stdio.opens.sum()
                 + model.layers.posix.stats.sum())
    over_share = (m.meta_fraction >= th.metadata_share and m.run_time_s >= th.min_run_time_s
                  and m.meta_time_s >= 0.1 * m.run_time_s and n_meta >= th.opens_min_total)
    if not (over_rank or over_share):
        return []
    opens = model.layers.posix.opens + model.layers.stdio.opens
    app = model.files.category == APP
    meta_t = file_time(model, ("meta",))
    top = costliest(model, app, opens, ("meta",), k=5)
    return [Hit(
        summary=(f"metadata (open/stat/close/sync) took {meta_rank:.2f} s on the busiest rank, "
                 f"{m.meta_time_s:.2f} s summed over ranks ({pct(m.meta_fraction)} of the I/O "
                 "time)"),
        values={"meta_time_s": round(m.meta_time_s, 6), "meta_fraction": round(m.meta_fraction, 4),
                "meta_time_max_rank_s": round(meta_rank, 6)},
        files=[FileEvidence(model.files.paths[i], {"opens": int(opens[i]),
                                                   "meta_time_s": round(float(meta_t[i]), 3)})
               for i in top],
        severity="high" if over_rank else "warn",
        cost_s=meta_rank,
        # its seconds are the files' metadata time, not their reads and writes
        claims=claims_of(model, app & (meta_t > 0), "meta"),
    )]


def _metadata_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(
        text=("Open each file once and keep it open; put many small files into fewer shared "
              "files (HDF5, PnetCDF, ADIOS) or spread them over sub-directories; avoid stat "
              "loops (ls -l) on Lustre."),
        artifacts=fixes.snippets("fewer_opens"),
    )


def _stdio(model: Model, th: Thresholds) -> list[Hit]:
    m = model.metrics
    std = m.ifaces.get("STDIO")
    if std is None or m.total_bytes <= 0:
        return []
    share = std.total_bytes / m.total_bytes
    if share < th.stdio_share or std.total_bytes < th.stdio_min_bytes:
        return []
    # STDIO costs in its small calls (formatting, a buffer copy each); an fwrite of 16 MiB
    # is one write() as with POSIX: large requests through STDIO are not the problem.
    calls = std.ops["read"] + std.ops["write"]
    if calls and std.total_bytes / calls >= small_limit(model, th):
        return []
    sb = model.layers.stdio.bytes
    app = model.files.category == APP
    top = costliest(model, app, sb, modules=("STDIO",), k=5)
    return [Hit(
        summary=(f"STDIO (fopen/fread/fwrite/fprintf) moved {fmt_bytes(std.total_bytes)}, "
                 f"{pct(share)} of the application's bytes"),
        values={"stdio_bytes": std.total_bytes, "total_bytes": m.total_bytes,
                "stdio_share": round(share, 4), "stdio_read_bytes": std.bytes["read"],
                "stdio_write_bytes": std.bytes["write"]},
        files=[FileEvidence(model.files.paths[i], {"bytes": int(sb[i])}) for i in top],
        data={"paths": [model.files.paths[i] for i in top]},
        cost_s=cost(model, app & (sb > 0), modules=("STDIO",)),
    )]


def _stdio_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    paths = hit.data.get("paths", [])
    d = fixes.job_direction(model, None)  # a job that wrote nothing gets read advice
    return Fix(
        text=(f"Move bulk data off STDIO: {d} it with POSIX/MPI-IO/HDF5 in large requests, "
              "or at least give the streams large buffers (setvbuf, iolab buffer, IOBUF)."),
        artifacts=fixes.iolab_buffer(model, paths) + fixes.snippets(f"buffered_{d}s"),
    )


def _balance(model: Model, th: Thresholds) -> list[Hit]:
    m = model.metrics
    r, w = m.bytes_by_dir["read"], m.bytes_by_dir["write"]
    if r + w < th.min_total_bytes:
        return []
    kind = "read-intensive" if r > 1.1 * w else "write-intensive" if w > 1.1 * r else "balanced"
    return [Hit(
        summary=f"{kind}: read {fmt_bytes(r)}, wrote {fmt_bytes(w)} (POSIX + STDIO)",
        values={"bytes_read": r, "bytes_written": w,
                "read_share": round(r / (r + w), 4)},
    )]


def _balance_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text="Information only: tune the direction that dominates first.")


_TEXT_SUFFIXES = (".txt", ".csv", ".out", ".log", ".xyz", ".dat.txt", ".json", ".tsv")


def _ascii(model: Model, th: Thresholds) -> list[Hit]:
    md = model.mods.get("STDIO")
    if md is None or len(md) == 0:
        return []
    w = model.layers.stdio.writes
    b = model.layers.stdio.bytes_written
    app = model.files.category == APP
    avg = per_op(b, w)
    # A text suffix says "formatted" only when names are real (not anonymised hashes).
    texty = np.array([not model.job.names_anonymised and p.lower().endswith(_TEXT_SUFFIXES)
                      for p in model.files.paths], dtype=bool)
    sel = app & (w >= th.buffer_min_ops) & ((avg <= th.ascii_max_avg_bytes) | texty)
    sel &= b >= th.min_total_bytes
    if not sel.any():
        return []
    idx = np.nonzero(sel)[0]
    top = idx[np.argsort(-b[idx])][:10]
    return [Hit(
        summary=(f"{len(idx)} file(s) written with {int(w[idx].sum())} small STDIO writes "
                 f"(average {fmt_bytes(b[idx].sum() / w[idx].sum())}): formatted text output"),
        values={"files": int(len(idx)), "stdio_writes": int(w[idx].sum()),
                "stdio_bytes_written": int(b[idx].sum())},
        files=[FileEvidence(model.files.paths[i], {"writes": int(w[i]), "bytes": int(b[i]),
                                                   "avg_bytes": round(float(avg[i]), 1)})
               for i in top],
        cost_s=cost(model, sel, ("write",), ("STDIO",)),
        claims=claims_of(model, sel, "write"),
    )]


def _ascii_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text=("Write numbers in binary (unformatted) form: smaller files, no formatting "
                     "cost, fewer system calls; keep text for small human-read logs."),
               artifacts=fixes.snippets("binary_output"))


def rules() -> list[Rule]:
    return [
        Rule(
            id="io-bound", family="time", severity="warn",
            title="The job spends a large share of its run time in I/O",
            why=("Before tuning anything, check that I/O takes a significant share of the run: "
                 "a code that scales its compute leaves I/O as the bottleneck (KAUST: 1% serial "
                 "I/O at 16 cores becomes 39% at 1024)."),
            sources=(Source(KAUST, "Is my code I/O bound? / Why parallel I/O",
                            "1% of run time in serial I/O grows to 39% when compute scales 64x"),
                     Source(CSC_LUSTRE, "Conclusion",
                            "First, verify that your I/O causes issues or takes significant time"),
                     Source(NERSC_KNL, "Core Specialization / Process Affinity",
                            "#SBATCH -S 4; srun --cpu-bind=cores -c")),
            effect=("Core specialisation raised 32-node HDF5 collective bandwidth from 6.3 to "
                    "7.6 GB/s; affinity cut WRF restart reading from 300 s to 36 s (8x)."),
            trigger=_io_bound, fix=_io_bound_fix, overview=True,
            cost="the slowest rank's I/O time (read + write + metadata)"),
        Rule(
            id="metadata-time", family="time", severity="high",
            title="Metadata operations (open, stat, close, sync) cost time",
            why=("Every open/close/stat goes to the one metadata server; many files or frequent "
                 "opens make it the bottleneck for this job and for everyone else."),
            sources=(Source(KAUST, "I/O Best Practices",
                            "Avoid opening and closing files frequently; limit files per "
                            "directory; use ls -l only where necessary"),
                     Source(DRISHTI, "metadata time", "30 s of metadata per rank")),
            effect="No published figure; the time shown in the evidence is the upper bound.",
            trigger=_metadata, fix=_metadata_fix,
            cost="metadata time of the busiest rank (a reduced record counts its average)"),
        Rule(
            id="stdio-share", family="volume", severity="warn",
            title="A large share of the data goes through STDIO",
            why=("STDIO streams buffer a few KiB and issue one system call per buffer: bulk data "
                 "through them in small calls means many small requests the file system serves "
                 "badly (judged only when the average STDIO call is small: a large fwrite is "
                 "one write() as through POSIX)."),
            sources=(Source(KAUST, "IOBuf for serial",
                            "IOBUF intercepts standard I/O and caches sequential access"),
                     Source(DRISHTI, "STDIO usage", "STDIO share of the traffic above 10%")),
            effect="IOBUF with 4 x 64 MiB buffers: 1080 s -> 4.5 s for a 1 GB file (KAUST).",
            trigger=_stdio, fix=_stdio_fix, requires=needs_complete("POSIX"),
            cost="the slowest rank's STDIO time on the files concerned"),
        Rule(
            id="read-write-balance", family="volume", severity="info",
            title="Read/write balance of the job",
            why="Knowing which direction dominates tells which findings matter most.",
            sources=(Source(DRISHTI, "operation intensity", "read vs write intensive job"),),
            effect="Information only.",
            trigger=_balance, fix=_balance_fix, overview=True),
        Rule(
            id="formatted-output", family="volume", severity="warn",
            title="Formatted (ASCII) output through STDIO",
            why=("Formatted output costs CPU to format, is larger than binary and is written in "
                 "many tiny requests; binary/unformatted output is smaller and faster."),
            sources=(Source(KAUST, "I/O Best Practices (3)",
                            "Save data in binary/unformatted form: less space, faster"),
                     Source(NUG_2017, "Tip 6", "General recommendations still apply")),
            effect="No published figure.",
            trigger=_ascii, fix=_ascii_fix,
            cost="the slowest rank's STDIO write time on the files concerned"),
    ]
