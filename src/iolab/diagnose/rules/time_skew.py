"""mpiio-time-skew: MPI-IO calls that wait far longer than the file system works under them
(a late rank, the two-phase exchange, file locks), and what to change for each cause."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose import fixes
from iolab.diagnose.rules.base import KAUST, Fix, Hit, Rule, Source, fmt_bytes, fmt_seconds
from iolab.diagnose.rules.common import (
    Requirement,
    claims_of,
    file_rows,
    once_per_diagnosis,
    worst,
)
from iolab.diagnose.rules.crosslayer import (
    app_files,
    call_mode,
    mpiio_overhead,
    tiny_collective_files,
)

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model


def rule(complete: Requirement) -> Rule:
    """The rule, for iolab.diagnose.rules.layers to list in its place (report order);
    ``complete``: the layers' requirement (complete POSIX and MPI-IO records)."""
    return Rule(
        id="mpiio-time-skew", family="cross-layer", severity="warn",
        title="MPI-IO calls wait far longer than the file system works",
        why=("The slowest rank's MPI-IO time far above the slowest POSIX time is waiting: "
             "a collective call starts only when the last rank arrives."),
        sources=(Source(KAUST, "Variance in Shared Files",
                        "Darshan's fastest/slowest rank times"),),
        effect="Up to the waiting time shown as the cost.",
        trigger=_skew, fix=_skew_fix, requires=complete,
        cost="slowest rank's MPI-IO time minus the slowest POSIX time, per file",
    )


@once_per_diagnosis
def waiting_files(model: Model, th: Thresholds) -> np.ndarray:
    """Per file: MPI-IO calls whose time beyond the POSIX calls under them (the two-phase
    exchange, synchronisation, waiting) is worth reporting: seconds of it on the file, and
    together ``exchange_share`` of the run (the mpiio-time-skew rule's selection; the
    straggler rule leaves these files to it, one cause per file). No MPI-IO/POSIX ratio: a
    300 s exchange under 337 s of POSIX reads is 300 s (was: only from 3x the POSIX time)."""
    L = model.layers
    over = mpiio_overhead(model)
    # The floor is mpiio_skew_min_s; for files reached mostly by collective calls, or
    # exchange_share of a shorter run: a checkpoint whose collective exchange took 0.28 s of
    # a 0.96 s run is the run's largest cost (was: never judged; the grading keeps it INFO
    # under cost_info_s). Independent calls keep the floor: a short run's per-call overhead
    # (a million 1-byte reads) is the small-request rules', not waiting.
    coll = sum(L.calls.of(d)["COLL"] + L.calls.of(d)["SPLIT"] for d in ("read", "write"))
    indep = sum(L.calls.of(d)["INDEP"] for d in ("read", "write"))
    floor = np.where(coll > indep, min(th.mpiio_skew_min_s,
                                       th.exchange_share * model.metrics.run_time_s),
                     th.mpiio_skew_min_s)
    sel = (app_files(model) & L.mpiio.present & L.posix.present & (over >= floor) & (over > 0)
           & ~tiny_collective_files(model, th))
    if over[sel].sum() < th.exchange_share * model.metrics.run_time_s:
        return np.zeros_like(sel)
    return sel


def _library_run_bytes(model: Model, i: int) -> float:
    """The contiguous run of file ``i``'s commonest PnetCDF access (the last dimension's
    count x the type size; the whole access when it covers the variable's record), the
    smallest over its variables; 0 when no PnetCDF record of the file says."""
    md = model.mods.get("PNETCDF_VAR")
    if md is None or len(md) == 0 or not md.has("PNETCDF_VAR_ACCESS1_LENGTH_D1"):
        return 0.0
    rows = np.nonzero(md.file_index == i)[0]
    runs = []
    for r in rows:
        lengths = [int(md.col(f"PNETCDF_VAR_ACCESS1_LENGTH_D{k}")[r]) for k in range(1, 6)]
        size = int(md.col("PNETCDF_VAR_DATATYPE_SIZE")[r])
        used = [n for n in lengths if n > 0]
        if not used or size <= 0:
            continue
        points = int(np.prod(used))
        whole = points >= int(md.col("PNETCDF_VAR_NPOINTS")[r]) > 0
        runs.append(float((points if whole else used[-1]) * size))
    return min(runs) if runs else 0.0


