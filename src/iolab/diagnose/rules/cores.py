"""More ranks on a node than it had CPUs (oversubscription), a fact of the job, and what it
does to advice.

Collective calls (collective transfers, collective metadata, the two-phase exchange of
aggregators) wait for every rank; a rank without a core of its own is descheduled while the
others spin, so each synchronisation point costs time slices. Measured with
bench/advice_speedup.py (docs/benchmarks.md, advice_speedup): collective HDF5 reads 0.40x
(MPICH) and 0.69x (OMPIO) at 4 ranks on 2 cores, 2.4x and 5.8x at 2 ranks on the same 2
cores. So on an oversubscribed node, advice that adds synchronisation is an experiment
(:data:`SYNCHRONISING`, turned so by the report), never a fix.

The CPUs come from the source: ``iolab profile`` records the CPU set its ranks inherit on
its host; a Darshan log records none (then the rule says it cannot judge, never guesses),
``--cores-per-node`` gives it for any log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose.rules.base import (
    NERSC_KNL,
    FileEvidence,
    Fix,
    Hit,
    Rule,
    Source,
    fmt_seconds,
)

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model

# Rules whose fixes add synchronisation or change aggregation (collective transfers,
# collective metadata, aggregators): experiments on an oversubscribed node. Not
# tiny-collective-calls (its fix makes fewer collective calls: less synchronisation).
SYNCHRONISING = frozenset({"collective-buffering", "mpiio-independent",
                           "hdf5-metadata-alignment", "aggregators-per-node",
                           "single-posix-writer", "mpiio-time-skew"})


def adds_synchronisation(rule_id: str, hit: Hit) -> bool:
    """Whether this hit's fix adds synchronisation or changes aggregation. mpiio-time-skew's
    only when every rank waits alike in the exchange (its fix: the exchange's aggregation);
    a late rank's or a lock's waiting is fixed by finding the late rank or the locks."""
    if rule_id == "mpiio-time-skew":
        return bool(hit.data.get("together"))
    return rule_id in SYNCHRONISING


def _most_oversubscribed(over: list[tuple[str, int, int]]) -> tuple[str, int, int]:
    """The (host, ranks, CPUs) with the most ranks per CPU."""
    return max(over, key=lambda r: r[1] / r[2])


def oversubscription_note(model: Model) -> str:
    """The reason an advice that adds synchronisation is an experiment on this job; '' when
    no node is known to be oversubscribed."""
    over = model.job.oversubscribed()
    if not over:
        return ""
    host, ranks, cpus = _most_oversubscribed(over)
    return (f" {ranks} ranks ran on {cpus} CPUs of {host} (oversubscribed): collective calls "
            "wait for every rank and a rank without a core is descheduled while the others "
            "spin, so this change is an experiment here, to be measured at one rank a core "
            "(it made collective HDF5 reads 0.4x-0.7x at 4 ranks on 2 cores, 2.4x-5.8x at 2).")


def _needs_cpus(model: Model, th: Thresholds) -> str | None:
    if model.job.nprocs < 2 or model.job.cpus_known():
        return None
    return ("the log does not record the CPUs of the job's nodes (Darshan logs do not; "
            "iolab profile does): give --cores-per-node to judge oversubscription")


def _collective_wait_s(model: Model) -> float:
    """MPI-IO time on files with collective calls that the fastest rank did not spend: the
    waiting a descheduled rank adds to everyone's collective calls (a bound from below)."""
    L = model.layers
    calls = sum(L.calls.of(d)["COLL"] + L.calls.of(d)["SPLIT"] for d in ("read", "write"))
    sel = L.mpiio.present & (calls > 0)
    gap = np.maximum(L.mpiio.slowest_rank_time_s - L.mpiio.fastest_rank_time_s, 0.0)
    return float(gap[sel].sum())


def _oversubscribed(model: Model, th: Thresholds) -> list[Hit]:
    over = model.job.oversubscribed()
    if not over:
        return []
    wait = _collective_wait_s(model)
    host, ranks, cpus = _most_oversubscribed(over)
    return [Hit(
        summary=(f"{ranks} ranks ran on {cpus} CPUs of {host}"
                 + (f" ({len(over)} such node(s))" if len(over) > 1 else "")
                 + ": ranks take turns on the cores, and every collective call waits for the "
                 "descheduled ones"
                 + (f"; up to {fmt_seconds(wait)} of MPI-IO time in files with collective "
                    "calls that the fastest rank did not spend (the oversubscription's, or a "
                    "late rank's: the counters cannot tell)" if wait > 0 else "")),
        values={"ranks_per_node": ranks, "cpus_per_node": cpus, "oversubscribed_nodes":
                len(over), "collective_wait_s": round(wait, 6)},
        files=[FileEvidence(h, {"ranks": r, "cpus": c}, kind="node") for h, r, c in over[:10]],
        # no seconds owned: the waiting has the same signature as a late rank's (which
        # mpiio-time-skew explains), so this finding changes the advice, not the ranking
        cost_s=None,
    )]


def _oversubscribed_fix(model: Model, hit: Hit, th: Thresholds) -> Fix:
    cpus = int(hit.values.get("cpus_per_node") or 1)
    return Fix(text=(f"Run at most {cpus} rank(s) per node (one a CPU: fewer ranks, or more "
                     "nodes, e.g. srun --ntasks-per-node), then measure the I/O advice again: "
                     "until then the changes that add synchronisation (collective transfers, "
                     "collective metadata, aggregation) are experiments, not fixes."))


def rules() -> list[Rule]:
    return [Rule(
        id="oversubscribed-node", family="node", severity="warn",
        title="More ranks than CPUs on a node",
        why=("A rank without a core of its own is descheduled while the others run; "
             "collective I/O calls wait for every rank, so they wait for the time slices."),
        # the practice behind it: I/O parallelism is bounded by the cores (the same seed
        # source io-stream-per-node cites); the slowdown figures are this project's own
        sources=(Source(NERSC_KNL, "I/O Parallelism",
                        "parallelizing the IO with multiple cores can increase bandwidth"),),
        effect=("Measured here: collective HDF5 transfers 0.40x-0.69x at 4 ranks on 2 "
                "cores, 2.4x-5.8x faster at 2 ranks on the same cores (bench/advice_speedup)."),
        trigger=_oversubscribed, fix=_oversubscribed_fix, requires=_needs_cpus,
        cost=("none owned: the MPI-IO time on files with collective calls that the fastest "
              "rank did not spend is shown as an upper bound (a late rank leaves the same "
              "trace); the finding turns advice that adds synchronisation into experiments"))]
