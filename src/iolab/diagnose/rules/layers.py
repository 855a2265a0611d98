"""Rules that read across layers (PnetCDF/HDF5 -> MPI-IO -> POSIX, STDIO), from the model's
per-file columns (:mod:`iolab.model.layers`): read-modify-write under collective writes,
write amplification, one POSIX writer under a balanced MPI-IO layer, MPI-IO time that is
waiting rather than I/O (its own module, iolab.diagnose.rules.time_skew, listed here in report
order), many tiny collective calls, slow close/flush, a small file that costs minutes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose import fixes
from iolab.diagnose.jobfacts import job_facts
from iolab.diagnose.rules import time_skew
from iolab.diagnose.rules.base import (
    CSC_LUSTRE,
    KAUST,
    NERSC_KNL,
    Fix,
    Hit,
    Rule,
    Source,
    fmt_bytes,
    fmt_seconds,
)
from iolab.diagnose.rules.common import (
    claims_of,
    cost,
    costliest,
    file_rows,
    needs_complete,
    worst,
)
from iolab.diagnose.rules.crosslayer import (
    app_files,
    call_mode,
    mpiio_overhead,
    tiny_collective_files,
)
from iolab.diagnose.rules.mpiio import _library_of, hdf5_metadata_collective
from iolab.settings.change import CodeChange

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model


def _stripe(model: Model) -> tuple[int, int] | None:
    """The job's most common Lustre layout (stripe size, stripe count), when known."""
    lay = [v for v in model.stripes.values() if v[0] > 0]
    return max(set(lay), key=lay.count) if lay else None


# --- read-modify-write ---------------------------------------------------------------------

def _rmw(model: Model, th: Thresholds) -> list[Hit]:
    L = model.layers
    sel = app_files(model) & (L.posix_reads_under_mpi_writes >= th.rmw_min_reads)
    if not sel.any():
        return []
    top = worst(L.posix.time_s["read"] + L.posix_reads_under_mpi_writes * 1e-12, sel)
    reads = int(L.posix_reads_under_mpi_writes[sel].sum())
    zero = int(L.zero_byte_posix_reads[sel].sum())
    i0 = top[0]
    return [Hit(
        summary=(f"{reads} POSIX reads "
                 f"({fmt_bytes(L.posix_bytes_read_under_mpi_writes[sel].sum())}, {zero} of them "
                 f"of 0 bytes) inside {int(sel.sum())} file(s) the program only "
                 f"writes through MPI-IO ({call_mode(model, i0)} writes): MPI-IO reads each region "
                 "before writing it (read-modify-write)"),
        values={"files": int(sel.sum()), "posix_reads": reads, "zero_byte_reads": zero,
                "posix_bytes_read": int(L.posix_bytes_read_under_mpi_writes[sel].sum()),
                "mpiio_writes": int(L.mpiio.writes[sel].sum()),
                "mpiio_reads": int(L.mpiio.reads[sel].sum())},
        files=file_rows(model, top, {
            "mpiio_writes": L.mpiio.writes.astype(np.int64),
            "mpiio_write_bytes": L.mpiio.bytes_written.astype(np.int64),
            "posix_reads": L.posix.reads.astype(np.int64),
            "posix_read_bytes": L.posix.bytes_read.astype(np.int64),
            "posix_writes": L.posix.writes.astype(np.int64),
            "posix_read_time_s": np.round(L.posix.time_s["read"], 3),
            "mode": lambda i: call_mode(model, i)}),
        data={"collective": call_mode(model, i0) == "collective"},
        cost_s=cost(model, sel, ("read",), ("POSIX",)),
        claims=claims_of(model, sel, "read"),
    )]


