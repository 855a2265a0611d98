"""Rules on how many processes do the I/O: one rank doing all of the job's I/O while every
other rank waits (the spokesperson pattern, a mechanism: its time is the whole job's), and
one process per node doing the node's I/O (an experiment: more streams per node).

The lone rank is judged from the bytes each rank moved (``Metrics.rank_bytes``: MPI-IO
bytes for MPI-IO files, POSIX and STDIO bytes for the others; a reduced record spread over
its ranks, so a shared file every rank wrote never shows one rank), whatever the rank-to-node
map says: on one node or on a thousand, the other ranks wait for it (in the MPI_Gather before
it writes, the MPI_Bcast after it reads, a barrier) and its I/O time is run time of the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose import batch_scripts, fixes, fixes_lustre
from iolab.diagnose.rules.base import (
    CUG_2017,
    KAUST,
    NERSC_KNL,
    FileEvidence,
    Fix,
    Hit,
    Rule,
    Source,
    fmt_bytes,
    fmt_seconds,
    pct,
)
from iolab.diagnose.rules.common import needs_complete
from iolab.diagnose.striping import stripe_counts
from iolab.model.files import APP

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model

# Layers whose records name a rank's own bytes on a file (MPI-IO first: for an MPI-IO file
# the POSIX layer below may be an aggregator's, not the rank's own data).
_LAYERS = (("MPI-IO", "MPIIO"), ("POSIX", "POSIX"), ("STDIO", "STDIO"))


@dataclass
class LoneRank:
    """The rank that moved nearly all of the job's bytes."""

    rank: int
    share: float  # of the job's bytes
    job_bytes: float
    io_time_s: float  # the rank's I/O time (each file once, at its costliest layer)
    files: dict[int, tuple[int, int]]  # file index -> (bytes read, bytes written) by the rank


def lone_rank(model: Model, th: Thresholds) -> LoneRank | None:
    """The rank that moved at least ``single_stream_share`` of the job's bytes (at least
    ``lone_stream_min_bytes`` in all) in a job of several ranks, else None."""
    m = model.metrics
    tot = float(m.rank_bytes.sum())
    if model.job.nprocs < 2 or m.rank_bytes.size < 2 or tot < th.lone_stream_min_bytes:
        return None
    top = int(m.rank_bytes.argmax())
    share = float(m.rank_bytes[top]) / tot
    if share < th.single_stream_share:
        return None
    t = float(m.rank_io_time_s[top]) if top < m.rank_io_time_s.size else 0.0
    return LoneRank(top, share, tot, t, _rank_files(model, top))


def _rank_files(model: Model, rank: int) -> dict[int, tuple[int, int]]:
    """The application files ``rank``'s own records moved bytes on: bytes read and written,
    at the layer the program called (MPI-IO over the POSIX below it)."""
    out: dict[int, tuple[int, int]] = {}
    for mod, prefix in _LAYERS:
        md = model.mods.get(mod)
        if md is None or len(md) == 0:
            continue
        mine = model.app_mask(md) & (md.ranks == rank) & (md.file_index >= 0)
        rd = md.pos(f"{prefix}_BYTES_READ")
        wr = md.pos(f"{prefix}_BYTES_WRITTEN")
        for j in np.nonzero(mine)[0].tolist():
            i = int(md.file_index[j])
            if i in out and mod != "STDIO":
                continue  # the MPI-IO record already holds this file's bytes
            r0, w0 = out.get(i, (0, 0))
            if rd[j] + wr[j] > 0:
                out[i] = (r0 + int(rd[j]), w0 + int(wr[j]))
    return out


# Where the other ranks wait while one rank does the job's I/O.
_WAITS = {"wrote": "in the gather before it writes, or a barrier",
          "read": "in the broadcast or scatter after it reads, or a barrier",
          "moved": "in the gather before it writes, the broadcast after it reads, or a barrier"}


def _verb(read: int, written: int) -> str:
    return "wrote" if read <= 0.1 * written else "read" if written <= 0.1 * read else "moved"


