"""What a side of a comparison is, and its samples (workload -> MiB/s values).

A side is only compared with one of its own kind (a run with a run, a sweep with a sweep, ...):
their workloads have different names, and a run set against a sweep would be a table of
"missing on one side". A side that did not finish (an interrupted or failed run, sweep, tune
or study) is compared on what it holds, its title marked "partial"; one that holds nothing
(a tune that failed before its confirmation runs) is refused.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import UsageError
from iolab.pages.prep_bench import MIB, Samples, op_name, ops_of, phase_bandwidths, run_samples
from iolab.results import tunes as tstore
from iolab.results.db import get_run
from iolab.study.store import get_study
from iolab.sweep import store as sstore
from iolab.sweep.store import list_sweeps

KINDS = ("run", "sweep", "tune", "study")
FINISHED = ("ok", "done")  # a run's and a sweep's/tune's/study's status when complete


@dataclass
class Side:
    """One side's samples, its status, and whether that makes it partial."""

    samples: Samples
    status: str

    @property
    def partial(self) -> bool:
        return self.status not in FINISHED


def parse_side(text: str) -> tuple[str, int] | None:
    """'run:3', 'sweep:2', 'study:1', 'tune:4', or a bare number (a run); None: a file."""
    kind, sep, ident = text.partition(":")
    if sep and kind in KINDS and ident.isdigit():
        return kind, int(ident)
    if text.isdigit():
        return "run", int(text)
    if sep and kind in KINDS:
        raise UsageError(f"{text}: write {kind}:ID with a number, e.g. {kind}:3")
    if not Path(text).is_file():
        raise UsageError(f"{text}: neither KIND:ID ({', '.join(k + ':ID' for k in KINDS)}) "
                         "nor an existing Darshan log or iolab profile")
    return None


def check_kinds(a: str, sa: tuple[str, int], b: str, sb: tuple[str, int]) -> None:
    """Like against like: the workloads of two kinds have different names."""
    if sa[0] != sb[0]:
        raise UsageError(f"A ({a}) is a {sa[0]} and B ({b}) a {sb[0]}: compare a {sa[0]} "
                         f"with a {sa[0]} ({sa[0]}:ID {sa[0]}:ID), a {sb[0]} with a {sb[0]}")


def stored_side(conn: sqlite3.Connection, kind: str, ident: int) -> Side:
    """The side's samples; a UsageError when it does not exist or holds nothing to compare."""
    side, error = _stored(conn, kind, ident)
    if not side.samples.values:
        why = f": {error}" if error else ""
        see = f"iolab report {kind} {ident}" if kind != "run" else f"iolab results show {ident}"
        raise UsageError(f"{kind}:{ident} holds no bandwidth to compare (status "
                         f"{side.status}{why}); see '{see}'")
    if side.partial:
        side.samples.title += f" (partial: {side.status})"
    return side


def stored_samples(conn: sqlite3.Connection, kind: str, ident: int) -> Samples:
    return stored_side(conn, kind, ident).samples


def _stored(conn: sqlite3.Connection, kind: str, ident: int) -> tuple[Side, str | None]:
    if kind == "run":
        row = get_run(conn, ident)
        if row is None:
            raise UsageError(f"run:{ident}: no such run (see 'iolab results')")
        doc = row.get("engine_json")
        samples = run_samples(f"run {ident}", doc if isinstance(doc, dict) else None)
        return Side(samples, str(row["status"])), row.get("error")
    if kind == "sweep":
        return _sweep_side(conn, ident, f"sweep {ident}", ""), None
    if kind == "tune":
        return _tune_side(conn, ident)
    return _study_side(conn, ident), None


def _tune_side(conn: sqlite3.Connection, ident: int) -> tuple[Side, str | None]:
    tune = tstore.get_tune(conn, ident)
    if tune is None:
        raise UsageError(f"tune:{ident}: no such tune")
    s = Samples(f"tune {ident}")
    winner = (tune.get("result") or {}).get("winner") or {}
    for t in tstore.trials(conn, ident):
        if t.phase == "confirm" and t.status == "ok" and t.value is not None:
            params = {k: v for k, v in t.params.items() if v != "(default)"}
            # a second look confirms two: the one not kept is neither side
            side = ("winner" if params == winner else "baseline" if not params
                    else "also confirmed, not kept")
            s.values.setdefault(side, []).append(t.value)
    error = (tune.get("result") or {}).get("error")
    return Side(s, str(tune["status"])), str(error) if error else None


def _study_side(conn: sqlite3.Connection, ident: int) -> Side:
    st = get_study(conn, ident)
    if st is None:
        raise UsageError(f"study:{ident}: no such study")
    s = Samples(f"study {ident} ({st.get('host')})")
    status = str(st["status"])
    for sw in list_sweeps(conn, ident):
        part = _sweep_side(conn, sw["id"], "", f"{sw['name']}: ")
        s.values.update(part.samples.values)
        if part.partial and status in FINISHED:
            status = f"sweep {sw['id']} {part.status}"
    mpi = [float(r["bandwidth_bytes_per_s"]) / MIB for r in (st["result"] or {}).get("mpi") or []]
    if mpi:
        s.values["MPI bandwidth 2 ranks, same node"] = mpi
    return Side(s, status)


def _sweep_side(conn: sqlite3.Connection, ident: int, title: str, prefix: str) -> Side:
    sw = sstore.get_sweep(conn, ident)
    if sw is None:
        raise UsageError(f"sweep:{ident}: no such sweep")
    s = Samples(title)
    for pt in sstore.sweep_points(conn, ident):
        point = " ".join(f"{k}={v}" for k, v in pt.params.items())
        for op, p in ops_of(pt.doc):
            bws = [b / MIB for b in phase_bandwidths(pt.doc, op, p)]
            if bws and pt.status == "ok":
                s.values[f"{prefix}{point} {op_name(op, p)}".strip()] = bws
    return Side(s, str(sw["status"]))