def _rmw_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    lay = _stripe(model)
    align = (f"align the file domains to the {fmt_bytes(lay[0])} stripe (striping_unit "
             f"{lay[0]}) and " if lay else "")
    paths = [e.path for e in hit.files]
    if hit.data.get("collective"):
        # Inside a collective write, romio_ds_write does not act: the two-phase aggregator
        # reads its file domain to fill the holes whatever it says. ROMIO's Lustre driver
        # has its own switch for it; elsewhere only calls without holes avoid the reads.
        facts = job_facts(model)
        lustre = bool(paths) and all(facts.on_lustre(p) for p in paths)
        hints = {"romio_lustre_ds_in_coll": "disable"} if lustre else {}
        if lay and hints:
            hints["striping_unit"] = str(lay[0])
        text = ("Collective buffering fills the holes of each call by reading the "
                "aggregator's file domain first (romio_ds_write does not act inside collective "
                "calls): " + align + "describe each call's pieces so that it covers a "
                "contiguous block without holes (a file view over all of a step's pieces, one "
                "write_all), or write the holes' regions too"
                + ("; on Lustre, ROMIO's Lustre driver skips the reads with "
                   "romio_lustre_ds_in_coll disable (each aggregator then writes only the "
                   "pieces: measure it)." if lustre else "."))
        return Fix(text=text, artifacts=fixes.romio_hints(model, hints, "romio_hints_no_rmw",
                                                          paths) if hints else [])
    hints = {"romio_ds_write": "disable"}
    if lay:
        hints["striping_unit"] = str(lay[0])
    text = ("Data sieving reads each extent to write a few blocks into it: " + align
            + "turn it off for writes (romio_ds_write disable; each rank then writes only "
            "its blocks: more, smaller requests, so measure), or make the writes "
            "collective so that aggregators write whole regions.")
    return Fix(text=text, artifacts=fixes.romio_hints(model, hints, "romio_hints_no_rmw",
                                                      paths))


# --- write amplification -------------------------------------------------------------------

def _amplification(model: Model, th: Thresholds) -> list[Hit]:
    L = model.layers
    extra = L.posix.bytes_written - L.mpiio.bytes_written
    sel = (app_files(model) & (L.mpiio.bytes_written > 0)
           & (L.write_amplification >= th.amplification_ratio)
           & (extra >= th.amplification_min_bytes))
    if not sel.any():
        return []
    top = costliest(model, sel, extra, ("write",), ("POSIX",))
    amp = float(L.posix.bytes_written[sel].sum() / L.mpiio.bytes_written[sel].sum())
    return [Hit(
        summary=(f"{fmt_bytes(L.posix.bytes_written[sel].sum())} reached POSIX for "
                 f"{fmt_bytes(L.mpiio.bytes_written[sel].sum())} written through MPI-IO "
                 f"({amp:.2f}x) on {int(sel.sum())} file(s)"),
        values={"files": int(sel.sum()), "amplification": round(amp, 3),
                "posix_bytes_written": int(L.posix.bytes_written[sel].sum()),
                "mpiio_bytes_written": int(L.mpiio.bytes_written[sel].sum()),
                "library_bytes_written": int(L.library_bytes_written[sel].sum())},
        files=file_rows(model, top, {
            **({"library": lambda i: L.library[i] or "-",
                "library_bytes": L.library_bytes_written.astype(np.int64)}
               if any(L.library[i] for i in top) else {}),
            "mpiio_bytes": L.mpiio.bytes_written.astype(np.int64),
            "posix_bytes": L.posix.bytes_written.astype(np.int64),
            "ratio": np.round(L.write_amplification, 2)}),
        data={"library": sorted({str(L.library[i]) for i in top if L.library[i]})},
        cost_s=cost(model, sel, ("write",), ("POSIX",), 1 - 1 / amp),
        claims=claims_of(model, sel, "write"),
    )]


