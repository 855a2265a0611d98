"""What a side of a comparison is, and its samples (workload -> MiB/s values)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from iolab.errors import UsageError
from iolab.report.prep_bench import MIB, Samples, op_name, ops_of, phase_bandwidths, run_samples

KINDS = ("run", "sweep", "tune", "study")


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


def stored_samples(conn: sqlite3.Connection, kind: str, ident: int) -> Samples:
    from iolab.results.db import get_run

    if kind == "run":
        row = get_run(conn, ident)
        if row is None:
            raise UsageError(f"run:{ident}: no such run (see 'iolab results')")
        doc = row.get("engine_json")
        return run_samples(f"run {ident}", doc if isinstance(doc, dict) else None)
    if kind == "sweep":
        return _sweep_samples(conn, ident, f"sweep {ident}", "")
    if kind == "tune":
        from iolab.tune import store as tstore

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
        return s
    from iolab.study.store import get_study

    st = get_study(conn, ident)
    if st is None:
        raise UsageError(f"study:{ident}: no such study")
    from iolab.sweep.store import list_sweeps

    s = Samples(f"study {ident} ({st.get('host')})")
    for sw in list_sweeps(conn, ident):
        s.values.update(_sweep_samples(conn, sw["id"], "", f"{sw['name']}: ").values)
    mpi = [float(r["bandwidth_bytes_per_s"]) / MIB for r in (st["result"] or {}).get("mpi") or []]
    if mpi:
        s.values["MPI bandwidth 2 ranks, same node"] = mpi
    return s


def _sweep_samples(conn: sqlite3.Connection, ident: int, title: str, prefix: str) -> Samples:
    from iolab.sweep import store as sstore

    if sstore.get_sweep(conn, ident) is None:
        raise UsageError(f"sweep:{ident}: no such sweep")
    s = Samples(title)
    for pt in sstore.sweep_points(conn, ident):
        point = " ".join(f"{k}={v}" for k, v in pt.params.items())
        for op, p in ops_of(pt.doc):
            bws = [b / MIB for b in phase_bandwidths(pt.doc, op, p)]
            if bws and pt.status == "ok":
                s.values[f"{prefix}{point} {op_name(op, p)}".strip()] = bws
    return s
