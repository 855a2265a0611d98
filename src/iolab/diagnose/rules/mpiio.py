"""Rules on MPI-IO and the libraries above it: independent vs collective, collective
buffering (read from both layers), non-blocking I/O, aggregators per node, HDF5 metadata and
alignment, fill mode."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose import fixes
from iolab.diagnose.rules.base import (
    CSC_LUSTRE,
    DRISHTI,
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
from iolab.diagnose.rules.common import (
    claims_of,
    cost,
    costliest,
    enough,
    mpi_files,
    needs_complete,
    per_op,
    shared_app_files,
    small_bins,
    small_limit,
)
from iolab.model.files import APP
from iolab.model.metrics import DIRECTIONS
from iolab.model.trace import Trace, misalignment_share, off_alignment, traced_request_time

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model

def _mpi_per_file(model: Model, th: Thresholds, d: str) -> dict[str, np.ndarray]:
    """Per file, direction ``d``, from the model's layer columns: MPI-IO calls by kind, all
    calls (``ops``), bytes, average call size, small calls, and the POSIX layer beneath."""
    L = model.layers
    out = dict(L.calls.of(d))
    out["ops"] = L.calls.total(d)
    out["bytes"] = L.mpiio.bytes_read if d == "read" else L.mpiio.bytes_written
    out["avg"] = per_op(out["bytes"], out["ops"])
    out["small"] = L.mpiio.size_hist[d][:, :small_bins(small_limit(model, th))].sum(axis=1)
    out["posix_ops"] = L.posix.reads if d == "read" else L.posix.writes
    out["posix_bytes"] = L.posix.bytes_read if d == "read" else L.posix.bytes_written
    return out


def _mpi_directions(model: Model, th: Thresholds
                    ) -> Iterator[tuple[str, dict[str, np.ndarray], np.ndarray]]:
    """Per direction: the per-file MPI-IO / POSIX totals and the shared application files;
    nothing when the job has no MPI-IO."""
    if "MPI-IO" not in model.mods:
        return
    shared = shared_app_files(model)
    for d in DIRECTIONS:
        yield d, _mpi_per_file(model, th, d), shared


def _independent(model: Model, th: Thresholds) -> list[Hit]:
    files = model.files
    hits = []
    for d, c, shared in _mpi_directions(model, th):
        ops, avg = c["ops"], c["avg"]
        # Large contiguous independent requests are fine (Drishti flags them): only small ones.
        sel = shared & (c["INDEP"] > 0) & (avg < th.small_request_bytes)
        indep, total = int(c["INDEP"][sel].sum()), int(ops[sel].sum())
        if not enough(indep, total, th.independent_min_ops, th.independent_share):
            continue
        top = costliest(model, sel, c["INDEP"], (d,), ("MPI-IO",))
        hits.append(Hit(
            direction=d,
            summary=(f"{indep} of {total} MPI-IO {d}s ({pct(indep / total)}) on shared files are "
                     f"independent, averaging {fmt_bytes(c['bytes'][sel].sum() / total)}"),
            values={f"indep_{d}s": indep, f"coll_{d}s": int(c["COLL"][sel].sum()),
                    f"mpiio_{d}s": total, "indep_share": round(indep / total, 4)},
            files=[FileEvidence(files.paths[i], {"indep": int(c["INDEP"][i]),
                                                 "coll": int(c["COLL"][i]),
                                                 "ranks": int(files.nranks[i])}) for i in top],
            cost_s=cost(model, sel, (d,), ("MPI-IO",)),
        ))
    return hits


def _library_of(model: Model, paths: list[str]) -> str:
    """The library (HDF5, PnetCDF) that made the MPI-IO calls on all these files, else ''."""
    L, pos = model.layers, {p: i for i, p in enumerate(model.files.paths)}
    libs = {str(L.library[pos[p]]) for p in paths if p in pos}
    return libs.pop() if len(libs) == 1 else ""


def _independent_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    key = "romio_cb_write" if hit.direction == "write" else "romio_cb_read"
    hints = fixes.romio_hints(model, {key: "enable"}, "romio_hints_collective",
                              [e.path for e in hit.files])
    paths = [e.path for e in hit.files]
    lib = _library_of(model, paths)
    coll = fixes.collective_code(model, paths, hit.direction)
    # the collective-buffering hint only where collective calls exist (romio_hints drops
    # it otherwise); for the independent calls themselves, data sieving where it can act
    sieve_text, sieve = fixes.independent_pieces(model, paths, hit.direction)
    if lib == "HDF5":  # the program calls HDF5, not MPI-IO: its levers are HDF5 properties
        meta = ("H5Pset_all_coll_metadata_ops, H5Pset_coll_metadata_write"
                if fixes.job_direction(model, None) == "write" else
                "H5Pset_all_coll_metadata_ops")
        return Fix(text=("These independent MPI-IO calls are HDF5's: make dataset transfers "
                         "collective (H5Pset_dxpl_mpio with H5FD_MPIO_COLLECTIVE) and metadata "
                         f"I/O collective ({meta})." + sieve_text),
                   artifacts=coll + fixes.hdf5_metadata_code(model) + hints + sieve)
    if lib == "PnetCDF":
        return Fix(text=("These independent MPI-IO calls are PnetCDF's: use its collective "
                         "calls (ncmpi_put_vara_*_all / ncmpi_get_vara_*_all), or ncmpi_iput/"
                         "ncmpi_iget + ncmpi_wait_all, outside independent data mode."
                         + sieve_text),
                   artifacts=coll + hints + sieve)
    return Fix(
        text=("Use the collective calls (MPI_File_write_at_all / read_at_all, or a file view "
              "plus write_all) so that ROMIO merges the ranks' pieces into large requests."
              + sieve_text),
        artifacts=coll + hints + sieve)


def _cb(model: Model, th: Thresholds) -> list[Hit]:
    """Small interleaved shared-file MPI-IO that collective buffering does not merge.

    Collective buffering shows as a difference between layers: when it works, the POSIX
    requests under a file are several times larger than the MPI-IO ones (65,536 x 4 KiB
    MPI-IO writes became 16,384 x 16 KiB POSIX writes from one aggregator).
    """
    files = model.files
    hits = []
    for d, c, shared in _mpi_directions(model, th):
        ops, mavg = c["ops"], c["avg"]
        pavg = per_op(c["posix_bytes"], c["posix_ops"])
        sel = (shared & (ops >= th.small_requests_min)
               & (c["small"] >= th.small_requests_share * ops)
               & (c["posix_ops"] > 0) & (pavg < th.cb_aggregation_factor * mavg))
        if not sel.any():
            continue
        idx = np.nonzero(sel)[0]
        top = costliest(model, sel, ops, (d,), ("MPI-IO",))
        i0 = top[0]
        hits.append(Hit(
            direction=d,
            summary=(f"{int(ops[sel].sum())} small MPI-IO {d}s on {len(idx)} shared file(s) reach "
                     f"POSIX unmerged: {fmt_bytes(mavg[i0])} per MPI-IO call, "
                     f"{fmt_bytes(pavg[i0])} per POSIX call"),
            values={f"mpiio_{d}s": int(ops[sel].sum()),
                    f"mpiio_small_{d}s": int(c["small"][sel].sum()),
                    f"posix_{d}s": int(c["posix_ops"][sel].sum()),
                    "mpiio_avg_bytes": round(float(mavg[i0]), 1),
                    "posix_avg_bytes": round(float(pavg[i0]), 1)},
            files=[FileEvidence(files.paths[i], {"mpiio_ops": int(ops[i]),
                                                 "posix_ops": int(c["posix_ops"][i]),
                                                 "mpiio_avg_bytes": round(float(mavg[i]), 1),
                                                 "posix_avg_bytes": round(float(pavg[i]), 1)})
                   for i in top],
            data={"paths": [files.paths[i] for i in top],
                  "independent": int(c["INDEP"][sel].sum())},
            # Calls already collective keep their synchronisation with or without
            # aggregation (tiny-collective-calls counts it): only their POSIX time is at stake.
            cost_s=cost(model, sel & (c["INDEP"] > 0), (d,), ("MPI-IO",))
            + cost(model, sel & (c["INDEP"] == 0), (d,), ("POSIX",)),
        ))
    return hits


def hint_in_effect(model: Model, name: str) -> str | None:
    """The value of an MPI-IO hint on the job's files, when the source recorded it (iolab
    profiles read MPI_File_get_info at open; Darshan's 'h' field is Darshan's own)."""
    vals = {h[name] for h in model.job.hints.values() if name in h}
    return vals.pop() if len(vals) == 1 else None


ROMIO_CB_BUFFER_DEFAULT = 16 << 20  # ROMIO's default cb_buffer_size


def _cb_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    """Only what the job does not do already: the hints in effect (when known), the node
    count (aggregators per node mean nothing on one node) and the stripe (when known)."""
    d = "write" if hit.direction == "write" else "read"
    hints: dict[str, str] = {}
    if hint_in_effect(model, f"romio_cb_{d}") != "enable":
        hints[f"romio_cb_{d}"] = "enable"
    if (model.job.nodes or 1) >= 2 and hint_in_effect(model, "cb_config_list") != "*:2":
        hints["cb_config_list"] = "*:2"
    stripes = [s for s, _ in model.stripes.values() if s > 0]
    if stripes:
        hints["striping_unit"] = str(max(set(stripes), key=stripes.count))
        cur = int(hint_in_effect(model, "cb_buffer_size") or ROMIO_CB_BUFFER_DEFAULT)
        want = max(stripes) * max(1, ROMIO_CB_BUFFER_DEFAULT // max(stripes))
        if want != cur:  # a whole number of stripes; never ROMIO's default restated
            hints["cb_buffer_size"] = str(want)
    if d == "write" and hint_in_effect(model, "romio_ds_write") != "disable":
        hints["romio_ds_write"] = "disable"
    if not hit.data.get("independent"):  # unsafe when the program makes independent calls
        hints["romio_no_indep_rw"] = "true"
    if hint_in_effect(model, "romio_no_indep_rw") == "true":
        hints.pop("romio_no_indep_rw", None)
    if set(hints) <= {"romio_no_indep_rw"} and hint_in_effect(model, f"romio_cb_{d}"):
        return Fix(text=(f"Collective buffering is already on (romio_cb_{d} "
                         f"{hint_in_effect(model, f'romio_cb_{d}')}) and still issues requests "
                         "as small as the calls: make each call carry more data (a file view, "
                         "several variables per call)."),
                   artifacts=fixes.collective_code(model, hit.data.get("paths", []), d))
    if not _has_collective_calls(model, hit.data.get("paths", []), d):
        # collective buffering acts only inside collective calls: for files the program
        # only reaches with independent ones, hints would change nothing (was: a hints file)
        lib = _library_of(model, hit.data.get("paths", []))
        how = {"HDF5": "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) on the transfer "
                       "property list of H5Dwrite/H5Dread",
               "PnetCDF": "the ncmpi_put/get_*_all calls, or ncmpi_iput/iget with "
                          "ncmpi_wait_all"}.get(lib, f"MPI_File_{d}_all or _at_all")
        sieve_text, sieve = fixes.independent_pieces(model, hit.data.get("paths", []), d)
        return Fix(text=(f"The {d}s are independent calls, which collective buffering never "
                         f"touches (switch them first: {how}); then collective buffering "
                         f"merges the pieces (romio_cb_{d} enable"
                         + (", cb_config_list *:2" if "cb_config_list" in hints else "")
                         + "). Measure it: under Open MPI's OMPIO collective calls can be "
                         "slower." + sieve_text),
                   artifacts=fixes.collective_code(model, hit.data.get("paths", []), d)
                   + sieve)
    return Fix(
        text=("Turn on collective buffering"
              + (" with two aggregators per node" if "cb_config_list" in hints else "")
              + (" and file domains aligned to the stripe" if "striping_unit" in hints else "")
              + ("; switch the independent calls to collective ones first"
                 if hit.data.get("independent") else "") + "."),
        artifacts=fixes.romio_hints(model, hints, "romio_hints_cb", hit.data.get("paths", []))
        + fixes.collective_code(model, hit.data.get("paths", []), d))


def _has_collective_calls(model: Model, paths: list[str], d: str) -> bool:
    """Any collective (or split collective) call in direction d on these files (all of the
    job's when none is named)."""
    calls = model.layers.calls.of(d)
    coll = calls["COLL"] + calls["SPLIT"]
    idx = [model.files.paths.index(p) for p in paths if p in model.files.paths]
    return bool(coll[idx].sum() > 0) if idx else bool(coll.sum() > 0)


def _nonblocking(model: Model, th: Thresholds) -> list[Hit]:
    mp = model.metrics.ifaces.get("MPI-IO")
    if mp is None:
        return []
    calls = model.layers.calls
    nb = int(calls.reads["NB"].sum() + calls.writes["NB"].sum())
    blocking = mp.ops["read"] + mp.ops["write"] - nb
    # PnetCDF's ncmpi_iput/iget + ncmpi_wait_all reach MPI-IO as blocking collective calls:
    # the program is already non-blocking (a real Darshan 3.5 log, progs/pnc_iput.c).
    var = model.mods.get("PNETCDF_VAR")
    lib_nb = 0 if var is None else int(var.pos("PNETCDF_VAR_NB_WRITES").sum()
                                       + var.pos("PNETCDF_VAR_NB_READS").sum())
    if (nb > 0 or lib_nb > 0 or blocking < th.nonblocking_min_ops
            or model.metrics.io_fraction < th.io_bound_warn):
        return []
    mpi = mpi_files(model)
    # Tiny calls cost per call, and overlapping each one hides none of that: fewer, larger
    # calls come first (small-requests, tiny-collective-calls).
    moved = float(model.layers.mpiio.bytes[mpi].sum())
    if moved < small_limit(model, th) * (mp.ops["read"] + mp.ops["write"]):
        return []
    io_t = cost(model, mpi, ("read", "write"), ("MPI-IO",))
    compute = max(model.metrics.run_time_s - model.metrics.io_time_s, 0.0)
    return [Hit(
        summary=(f"{blocking} blocking MPI-IO calls and no non-blocking ones while I/O takes "
                 f"{pct(model.metrics.io_fraction)} of the run"),
        values={"blocking_ops": blocking, "nonblocking_ops": nb,
                "io_fraction": round(model.metrics.io_fraction, 4),
                "reads": mp.ops["read"], "writes": mp.ops["write"]},
        # Overlap hides at most the smaller of the I/O and the computation.
        cost_s=min(io_t, compute),
        data={"reads": mp.ops["read"], "writes": mp.ops["write"],
              "top": model.metrics.top_layer,
              # the job's own mode per direction: the non-blocking twin of the calls it makes
              "collective": {d: int(calls.of(d)["COLL"].sum() + calls.of(d)["SPLIT"].sum())
                             > 0 for d in DIRECTIONS}},
    )]


def _nonblocking_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    """Name only the directions the job uses, in the interface it calls."""
    dirs = [d for d in DIRECTIONS if hit.data.get(d + "s")]
    if hit.data.get("top") == "HDF5":  # the program calls HDF5, not MPI-IO
        calls = " / ".join({"read": "H5Dread_async", "write": "H5Dwrite_async"}[d]
                           for d in dirs)
        return Fix(text=(f"Overlap I/O with computation: HDF5's asynchronous calls ({calls} "
                         "with an event set, H5ESwait after the computation; HDF5 1.14 with "
                         "the async VOL connector)."))
    if hit.data.get("top") == "PnetCDF":
        calls = " / ".join({"read": "ncmpi_iget_vara", "write": "ncmpi_iput_vara"}[d]
                           for d in dirs)
        text = (f"Overlap I/O with computation: PnetCDF's {calls} + ncmpi_wait_all, which also "
                "merges the requests into one collective call.")
    else:
        coll = hit.data.get("collective", {})
        calls = " / ".join(f"MPI_File_i{d}_at" + ("_all" if coll.get(d) else "")
                           for d in dirs)
        text = (f"Overlap I/O with computation: {calls} started before the computation "
                "and completed with MPI_Wait after it.")
    pnetcdf = hit.data.get("top") == "PnetCDF"
    if "write" not in dirs:  # a read gets a read (PnetCDF's: the text names ncmpi_iget)
        return Fix(text=text, artifacts=[] if pnetcdf else fixes.snippets("nonblocking_io_read"))
    return Fix(text=text, artifacts=fixes.snippets(
        "pnetcdf_nonblocking" if pnetcdf else "nonblocking_io"))


def _aggregators(model: Model, th: Thresholds) -> list[Hit]:
    nodes = model.job.nodes
    if not nodes or "MPI-IO" not in model.mods:
        return []
    calls = model.layers.calls
    coll = int(calls.writes["COLL"].sum() + calls.reads["COLL"].sum())
    hosts = model.job.rank_hosts
    per_host = Counter(hosts.values())
    if per_host and len(per_host) == nodes:  # the map: ranks on the most crowded node
        ppn = float(max(per_host.values()))
    else:
        ppn = model.job.nprocs / nodes
    if coll == 0 or ppn < 4 or nodes < 2:  # one node: per-node aggregators change nothing
        return []
    # With the hints in effect (iolab profiles), judge the real aggregator count.
    cb_nodes = [int(h["cb_nodes"]) for h in model.job.hints.values()
                if h.get("cb_nodes", "").isdigit()]
    per_node = [h.get("cb_config_list", "") for h in model.job.hints.values()]
    if any(c.startswith("*:") and c[2:].isdigit() and int(c[2:]) >= 2 for c in per_node):
        return []
    if cb_nodes and min(cb_nodes) > nodes:
        return []
    agg = f"cb_nodes={min(cb_nodes)}" if cb_nodes else "the default"
    return [Hit(
        summary=(f"{coll} collective MPI-IO calls with {ppn:.0f} ranks per node on {nodes} "
                 f"node(s), aggregators: {agg} (one per node or fewer)"),
        values={"collective_ops": coll, "nodes": nodes, "ranks_per_node": round(ppn, 1),
                "cb_nodes": min(cb_nodes) if cb_nodes else None},
        cost_s=cost(model, mpi_files(model), ("read", "write"), ("MPI-IO",), 0.5),
        claims=claims_of(model, mpi_files(model), "read", "write"),
    )]


def _needs_nodes(model: Model, th: Thresholds) -> str | None:
    """the node count (--nodes, or a log that says it)"""
    return None if model.job.nodes else "the node count (--nodes, or a log that says it)"


def _aggregators_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    nodes = model.job.nodes or 1
    return Fix(text=("Use two (up to four) aggregators per node: cb_config_list *:2 and "
                     f"cb_nodes {2 * nodes}; measure, the best value depends on the system."),
               artifacts=fixes.romio_hints(model, {"cb_config_list": "*:2",
                                                   "cb_nodes": str(2 * nodes)},
                                           "romio_hints_aggregators"))


def _hdf5(model: Model, th: Thresholds) -> list[Hit]:
    h5f = model.mods.get("H5F")
    if h5f is None or len(h5f) == 0 or model.job.nprocs < 2:
        return []
    files = model.files
    L = model.layers
    use_mpi = L.library_uses_mpiio
    h5 = np.zeros(len(files), dtype=bool)
    h5[h5f.file_index] = True
    sel = h5 & (files.category == APP) & use_mpi
    if not sel.any():
        return []
    tiny = sum(L.posix.size_hist[d][:, :2].sum(axis=1) for d in DIRECTIONS)  # up to 1 KiB
    ops = L.posix.reads + L.posix.writes
    na = L.posix.not_aligned
    n_tiny, n_ops, n_na = int(tiny[sel].sum()), int(ops[sel].sum()), int(na[sel].sum())
    # Small POSIX requests are metadata only where they are not the program's data: the
    # datasets' own small calls (H5D size bins) and a POSIX layer that moved no more than
    # the datasets' bytes (no room for metadata) say they are data (64-byte pieces of a
    # strided selection are data).
    small_data, meta_room = _hdf5_small_data(model, sel)
    n_meta = max(0, min(n_tiny - small_data, meta_room))
    if n_ops == 0 or (n_meta < model.job.nprocs * 4 and n_na < 0.5 * n_ops):
        return []
    idx = np.nonzero(sel)[0]
    coll_md = all(hdf5_metadata_collective(model, int(i)) for i in idx)
    hc = _hdf5_cost(model, sel, max(n_meta, n_na) / n_ops, th)
    traced, exact, meta_s, open_close_s = hc.traced, hc.exact, hc.meta_s, hc.open_close_s
    cost_from, cost_s, waste = hc.cost_from, hc.cost_s, hc.waste
    measured = ""
    if meta_s is not None:
        measured = (f"; {fmt_seconds(meta_s)} in H5F/H5D metadata calls"
                    + (f", {fmt_seconds(min(open_close_s, meta_s))} of it in MPI-IO's open and "
                       "close (collective metadata leaves them as they are)"
                       if open_close_s else "")
                    + f"; the file's POSIX reads and writes, metadata requests included, "
                    f"took {fmt_seconds(cost(model, sel, ('read', 'write'), ('POSIX',)))}: "
                    "collective metadata cannot save more; the metadata requests' own time "
                    "is not measured without a trace (iolab profile --trace)")
    elif exact:
        measured = (f"; traced: {fmt_seconds(traced['metadata'] or 0.0)} in metadata requests "
                    f"(up to 1 KiB), {fmt_seconds(traced['misaligned'] or 0.0)} lost to "
                    "misalignment")
    return [Hit(
        summary=(f"HDF5 over MPI-IO: {n_tiny} of {n_ops} POSIX requests under 1 KiB"
                 + (f" ({n_tiny - n_meta} of them data, not metadata)" if n_meta < n_tiny
                    else "")
                 + f" and {n_na} misaligned on {len(idx)} file(s)" + measured),
        values={"posix_ops": n_ops, "posix_ops_under_1k": n_tiny,
                "metadata_requests_at_most": n_meta, "file_not_aligned": n_na,
                "files": int(len(idx)), "cost_from": cost_from,
                **({"metadata_requests_time_s": round(traced["metadata"] or 0.0, 6),
                    "misaligned_requests_time_s": round(traced["misaligned"] or 0.0, 6)}
                   if exact else {}),
                **({"hdf5_metadata_time_s": round(meta_s, 6)} if meta_s is not None else {}),
                **({"mpiio_open_close_time_s": round(open_close_s, 6)}
                   if open_close_s is not None else {})},
        files=[FileEvidence(files.paths[i], {"posix_ops": int(ops[i]), "under_1k": int(tiny[i]),
                                             "not_aligned": int(na[i])}) for i in idx[:10]],
        # the data already goes through collective MPI-IO calls: not advised again
        data={"collective": bool(sum(L.calls.of(d)["COLL"][idx].sum()
                                     + L.calls.of(d)["SPLIT"][idx].sum()
                                     for d in DIRECTIONS) > 0),
              "collective_metadata": coll_md},
        cost_s=cost_s,
        cost_bound=not exact and meta_s is None,
        # a bound stays a bound (at most, never ranked as measured, owning nothing)
        experiment=not waste and not (not exact and meta_s is None),
        # the kinds its cost counts: traced requests are reads and writes; HDF5's metadata
        # calls write and read through the layers below, and open and close
        claims=claims_of(model, sel, "read", "write", *(() if exact else ("meta",))),
    )]


@dataclass(frozen=True)
class _Hdf5Cost:
    traced: dict[str, float | None]  # traced request time: metadata, misaligned, either
    exact: bool  # from a complete trace
    meta_s: float | None  # H5F/H5D metadata time (no trace)
    open_close_s: float | None  # of it, MPI-IO's open and close
    cost_from: str
    cost_s: float | None
    waste: bool


def _hdf5_cost(model: Model, sel: np.ndarray, small_share: float, th: Thresholds) -> _Hdf5Cost:
    """What the HDF5 metadata/alignment finding costs on the files of ``sel``, and from what:
    a trace (exact), HDF5's metadata calls' time, or the small requests' share of the POSIX
    time (a bound)."""
    align = model.per_file_max("POSIX", "POSIX_FILE_ALIGNMENT")
    # With a complete trace the cost is what the requests cost: the metadata requests of a
    # real HDF5 file take well under a millisecond where their share of the count claimed
    # 7/8 of the data write's time (h5nofill-openmpi: 0.16 ms, not 145 ms).
    # A metadata request costs all its time; a misaligned data request what misalignment can
    # cost of it (trace.misalignment_share: little for a file one rank writes alone).
    def share(tr: Trace, r: np.ndarray) -> np.ndarray:
        return np.where(tr.length[r] <= 1024, 1.0, misalignment_share(tr, r, align))

    traced = {k: traced_request_time(model, sel, pick, share) for k, pick in (
        ("metadata", lambda tr, r: tr.length[r] <= 1024),  # Darshan's bins up to 1 KiB
        ("misaligned", lambda tr, r: (tr.length[r] > 1024) & off_alignment(tr, r, align)),
        ("either", lambda tr, r: (tr.length[r] <= 1024) | off_alignment(tr, r, align)))}
    exact = traced["either"] is not None
    # Without a trace: the time HDF5 spent in its metadata calls (H5F/H5D records), measured;
    # else only a bound (the POSIX time times the small requests' share).
    meta_s = None if exact else hdf5_metadata_time(model, sel)
    # Of that time, MPI_File_open/close (collective whatever HDF5 does) is out of reach of
    # collective metadata; the rest holds the metadata requests and HDF5's own
    # synchronisation, which a trace alone tells apart.
    open_close_s = mpiio_meta_time(model, sel) if meta_s is not None else None
    cost_from = "trace" if exact else "H5F/H5D metadata time" if meta_s is not None else (
        "counters (a bound)")
    if exact:
        cost_s = traced["either"]
    elif meta_s is not None:
        # Collective metadata changes how the metadata requests reach the file, which are
        # POSIX reads and writes on it: it cannot save more than their time (h5_slab's
        # contiguous write: 167 ms of H5F/H5D time, the file's POSIX I/O a few ms; was the
        # H5F/H5D time less open/close, the top predicted fix, 0.48x).
        posix_rw = cost(model, sel, ("read", "write"), ("POSIX",))
        cost_s = min(max(meta_s - (open_close_s or 0.0), 0.0), posix_rw)
    else:
        cost_s = cost(model, sel, ("read", "write", "meta"), ("POSIX",), small_share)
    # Waste only when the metadata requests' own time is measured (the trace) and a real
    # share of the run; otherwise collective metadata is an experiment: it adds collective
    # calls to every metadata operation, and made h5_slab 0.26x-0.39x under MPICH when the
    # metadata I/O was milliseconds (was: its H5F time, mostly opening and closing, ranked
    # it the top fix).
    run = model.metrics.run_time_s
    waste = bool(exact and run > 0 and (traced["metadata"] or 0.0) + (traced["misaligned"] or 0.0)
                 >= th.hdf5_metadata_share * run)
    return _Hdf5Cost(traced, exact, meta_s, open_close_s, cost_from, cost_s, waste)


def _hdf5_small_data(model: Model, sel: np.ndarray) -> tuple[int, int]:
    """The HDF5 files' data calls of at most 1 KiB (H5D size bins up to 1K), and how many
    metadata requests the POSIX bytes leave room for (bytes beyond the datasets' over 32 B,
    about the smallest metadata item; unlimited without H5D records)."""
    md = model.mods.get("H5D")
    if md is None or len(md) == 0:
        return 0, 1 << 62
    rows = sel[md.file_index] & (md.file_index >= 0)
    if not rows.any():
        return 0, 1 << 62
    small = sum(int(md.pos(f"H5D_SIZE_{d}_AGG_{b}")[rows].sum())
                for d in ("READ", "WRITE") for b in ("0_100", "100_1K"))
    data = float(md.pos("H5D_BYTES_READ")[rows].sum() + md.pos("H5D_BYTES_WRITTEN")[rows].sum())
    posix = float(model.layers.posix.bytes[sel].sum())
    return small, int(max(posix - data, 0.0) // 32)


def hdf5_metadata_time(model: Model, sel: np.ndarray) -> float | None:
    """The time in HDF5's metadata calls on the files ``sel`` (H5F_F_META_TIME: create, open,
    flush, close; H5D_F_META_TIME: dataset create, open, close), per rank: the largest rank's
    with per-rank records, the mean rank's of a reduced record (H5F has no slowest-rank time).
    None when no H5F/H5D record of those files carries it (a trace or --trace measures it)."""
    per_rank = np.zeros(max(model.job.nprocs, 1))
    reduced, seen = 0.0, False
    for mod in ("H5F", "H5D"):
        md = model.mods.get(mod)
        if md is None or len(md) == 0 or not md.has(f"{mod}_F_META_TIME"):
            continue
        rows = (md.file_index >= 0) & sel[np.minimum(np.maximum(md.file_index, 0), len(sel) - 1)]
        if not rows.any():
            continue
        seen = True
        t = md.fcol(f"{mod}_F_META_TIME")
        own = rows & (md.ranks >= 0)
        np.add.at(per_rank, np.minimum(np.maximum(md.ranks[own], 0), per_rank.size - 1), t[own])
        red = rows & (md.ranks < 0)
        reduced += float((t[red] / np.maximum(md.span_n[red], 1)).sum())
    return float(per_rank.max()) + reduced if seen else None


def mpiio_meta_time(model: Model, sel: np.ndarray) -> float | None:
    """The time in MPI-IO's open, close, sync and resize calls (MPIIO_F_META_TIME) on the
    files ``sel``, counted per rank as hdf5_metadata_time counts HDF5's (None: no record)."""
    md = model.mods.get("MPI-IO")
    if md is None or len(md) == 0 or not md.has("MPIIO_F_META_TIME"):
        return None
    rows = (md.file_index >= 0) & sel[np.minimum(np.maximum(md.file_index, 0), len(sel) - 1)]
    if not rows.any():
        return None
    per_rank = np.zeros(max(model.job.nprocs, 1))
    t = md.fcol("MPIIO_F_META_TIME")
    own = rows & (md.ranks >= 0)
    np.add.at(per_rank, np.minimum(np.maximum(md.ranks[own], 0), per_rank.size - 1), t[own])
    red = rows & (md.ranks < 0)
    return float(per_rank.max()) + float((t[red] / np.maximum(md.span_n[red], 1)).sum())


def hdf5_metadata_collective(model: Model, i: int) -> bool:
    """HDF5 file ``i`` already does its metadata I/O collectively: every MPI-IO call on it is
    collective (H5Pset_coll_metadata_write / H5Pset_all_coll_metadata_ops; by default rank 0
    writes the metadata with independent calls). Darshan records no such property."""
    L = model.layers
    coll = sum(L.calls.of(d)["COLL"][i] + L.calls.of(d)["SPLIT"][i] for d in DIRECTIONS)
    indep = sum(L.calls.of(d)["INDEP"][i] for d in DIRECTIONS)
    return bool(L.library[i] == "HDF5" and coll > 0 and indep == 0)


def _hdf5_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    if hit.data.get("collective_metadata"):  # never what the job already does
        return Fix(text=("Metadata I/O is already collective (every MPI-IO call on the file "
                         "is): align objects to the stripe (H5Pset_alignment) and enlarge "
                         "metadata blocks (H5Pset_meta_block_size)."))
    d = fixes.job_direction(model, None)  # a read-only job gets read advice
    data = ("" if hit.data.get("collective") else
            f"; {d} data with a collective transfer property (H5Pset_dxpl_mpio)")
    meta = ("H5Pset_all_coll_metadata_ops, H5Pset_coll_metadata_write" if d == "write" else
            "H5Pset_all_coll_metadata_ops")
    paths = [e.path for e in hit.files]
    return Fix(text=(f"Make metadata collective ({meta}) and align objects to the stripe "
                     f"(H5Pset_alignment){data}."),
               artifacts=fixes.hdf5_metadata_code(model)
               + (fixes.snippets("hdf5_layout") if d == "write" else [])
               + ([] if hit.data.get("collective") else fixes.collective_code(model, paths, d)))


def _fill(model: Model, th: Thresholds) -> list[Hit]:
    """Files whose POSIX layer received much more than the data the program handed the
    library (HDF5 datasets / PnetCDF variables of that file, from the layer columns)."""
    L = model.layers
    posix, data = L.posix.bytes_written, L.library_bytes_written
    sel = ((model.files.category == APP) & (L.library != "") & (data > 0)
           & (posix >= 1.5 * data + th.min_total_bytes))
    rows = [(int(i), int(posix[i]), int(data[i]), str(L.library[i]))
            for i in np.nonzero(sel)[0]]
    if not rows:
        return []
    return [Hit(
        summary=(f"{len(rows)} file(s) received much more than their data: e.g. "
                 f"{fmt_bytes(rows[0][1])} written for {fmt_bytes(rows[0][2])} of "
                 f"{'datasets' if rows[0][3] == 'HDF5' else 'variables'} "
                 "(fill values written first)"),
        values={"files": len(rows), "posix_bytes_written": sum(r[1] for r in rows),
                "data_bytes_written": sum(r[2] for r in rows)},
        files=[FileEvidence(model.files.paths[i], {"posix_bytes": p, "data_bytes": d,
                                                   "library": m}) for i, p, d, m in rows[:10]],
        cost_s=cost(model, np.isin(np.arange(len(model.files)), [r[0] for r in rows]),
                    ("write",), ("POSIX",),
                    1 - sum(r[2] for r in rows) / max(sum(r[1] for r in rows), 1)),
        claims=claims_of(model, np.isin(np.arange(len(model.files)), [r[0] for r in rows]),
                         "write"),
    )]


def _fill_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    return Fix(text=("Turn off fill mode for variables/datasets the program writes completely: "
                     "ncmpi_set_fill(NC_NOFILL), H5Pset_fill_time(H5D_FILL_TIME_NEVER)."),
               artifacts=fixes.snippets("fill_mode"))


def rules() -> list[Rule]:
    cb_src = Source(CSC_LUSTRE, "Improving I/O with ROMIO hints",
                    "cb_buffer_size, romio_cb_write, cb_config_list *:X, romio_ds_write")
    return [
        Rule(id="mpiio-independent", family="mpi-io", severity="high", directional=True,
             title="Small independent MPI-IO requests on shared files",
             why=("Independent calls go to the file system one by one; collective calls let "
                  "MPI-IO gather the ranks' pieces into large contiguous requests."),
             sources=(Source(CSC_LUSTRE, "MPI I/O",
                             "Collective I/O provides typically much higher bandwidth than "
                             "independent I/O"),
                      Source(DRISHTI, "collective vs independent", "independent MPI-IO calls")),
             effect="BTIO with collective I/O and hints: 1293 -> 3699 MiB/s (2.86x, CSC).",
             trigger=_independent, fix=_independent_fix,
             requires=needs_complete("MPI-IO"),
             cost="the slowest rank's MPI-IO time in that direction on those files"),
        Rule(id="collective-buffering", family="mpi-io", severity="warn", directional=True,
             title="Small interleaved shared-file access is not aggregated",
             why=("Read from both layers: the POSIX requests under the file are as small as the "
                  "MPI-IO ones, so no collective buffering merged them."),
             sources=(cb_src,
                      Source(NERSC_KNL, "Collective Buffer",
                             "tuning collective buffer size aggregates small transactions"),
                      Source(KAUST, "MPI I/O hints",
                             "MPICH_MPIIO_HINTS=*:romio_cb_write=enable:romio_ds_write=disable")),
             effect=("BTIO: striping_unit hint 2.27x, plus cb_config_list *:2 2.86x; with 2 OSTs "
                     "and romio_cb_write/romio_ds_write hints +33% (CSC)."),
             trigger=_cb, fix=_cb_fix,
             requires=needs_complete("MPI-IO", "POSIX"),
             cost="the slowest rank's MPI-IO time in that direction on those files"),
        Rule(id="mpiio-nonblocking", family="mpi-io", severity="info",
             title="Blocking MPI-IO only",
             why="Non-blocking I/O overlaps I/O with computation and lets PnetCDF merge requests.",
             sources=(Source(CSC_LUSTRE, "Non-Blocking I/O", "Use non-blocking I/O"),
                      Source(DRISHTI, "non-blocking MPI-IO", "no non-blocking calls")),
             effect="BTIO with PnetCDF non-blocking I/O and hints: 1820 -> 4565 MiB/s (2.5x, CSC).",
             trigger=_nonblocking, fix=_nonblocking_fix,
             cost=("the smaller of the MPI-IO time and the computation time (what overlap "
                   "can hide)")),
        Rule(id="aggregators-per-node", family="mpi-io", severity="warn",
             title="One collective-buffering aggregator per node",
             why=("By default only one rank per node does the file-system I/O of collective "
                  "calls; more aggregators use more of the node's network bandwidth."),
             sources=(cb_src, Source(DRISHTI, "aggregators", "cb_nodes vs number of nodes")),
             effect="BTIO: 2 aggregators per node raised 2.27x to 2.86x in total (CSC).",
             trigger=_aggregators, fix=_aggregators_fix, requires=_needs_nodes,
             cost="half the slowest rank's MPI-IO time (a bound: what a second aggregator "
                  "per node can take over)"),
        Rule(id="hdf5-metadata-alignment", family="libraries", severity="warn",
             title="HDF5 over MPI-IO without collective metadata or alignment",
             why=("Independent metadata means every rank reads/writes tiny pieces of the file; "
                  "unaligned objects straddle stripes."),
             sources=(Source(NERSC_KNL, "Direct I/O vs. Buffered I/O / Collective Buffer",
                             "HDF5 collective I/O; H5Pset_fapl_direct 11% speedup"),
                      Source(KAUST, "Consider available I/O middleware libraries",
                             "HDF5, ADIOS, MPI-IO")),
             effect="No published figure for this change alone.",
             trigger=_hdf5, fix=_hdf5_fix,
             requires=needs_complete("POSIX"),
             cost=("with DXT covering the files, the slowest rank's traced time in the "
                   "requests up to 1 KiB, plus the misaligned ones as misaligned-file counts "
                   "them; else the time in HDF5's metadata calls (H5F/H5D meta time); "
                   "without those records only a bound, shown as 'at most': the POSIX time "
                   "on the HDF5 files times the share of small or misaligned requests")),
        Rule(id="fill-mode", family="libraries", severity="warn",
             title="Fill values written before the data",
             why="Pre-filling a variable that is then overwritten doubles the bytes written.",
             sources=(Source(KAUST, "I/O Best Practices (3)", "Reduce I/O as much as possible"),),
             effect="Up to the extra bytes shown in the evidence.",
             trigger=_fill, fix=_fill_fix,
             requires=needs_complete("POSIX"),
             cost="POSIX write time on those files times the share of extra bytes"),
    ]