def _amplification_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    libs = hit.data.get("library", [])
    paths = [e.path for e in hit.files]
    fill = ("; and turn off fill values for data the program writes completely "
            "(ncmpi_set_fill NC_NOFILL, H5Pset_fill_time H5D_FILL_TIME_NEVER)" if libs else "")
    extra = fixes.snippets("fill_mode") if libs else []
    if _all_collective_writes(model, paths):
        # Inside collective writes the aggregators write their whole file domains, holes
        # included: romio_ds_write does not act there (was: it was the fix)
        facts = job_facts(model)
        lustre = bool(paths) and all(facts.on_lustre(p) for p in paths)
        hints = {"romio_lustre_ds_in_coll": "disable"} if lustre else {}
        return Fix(text=("Stop writing bytes twice: the collective calls' aggregators write "
                         "whole file domains around the pieces (holes included; romio_ds_write "
                         "does not act inside collective calls): give each call contiguous "
                         "pieces without holes (a file view over a step's pieces)"
                         + ("; on Lustre, romio_lustre_ds_in_coll disable writes only the "
                            "pieces (measure it)" if lustre else "") + fill + "."),
                   artifacts=(fixes.romio_hints(model, hints, "romio_hints_no_sieving", paths)
                              if hints else []) + extra)
    return Fix(text=("Stop writing bytes twice: turn off data sieving for writes "
                     "(romio_ds_write disable), which rewrites whole buffers around small "
                     "pieces" + fill + "."),
               artifacts=fixes.romio_hints(model, {"romio_ds_write": "disable"},
                                           "romio_hints_no_sieving", paths) + extra)


def _all_collective_writes(model: Model, paths: list[str]) -> bool:
    """Every MPI-IO write on these files is collective (or split collective)."""
    w = model.layers.calls.writes
    idx = [model.files.paths.index(p) for p in paths if p in model.files.paths]
    if not idx:
        return False
    coll = (w["COLL"] + w["SPLIT"])[idx].sum()
    return bool(coll > 0 and coll >= sum(v[idx].sum() for v in w.values()))


# --- one POSIX writer under balanced MPI-IO ------------------------------------------------

def _single_writer_base(model: Model, th: Thresholds) -> np.ndarray:
    """Files every rank writes evenly through MPI-IO (the layer a writer hides under)."""
    L = model.layers
    ranks = model.files.nranks
    return (app_files(model) & (L.mpiio.writes > 0) & (ranks >= th.single_writer_min_ranks)
            & (_mpi_share(model) <= 2.0 / np.maximum(ranks, 1)))


def _mpi_share(model: Model) -> np.ndarray:
    L = model.layers
    return np.divide(L.mpiio.top_rank_bytes, L.mpiio.bytes, out=np.zeros(len(model.files)),
                     where=L.mpiio.bytes > 0)


def _single_writer(model: Model, th: Thresholds) -> list[Hit]:
    L = model.layers
    if "POSIX" in model.job.partial_modules:
        return _single_writer_partial(model, th)
    sel = (_single_writer_base(model, th) & (L.posix_top_rank_share >= th.single_stream_share)
           & (L.posix.bytes_written >= th.imbalance_min_bytes))
    if not sel.any():
        return []
    return [_writer_hit(model, sel, L.posix_top_rank_share, "of the POSIX bytes")]


def _writer_hit(model: Model, sel: np.ndarray, share: np.ndarray, of_what: str,
                partial: str = "") -> Hit:
    """One rank wrote ``share`` (of ``of_what``) of each selected file: its POSIX time is
    the cost, the time that k aggregators would split."""
    L = model.layers
    ranks = model.files.nranks
    mpi_share = _mpi_share(model)
    top = costliest(model, sel, L.posix.bytes_written, ("write",), ("POSIX",))
    i0 = top[0]
    k = _aggregators_wanted(model, int(ranks[i0]))
    t = float(L.posix.slowest_rank_time_s[sel].sum())
    return Hit(
        summary=(f"one rank wrote {100 * min(share[i0], 1.0):.0f}% {of_what} of "
                 f"{model.files.paths[i0]} while {int(ranks[i0])} ranks shared its MPI-IO "
                 f"writes evenly (largest rank {100 * mpi_share[i0]:.0f}%): one aggregator "
                 "did all the file-system I/O" + partial),
        values={"files": int(sel.sum()), "ranks": int(ranks[i0]),
                "posix_top_rank_share": round(float(min(share[i0], 1.0)), 4),
                "mpiio_top_rank_share": round(float(mpi_share[i0]), 4),
                "stripe_count": (_stripe(model) or (0, 0))[1] or None,
                "aggregators_wanted": k, "writer_time_s": round(t, 6)},
        files=file_rows(model, top, {
            "ranks": ranks, "mpiio_bytes": L.mpiio.bytes_written.astype(np.int64),
            "posix_bytes": L.posix.bytes_written.astype(np.int64),
            "posix_top_rank_share": np.round(np.minimum(share, 1.0), 3),
            "posix_slowest_s": np.round(L.posix.slowest_rank_time_s, 3)}),
        data={"k": k},
        cost_s=t * (1 - 1 / k),
        claims=claims_of(model, sel, "write"),
    )