def _skew(model: Model, th: Thresholds) -> list[Hit]:
    L = model.layers
    m, p = L.mpiio.slowest_rank_time_s, L.posix.slowest_rank_time_s
    over = mpiio_overhead(model)
    sel = waiting_files(model, th)
    if not sel.any():
        return []
    top = worst(over, sel)
    i0 = top[0]
    direction = "write" if L.mpiio.writes[i0] else "read"
    mode = call_mode(model, i0, direction)
    fast = float(L.mpiio.fastest_rank_time_s[i0])
    calls = L.calls.total(direction)[i0]
    per_call = float((L.mpiio.bytes_written if direction == "write" else L.mpiio.bytes_read)[i0]
                     / calls) if calls else 0.0
    # A call's bytes are one piece only when contiguous: PnetCDF's subarray (a file view)
    # moves count[last] x type-size runs interleaved with the other ranks' (pnc_checkpoint:
    # 4.6 MiB a call in 512 B runs, judged "large" and told to write alone, 0.82x; was)
    run = _library_run_bytes(model, i0)
    piece = min(per_call, run) if run else per_call
    # Collective calls: a late rank shows as one rank with little MPI-IO time (it arrived
    # when the others had waited); every rank spending about as long is the collective's own
    # two-phase exchange (data shuffled to the aggregators) and synchronisation.
    together = mode == "collective" and fast >= th.late_rank_share * m[i0]
    if mode == "independent":
        waits = "for file locks or each other"
    elif together:
        waits = (f"in their own data exchange and synchronisation; every rank about as "
                 f"long, the fastest {fmt_seconds(fast)}: no late rank")
    else:
        waits = (f"for a late rank or for computation inside them: the fastest rank spent "
                 f"only {fmt_seconds(fast)}")
    return [Hit(
        claims=claims_of(model, sel, "wait"),  # the waiting: MPI-IO time beyond POSIX
        summary=(f"the slowest rank spent {fmt_seconds(m[i0])} in MPI-IO calls on "
                 f"{model.files.paths[i0]} but the slowest POSIX rank only {fmt_seconds(p[i0])}: "
                 f"the {mode} calls wait ({waits}), they do not do I/O"
                 + (f"; {fmt_seconds(L.mpiio.close_s[i0])} of it in MPI_File_close"
                    if L.mpiio.close_s[i0] >= 0.5 * over[i0] else "")),
        values={"files": int(sel.sum()), "mpiio_slowest_s": round(float(m[i0]), 6),
                "posix_slowest_s": round(float(p[i0]), 6),
                "mpiio_fastest_s": round(fast, 6),
                "mpiio_close_s": round(float(L.mpiio.close_s[i0]), 6),
                "waiting_s": round(float(over[sel].sum()), 6)},
        files=file_rows(model, top, {
            "mpiio_slowest_s": np.round(m, 3), "posix_slowest_s": np.round(p, 3),
            "mpiio_calls": (L.calls.total("read") + L.calls.total("write")).astype(np.int64),
            "mode": lambda i: call_mode(model, i)}),
        data={"mode": mode, "together": together, "piece": piece, "direction": direction,
              # data sieving (and its range locks) leaves traces one layer down: more POSIX
              # bytes than MPI-IO bytes, or POSIX reads in a file MPI-IO only writes
              "sieved": bool(L.posix.bytes[i0] > 1.05 * L.mpiio.bytes[i0]
                             or L.posix_reads_under_mpi_writes[i0] > 0)},
        cost_s=float(over[sel].sum()),
    )]