def _lone_stream(model: Model, th: Thresholds) -> list[Hit]:
    lone = lone_rank(model, th)
    if lone is None:
        return []
    n = model.job.nprocs
    rd = sum(r for r, _ in lone.files.values())
    wr = sum(w for _, w in lone.files.values())
    verb = _verb(rd, wr)
    order = sorted(lone.files, key=lambda i: -sum(lone.files[i]))
    paths = model.files.paths
    t = lone.io_time_s
    waiting = t * (n - 1)
    first = paths[order[0]] if order else "its files"
    idle = (f"{waiting / 3600:,.0f} rank-hours" if waiting >= 3600 else
            f"{waiting:,.1f} rank-seconds")
    return [Hit(
        summary=(f"rank {lone.rank} {verb} {pct(lone.share)} of the job's "
                 f"{fmt_bytes(lone.job_bytes)} ({len(order)} file(s), e.g. {first}) in "
                 f"{fmt_seconds(t)} of I/O while the {n - 1} other ranks moved almost nothing: "
                 f"they wait for it ({_WAITS[verb]}), so its I/O time is run time of the "
                 "whole job: "
                 f"{idle} of waiting"),
        values={"rank": lone.rank, "share": round(lone.share, 4), "bytes": int(lone.job_bytes),
                "bytes_read": rd, "bytes_written": wr, "nprocs": n, "files": len(order),
                "writer_time_s": round(t, 6),
                "waiting_rank_s": round(waiting, 3), "judged": "per job"},
        files=[FileEvidence(paths[i], {"bytes_read": lone.files[i][0],
                                       "bytes_written": lone.files[i][1],
                                       "ranks_opening": int(model.files.nranks[i])})
               for i in order[:10]],
        data={"rank": lone.rank, "verb": verb, "paths": [paths[i] for i in order]},
        # balanced over the ranks at the same per-stream speed, each would take t / n: the
        # rest is what the job waits for (per-rank-imbalance's model, at its limit)
        cost_s=t * (1 - 1 / n),
        claims=[(paths[i], "*") for i in order],
    )]


# The code each direction of a lone stream gets: a job that only reads gets read calls.
_LONE_SNIPPETS = {"read": ("lone_reader",), "wrote": ("lone_writer",),
                  "moved": ("lone_writer", "lone_reader")}


def _lone_stream_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    rank, verb = hit.data.get("rank", 0), hit.data.get("verb", "moved")
    n = model.job.nprocs
    paths = hit.data.get("paths", [])
    reading = verb == "read"
    do, who = ("reads", "readers") if reading else ("writes", "writers")
    calls = ("MPI_File_read_at_all, H5Dread with H5FD_MPIO_COLLECTIVE, ncmpi_get_vara_all"
             if reading else
             "MPI_File_write_at_all, H5Dwrite with H5FD_MPIO_COLLECTIVE, ncmpi_put_vara_all")
    instead = (f"instead of rank {rank} reading it all and broadcasting or scattering it"
               if reading else f"instead of gathering the data to rank {rank}")
    sel = np.zeros(len(model.files), dtype=bool)
    for p in paths:
        if p in model.files.paths:
            sel[model.files.paths.index(p)] = True
    lfs = fixes_lustre.lfs_setstripe(model, paths, stripe_counts(model, sel & (
        model.files.category == APP), by_writers=False, at_least=2), fixes.MiB,
        "stripe_for_parallel_io.lfs.sh", more_stripes=True)
    return Fix(text=(f"Parallel I/O: every one of the {n} ranks {do} its own part of the file "
                     f"({calls}: collective MPI-IO, parallel HDF5 or PnetCDF) {instead}; "
                     f"at the least, several {who} (one per node, or groups from "
                     f"MPI_Comm_split each with its own {who[:-1]} or file). On Lustre, stripe "
                     f"the file over several OSTs so that the {who} reach several servers"
                     + (" (`stripe_for_parallel_io.lfs.sh`)" if lfs else "") + "."),
               artifacts=[a for topic in _LONE_SNIPPETS[verb] for a in fixes.snippets(topic)]
               + lfs)


# --- one process per node (the rank-to-node map known) -------------------------------------