# --- the same, when the POSIX records are partial ------------------------------------------
# Darshan (or iolab's record limit) left records out: a file's POSIX record may lack the
# ranks that ran out, so a share of the POSIX bytes means nothing. What still tells one
# writer: one rank's POSIX bytes against the file's MPI-IO bytes (a complete layer: records
# left out only add bytes elsewhere), or the cause itself: a file of one stripe written
# collectively through ROMIO, whose Lustre driver makes one aggregator per OST.

def _partial_evidence(model: Model, th: Thresholds) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray, np.ndarray]:
    """Per file: the writer's bytes as a share of the MPI-IO bytes; files that share
    shows one writer; files one stripe and collective writes show it; files left untold."""
    L = model.layers
    n = len(model.files)
    base = _single_writer_base(model, th) & (L.mpiio.bytes_written >= th.imbalance_min_bytes)
    writer = np.minimum(L.posix.top_rank_bytes, L.posix.bytes_written)
    share = np.divide(writer, L.mpiio.bytes_written, out=np.zeros(n),
                      where=L.mpiio.bytes_written > 0)
    measured = base & L.posix.present & (share >= th.single_stream_share)
    count = np.zeros(n, dtype=np.int64)
    pos = {int(i): k for k, i in enumerate(model.files.ids)}
    for rid, (_, c) in model.stripes.items():
        if int(rid) in pos:
            count[pos[int(rid)]] = c
    coll = np.array([call_mode(model, i) == "collective" for i in range(n)], dtype=bool)
    romio = job_facts(model).mpi.io != "ompio"
    by_layout = base & ~measured & (count == 1) & coll & romio
    # POSIX bytes that account for the data with no rank near all of it: many writers
    many = L.posix.bytes_written >= th.single_stream_share * L.mpiio.bytes_written
    untold = base & ~measured & ~by_layout & ~many
    return share, measured, by_layout, untold


def _posix_partial_why(model: Model) -> str:
    return model.job.partial_why.get("POSIX", "records were left out at run time")


def _single_writer_partial(model: Model, th: Thresholds) -> list[Hit]:
    share, measured, by_layout, _ = _partial_evidence(model, th)
    why = _posix_partial_why(model)
    if measured.any():
        return [_writer_hit(model, measured, share, "of the MPI-IO bytes",
                            f" (the POSIX records are partial: {why}; the share is of the "
                            "MPI-IO bytes, which are complete)")]
    if not by_layout.any():
        return []
    L = model.layers
    ranks = model.files.nranks
    top = costliest(model, by_layout, L.mpiio.bytes_written, ("write",), ("MPI-IO",))
    i0 = top[0]
    k = _aggregators_wanted(model, int(ranks[i0]))
    # the MPI-IO write time holds the writer's POSIX time and the exchange: a bound
    t = float(L.mpiio.slowest_rank_time_s[by_layout].sum())
    return [Hit(
        summary=(f"{model.files.paths[i0]} has one stripe and {int(ranks[i0])} ranks write it "
                 "collectively: ROMIO's Lustre driver makes one aggregator per OST, so one "
                 "rank did all its file-system writes (the POSIX records that would show the "
                 f"writer are partial: {why})"),
        values={"files": int(by_layout.sum()), "ranks": int(ranks[i0]),
                "posix_top_rank_share": None, "stripe_count": 1, "aggregators_wanted": k,
                "writer_time_s": None, "mpiio_slowest_s": round(t, 6)},
        files=file_rows(model, top, {
            "ranks": ranks, "mpiio_bytes": L.mpiio.bytes_written.astype(np.int64),
            "stripe_count": np.ones(len(model.files), dtype=np.int64),
            "mpiio_slowest_s": np.round(L.mpiio.slowest_rank_time_s, 3)}),
        data={"k": k}, cost_s=t * (1 - 1 / k), cost_bound=True,
        claims=claims_of(model, by_layout, "write"))]