def _skew_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    if hit.data.get("mode") == "independent" and not hit.data.get("sieved"):
        # POSIX moved exactly the MPI-IO bytes: no sieving, so not its range locks
        return Fix(text=("The independent calls wait, yet POSIX moved exactly their bytes (no "
                         "data sieving, so not its locks): they wait for each other on the same "
                         "file (the file system's range locks, or the MPI library serialising "
                         "them). Make the calls collective so that one aggregator owns each "
                         "region, or time an MPI_Barrier before the I/O to see whether a late "
                         "rank is the cause."),
                   artifacts=fixes.collective_code(model, [e.path for e in hit.files]))
    if hit.data.get("mode") == "independent":
        return Fix(text=("Independent calls that wait are most often waiting for file locks: "
                         "ROMIO locks the range it sieves on a shared file; turn data sieving off "
                         "(romio_ds_read/romio_ds_write disable) for large contiguous pieces, "
                         "or make the calls collective so that one aggregator owns each "
                         "region."),
                   artifacts=fixes.romio_hints(model, {"romio_ds_read": "disable",
                                                       "romio_ds_write": "disable"},
                                               "romio_hints_no_sieving",
                                               [e.path for e in hit.files]))
    if hit.data.get("together"):
        return _exchange_fix(model, hit, th)
    return Fix(text=("Find the late rank: time an MPI_Barrier just before the I/O call to "
                     "separate waiting from I/O; balance the work before the I/O phase, or "
                     "start the I/O with non-blocking collectives (MPI_File_iwrite_all) so "
                     "that early ranks keep computing."),
               artifacts=fixes.nonblocking_code(model, [e.path for e in hit.files]))


def _exchange_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    """Every rank waits alike inside collective calls: the two-phase exchange costs more than
    the file system's work. Large pieces need no aggregation (each rank writes its own, as
    ROMIO does with collective buffering off); small ones need it cheaper."""
    d = str(hit.data.get("direction", "write"))
    piece = float(hit.data.get("piece", 0.0))
    paths = [e.path for e in hit.files]
    if piece >= th.own_piece_bytes:
        key = "romio_cb_write" if d == "write" else "romio_cb_read"
        return Fix(text=(f"The collective calls spend their time shuffling data to the "
                         f"aggregators, yet each rank's pieces are large ({fmt_bytes(piece)} "
                         f"a call on average): let each rank {d} its own pieces — {key} "
                         "disable (a hint: no code change), or independent calls. Measure "
                         "it: on a parallel file system pieces should also start on stripe "
                         "boundaries."),
                   artifacts=fixes.romio_hints(model, {key: "disable"},
                                               "romio_hints_no_collective_buffering", paths))
    # Under OMPIO the exchange is its fcoll component's: two_phase is OMPIO's port of
    # ROMIO's two-phase algorithm, built for many small pieces per rank (Open MPI's FAQ:
    # two_phase, dynamic, static, individual in decreasing shuffle cost and contiguity);
    # pnc_checkpoint (3072 pieces of 128 B a rank per wait_all) ran ~1.5x faster with it
    # here. A setting the proof step runs on the command, like the switch to ROMIO.
    ompio = fixes.ompio_parameters_file(
        model, {"fcoll": "two_phase"}, "ompio_fcoll_two_phase", paths,
        "its collective calls spent their time in the exchange; fcoll two_phase (ROMIO's "
        "algorithm) for many small pieces per rank; measure it against the default")
    return Fix(text=("The collective calls spend their time in the exchange and the "
                     "synchronisation, not in the file system: make each call carry more "
                     "(a file view and one write_all, or gather in memory first), and give "
                     "the exchange more aggregators (cb_config_list *:2) on several nodes."
                     + (" Under Open MPI's OMPIO, try its two-phase exchange "
                        "(OMPI_MCA_fcoll=two_phase, ROMIO's algorithm for many small pieces "
                        "per rank), or ROMIO itself (OMPI_MCA_io=^ompio); measure both."
                        if ompio else "")),
               artifacts=ompio + fixes.collective_code(model, paths, d,
                                                       fixes.more_per_call(model, paths, d)))