def _per_node(model: Model, th: Thresholds) -> list[Hit]:
    """Per node: one rank moves nearly all of the node's bytes while the node has other
    ranks, or many cores (``--cores-per-node``), that could do I/O too. Not when one rank
    does all of the job's I/O: that is single-io-stream, the job's waiting."""
    tot = float(model.metrics.rank_bytes.sum())
    if (model.job.nprocs < 2 or tot < th.single_stream_min_bytes
            or not model.job.rank_hosts or len(model.job.rank_hosts) < model.job.nprocs
            or lone_rank(model, th) is not None):
        return []
    by_host: dict[str, list[int]] = {}
    for rank, host in model.job.rank_hosts.items():
        if 0 <= rank < model.metrics.rank_bytes.size:
            by_host.setdefault(host, []).append(rank)
    cores = model.job.cores_per_node
    rows = []
    for host, ranks in sorted(by_host.items()):
        b = model.metrics.rank_bytes[ranks]
        node = float(b.sum())
        if node <= 0:
            continue
        top = int(np.argmax(b))
        share = float(b[top]) / node
        io_ranks = int((b >= 0.01 * node).sum())
        if share >= th.single_stream_share and (len(ranks) >= 2 or (cores or 0) >= 4):
            rows.append((host, ranks[top], share, node, len(ranks), io_ranks))
    moved = sum(r[3] for r in rows)
    if not rows or moved < 0.5 * tot:
        return []
    rows.sort(key=lambda r: -r[3])
    h0 = rows[0]
    cpn = f" of {cores} cores" if cores else ""
    return [Hit(
        summary=(f"{len(rows)} of {len(by_host)} node(s) do their I/O through one process: "
                 f"e.g. on {h0[0]} rank {h0[1]} moved {pct(h0[2])} of the node's "
                 f"{fmt_bytes(h0[3])} ({h0[4]} rank(s){cpn} on the node)"),
        values={"nodes": len(by_host), "single_stream_nodes": len(rows),
                "bytes_on_those_nodes": int(moved), "bytes": int(tot),
                "max_ranks_per_node": max(len(r) for r in by_host.values()),
                "cores_per_node": cores, "judged": "per node"},
        files=[FileEvidence(h, {"rank": r, "share": round(sh, 4), "bytes": int(nb),
                                "ranks_on_node": nr, "ranks_doing_io": io}, kind="node")
               for h, r, sh, nb, nr, io in rows[:10]],
        cost_s=max(float(model.metrics.rank_io_time_s[r[1]]) for r in rows),
    )]


def _per_node_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text=("Let several processes per node (or several threads) do the I/O: a shared "
                     "file with collective MPI-IO, or subset aggregation; bind them to cores."),
               artifacts=fixes.collective_code(model, [e.path for e in hit.files])
               + batch_scripts.slurm_affinity(model))


def rules() -> list[Rule]:
    knl = Source(NERSC_KNL, "I/O Parallelism",
                 "parallelizing the IO with multiple cores can increase bandwidth")
    return [
        Rule(id="single-io-stream", family="node", severity="warn",
             title="One process does all the I/O while the others wait",
             why=("One rank reads or writes the whole job's data (gathered to it, or read and "
                  "broadcast) while every other rank waits: the I/O runs at one stream's "
                  "speed and its time is the whole job's run time, on every rank. Serial "
                  "spokesperson I/O does not scale; every rank writing its part of the shared "
                  "file (collective MPI-IO, parallel HDF5, PnetCDF) does."),
             sources=(Source(KAUST, "Serial I/O: Spokesperson",
                             "Limited by single I/O process. Pattern does not scale. Time "
                             "increases with number of processes."),
                      Source(KAUST, "Parallel I/O: Shared File / Pattern Combinations",
                             "Each process performs I/O to a single file which is shared; "
                             "or a subset of processes which perform I/O"),
                      knl),
             effect=("With n ranks each doing its part at the same speed the I/O time falls "
                     "towards 1/n (up to the file system's bandwidth; stripe the file); the "
                     "cost assumes that."),
             trigger=_lone_stream, fix=_lone_stream_fix,
             requires=needs_complete("POSIX", "STDIO", "MPI-IO"),
             cost=("the lone rank's I/O time beyond an even share of it, t x (1 - 1/ranks): "
                   "what every other rank waits, what parallel I/O at the same per-stream "
                   "speed saves")),
        Rule(id="io-stream-per-node", family="node", severity="warn",
             title="One process per node does the node's I/O",
             why=("A single stream per node cannot use a many-core node's bandwidth (KNL single "
                  "stream 2.3x slower than Haswell at the same frequency). Judged per node, "
                  "with the rank-to-node map (iolab profiles, DXT host names)."),
             sources=(knl, Source(CUG_2017, "Summary I", "single-core I/O ~ CPU frequency")),
             effect=("16-32 threads on one KNL core saturate Lustre bandwidth (NERSC); "
                     "Haswell/KNL single-stream ratio 2.30 (CUG 2017)."),
             trigger=_per_node, fix=_per_node_fix,
             requires=needs_complete("POSIX", "STDIO", "MPI-IO"),
             cost="the I/O time of the busiest of those processes"),
    ]