def _single_writer_untold(model: Model, th: Thresholds) -> str | None:
    """What the rule could not judge when the POSIX records are partial."""
    if "POSIX" not in model.job.partial_modules:
        return None
    *_, untold = _partial_evidence(model, th)
    if not untold.any():
        return None
    i0 = int(np.nonzero(untold)[0][0])
    return (f"whether one rank wrote {int(untold.sum())} shared file(s) all ranks write "
            f"through MPI-IO ({model.files.paths[i0]}): the POSIX records are partial "
            f"({_posix_partial_why(model)}) and hold too few of its bytes to show the writer, "
            "and no Lustre layout of one stripe under collective writes shows the cause")


def _aggregators_wanted(model: Model, ranks: int) -> int:
    """Aggregators this job can use: one per OST of the file's stripes when the layout is
    known (ROMIO's Lustre driver uses one per OST), else one per node, at least 2 and never
    more than the ranks."""
    lay = _stripe(model)
    nodes = model.job.nodes or 1
    want = lay[1] if lay and lay[1] > 1 else max(nodes, 4)
    return max(2, min(want, ranks))


def _single_writer_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    k = int(hit.data.get("k", 2))
    lay = _stripe(model)
    nodes = model.job.nodes or 1
    hints = {"cb_nodes": str(k)}
    per_node = -(-k // nodes)
    if per_node > 1:  # "*:1" is ROMIO's default: never restated
        hints["cb_config_list"] = f"*:{per_node}"
    if lay and lay[1] <= 1:
        hints["striping_factor"] = str(k)  # ROMIO sets the stripe count when it creates
        cause = ("the file sits on one OST (stripe count 1), and ROMIO's Lustre driver picks "
                 "one aggregator per OST")
    elif lay:
        cause = f"the aggregator count (cb_nodes) is below the {lay[1]} OSTs of the file"
    elif job_facts(model).mpi.io == "ompio":
        cause = ("Open MPI's OMPIO picked one aggregator (its own choice from the data size; "
                 "io_ompio_num_aggregators sets the count)")
    else:
        cause = "collective buffering picked one aggregator (cb_nodes, one per node by default)"
    return Fix(text=(f"Cause: {cause}. Give the file {k} writers: cb_nodes {k}"
                     + (f" and a stripe count of {k} at creation" if "striping_factor" in hints
                        else "") + "; each aggregator then writes its own file domain."),
               artifacts=fixes.romio_hints(model, hints, "romio_hints_aggregators",
                                           [e.path for e in hit.files]))


# --- tiny collective calls ---------------------------------------------------------------

def _tiny_collective(model: Model, th: Thresholds) -> list[Hit]:
    L = model.layers
    sel = tiny_collective_files(model, th)
    if not sel.any():
        return []
    calls = L.calls.total("read") + L.calls.total("write")
    coll = sum(L.calls.of(d)["COLL"] + L.calls.of(d)["SPLIT"] for d in ("read", "write"))
    avg = np.divide(L.mpiio.bytes, calls, out=np.zeros(len(model.files)), where=calls > 0)
    top = worst(coll, sel)
    i0 = top[0]
    over = mpiio_overhead(model)
    return [Hit(
        summary=(f"{int(coll[sel].sum())} collective MPI-IO calls of {fmt_bytes(avg[i0])} on "
                 f"average on {int(sel.sum())} file(s): each call synchronises the ranks and "
                 "runs the two-phase exchange for a few bytes"),
        values={"files": int(sel.sum()), "collective_calls": int(coll[sel].sum()),
                "collective_calls_per_rank": round(
                    float(coll[i0] / max(int(model.files.nranks[i0]), 1)), 1),
                "avg_call_bytes": round(float(avg[i0]), 1),
                "mpiio_slowest_s": round(float(L.mpiio.slowest_rank_time_s[sel].sum()), 6),
                "posix_slowest_s": round(float(L.posix.slowest_rank_time_s[sel].sum()), 6)},
        files=file_rows(model, top, {
            "coll_calls": coll.astype(np.int64), "avg_call_bytes": np.round(avg, 1),
            "mpiio_slowest_s": np.round(L.mpiio.slowest_rank_time_s, 3),
            "posix_slowest_s": np.round(L.posix.slowest_rank_time_s, 3)}),
        data={"avg": float(avg[i0])},
        cost_s=float(np.where(L.posix.present, over, L.mpiio.slowest_rank_time_s)[sel].sum()),
        claims=claims_of(model, sel, "wait"),
    )]


def _tiny_collective_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    lib = _library_of(model, [e.path for e in hit.files])
    if lib == "PnetCDF":  # the program calls PnetCDF: its calls merge the pieces
        return Fix(text=("Post each step's pieces with ncmpi_iput_vara (or ncmpi_bput_vara) "
                         "and complete them with one ncmpi_wait_all: PnetCDF then makes one "
                         "collective MPI-IO call of all of them."),
                   artifacts=fixes.snippets("pnetcdf_nonblocking"))
    if lib == "HDF5":
        return Fix(text=("Make each collective H5Dwrite carry more: larger hyperslabs, "
                         "several datasets in one call (H5Dwrite_multi, HDF5 1.14), or gather "
                         "the pieces in memory first."))
    view = CodeChange("one call per rank through a file view", "mpiio",
                      ("MPI_Type_create_subarray", "MPI_File_set_view", "MPI_File_write_all"),
                      knob="file-view", value="true")
    return Fix(text=("Make one collective call carry many pieces: describe them with a file "
                     "view (MPI_Type_create_subarray/indexed + MPI_File_set_view) and call "
                     "write_all once, or gather them in memory first; if each rank's pieces are "
                     "large and contiguous, independent calls avoid the synchronisation."),
               artifacts=fixes.collective_code(model, [e.path for e in hit.files],
                                               change=view))


# --- slow close / flush --------------------------------------------------------------------

_CLOSE_LAYERS = ("library", "MPI-IO", "POSIX", "STDIO")


def _close_table(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Per file: the slowest close over the layers, and which layer it was in."""
    L = model.layers
    cols = np.vstack([L.library_close_s, L.mpiio.close_s, L.posix.close_s, L.stdio.close_s])
    return cols.max(axis=0), cols.argmax(axis=0)


def _slow_close(model: Model, th: Thresholds) -> list[Hit]:
    L = model.layers
    close, where = _close_table(model)
    # An MPI_File_close that waits for a late rank is the waiting mpiio-time-skew reports
    # (with the close named there): one cause per file.
    waiting = time_skew.waiting_files(model, th) & (where == _CLOSE_LAYERS.index("MPI-IO"))
    sel = app_files(model) & (close >= th.slow_close_s) & ~waiting
    if not sel.any():
        return []
    top = worst(close, sel)
    i0 = top[0]
    layer = _CLOSE_LAYERS[where[i0]]
    if layer == "library":
        layer = str(L.library[i0]) or "library"
    return [Hit(
        summary=(f"closing {model.files.paths[i0]} took {fmt_seconds(close[i0])} ({layer} "
                 f"close); {int(sel.sum())} file(s) with a close of "
                 f"{fmt_seconds(th.slow_close_s)} or more"),
        values={"files": int(sel.sum()), "slowest_close_s": round(float(close[i0]), 6),
                "layer": layer, "library_flushes": int(L.library_flushes[sel].sum()),
                "posix_syncs": int(L.posix.syncs[sel].sum())},
        files=file_rows(model, top, {
            "close_s": np.round(close, 3),
            "layer": lambda i: (str(L.library[i]) or "library") if where[i] == 0
            else _CLOSE_LAYERS[where[i]],
            "posix_bytes_written": L.posix.bytes_written.astype(np.int64),
            "posix_write_s": np.round(L.posix.time_s["write"], 3)}),
        data={"layer": layer, "collective_metadata": hdf5_metadata_collective(model, int(i0))},
        cost_s=float(close[sel].sum()),
        # a library's close flushes its data and metadata: the writes under it are its time
        claims=[(model.files.paths[i], "*" if where[i] == 0 else "meta")
                for i in np.nonzero(sel)[0].tolist()],
    )]


def _slow_close_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    layer = hit.data.get("layer", "")
    if layer == "HDF5" and hit.data.get("collective_metadata"):  # never what it already does
        return Fix(text=("H5Fclose flushes HDF5's metadata cache; the metadata writes are "
                         "already collective: keep fewer dirty entries for the close (a "
                         "smaller metadata cache, H5Pset_mdc_config, so they are written during "
                         "the run), enlarge metadata blocks (H5Pset_meta_block_size) and avoid "
                         "H5Fflush inside loops."))
    if layer == "HDF5":
        return Fix(text=("H5Fclose flushes HDF5's metadata cache in many small writes: make "
                         "metadata writes collective (H5Pset_coll_metadata_write), enlarge "
                         "metadata blocks (H5Pset_meta_block_size) and align them "
                         "(H5Pset_alignment), and avoid H5Fflush inside loops."),
                   artifacts=fixes.hdf5_metadata_code(model))
    if layer == "PnetCDF":
        return Fix(text=("ncmpi_close writes the header and flushes pending requests: leave "
                         "define mode once (no ncmpi_redef during writes) and complete "
                         "non-blocking requests with ncmpi_wait_all before the close."))
    return Fix(text=("The close flushes data the page cache kept back (or waits for the other "
                     "ranks in MPI_File_close): sync earlier in the background (fdatasync "
                     "during computation), or write with O_DIRECT for large outputs; check "
                     "that every rank reaches the close together."))


# --- a small file that costs minutes -------------------------------------------------------

def _tiny_file(model: Model, th: Thresholds) -> list[Hit]:
    L = model.layers
    byt = np.vstack([L.posix.bytes, L.stdio.bytes, L.mpiio.bytes]).max(axis=0)
    t = np.vstack([L.posix.slowest_rank_time_s, L.stdio.slowest_rank_time_s,
                   L.mpiio.slowest_rank_time_s]).max(axis=0)
    unit = (_stripe(model) or (1 << 20, 1))[0]
    sel = app_files(model) & (byt < unit) & (t >= th.tiny_file_min_s)
    if not sel.any():
        return []
    top = worst(t, sel)
    i0 = top[0]
    ops = L.posix.reads + L.posix.writes + L.stdio.reads + L.stdio.writes
    return [Hit(
        summary=(f"{model.files.paths[i0]} holds {fmt_bytes(byt[i0])} but cost one rank "
                 f"{fmt_seconds(t[i0])} ({int(ops[i0])} operations, "
                 f"{int(L.posix.opens[i0] + L.stdio.opens[i0])} opens, "
                 f"{int(L.posix.syncs[i0] + L.stdio.syncs[i0])} syncs/flushes)"),
        values={"files": int(sel.sum()), "bytes": int(byt[i0]),
                "slowest_rank_s": round(float(t[i0]), 6), "operations": int(ops[i0])},
        files=file_rows(model, top, {
            "bytes": byt.astype(np.int64), "slowest_rank_s": np.round(t, 3),
            "operations": ops.astype(np.int64),
            "opens": (L.posix.opens + L.stdio.opens).astype(np.int64),
            "syncs_flushes": (L.posix.syncs + L.stdio.syncs).astype(np.int64),
            "meta_s": np.round(np.asarray(L.posix.time_s["meta"] + L.stdio.time_s["meta"]), 3)}),
        cost_s=float(t[sel].sum()),
    )]


def _tiny_file_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text=("Find what makes a small file slow: a flush or sync after every line, "
                     "reopening it in a loop, or all ranks appending to it; write it once "
                     "at the end from one rank, keep it open, and drop per-line fflush/fsync "
                     "(or put it on node-local storage)."),
               artifacts=fixes.snippets("fewer_opens"))


def rules() -> list[Rule]:
    complete = needs_complete("POSIX", "MPI-IO")
    romio = Source(CSC_LUSTRE, "Improving I/O with ROMIO hints",
                   "romio_ds_write, striping_unit, cb_nodes, cb_config_list")
    return [
        Rule(id="read-modify-write", family="cross-layer", severity="warn",
             title="MPI-IO reads the file back while the program only writes",
             why=("POSIX reads under a file the program only writes through MPI-IO are MPI-IO "
                  "filling holes: data sieving and two-phase collective writes read each file "
                  "domain before writing it when the pieces do not cover it, and lock it while "
                  "they do."),
             sources=(romio, Source(KAUST, "MPI I/O hints",
                                    "romio_ds_write=disable; stripe-aligned accesses")),
             effect="Removes the read time shown as the cost; BTIO +33% with ds off (CSC).",
             trigger=_rmw, fix=_rmw_fix, requires=complete,
             cost="the slowest rank's POSIX read time on those files"),
        Rule(id="write-amplification", family="cross-layer", severity="warn",
             title="More bytes reach the file system than the program writes",
             why=("POSIX bytes several times the MPI-IO bytes are written twice: data sieving "
                  "rewrites whole buffers around small pieces, fill values pre-write variables."),
             sources=(romio, Source(KAUST, "I/O Best Practices (3)",
                                    "Reduce I/O as much as possible")),
             effect="Saves the extra share of the write time (shown as the cost).",
             trigger=_amplification, fix=_amplification_fix, requires=complete,
             cost="POSIX write time on those files times (1 - MPI-IO bytes / POSIX bytes)"),
        Rule(id="single-posix-writer", family="cross-layer", severity="warn",
             title="One rank does the file-system writes of a balanced MPI-IO file",
             why=("Every rank writes its share through MPI-IO, but one aggregator writes it "
                  "all to the file: one stream's bandwidth for the whole job."),
             sources=(romio, Source(NERSC_KNL, "Collective Buffer / I/O Parallelism",
                                    "aggregators and stripes set the parallelism")),
             effect=("With k writers instead of one the write time can fall towards 1/k; the "
                     "cost assumes that."),
             trigger=_single_writer, fix=_single_writer_fix,
             requires=needs_complete("MPI-IO"), partly=_single_writer_untold,
             cost=("the POSIX writer's time times (1 - 1/k) for k aggregators; with partial "
                   "POSIX records and the cause from the layout, at most the MPI-IO write "
                   "time times (1 - 1/k)")),
        time_skew.rule(complete),
        Rule(id="tiny-collective-calls", family="cross-layer", severity="warn",
             title="Many tiny collective calls",
             why=("Each collective call synchronises all ranks and exchanges data: thousands "
                  "of calls of a few KiB cost more than the I/O they do (a job became 3-4x "
                  "slower than its independent version)."),
             sources=(Source(CSC_LUSTRE, "MPI I/O", "collective I/O with large requests"),),
             effect="Up to the MPI-IO time beyond the file-system time (the cost).",
             trigger=_tiny_collective, fix=_tiny_collective_fix, requires=complete,
             cost="slowest rank's MPI-IO time minus the slowest POSIX time on those files"),
        Rule(id="slow-close", family="cross-layer", severity="warn",
             title="Closing or flushing a file takes seconds",
             why=("A close that takes seconds is a flush: HDF5 writes its metadata cache, the "
                  "kernel writes back dirty pages, MPI_File_close waits for every rank."),
             sources=(Source(NERSC_KNL, "Collective Buffer",
                             "HDF5 collective metadata write"),),
             effect="Up to the close time shown as the cost.",
             trigger=_slow_close, fix=_slow_close_fix,
             cost="the slowest close per file, summed (a reduced record's close is capped by "
                  "its metadata time)"),
        Rule(id="tiny-file-slow", family="cross-layer", severity="warn",
             title="A small file costs a long time",
             why=("A file smaller than one stripe should cost milliseconds; minutes mean "
                  "flushes, reopenings or contention on it, not bandwidth."),
             sources=(Source(KAUST, "I/O Best Practices (2)",
                             "Avoid opening and closing files frequently"),),
             effect="Up to the time shown as the cost.",
             trigger=_tiny_file, fix=_tiny_file_fix,
             cost="the slowest rank's time on the file"),
    ]
