"""The report page of a study: what ran and what was skipped, each experiment's plots, the
MPI numbers and the frequency fits."""

from __future__ import annotations

import sqlite3
from functools import partial

from iolab.errors import UsageError
from iolab.pages import plots
from iolab.pages.build_bench import sweep_sections
from iolab.pages.page import Block, Page, Plot, Section, Table, Text
from iolab.pages.prep_bench import SweepPoint
from iolab.study.results import frequency_fits, mpi_rows
from iolab.study.store import get_study
from iolab.sweep import store as sstore
from iolab.units import fmt_time


def study_page(conn: sqlite3.Connection, study_id: int) -> Page:
    st = get_study(conn, study_id)
    if st is None:
        raise UsageError(f"study {study_id}: no such study (see 'iolab study --list')")
    res = st["result"] or {}
    head = Section("Study", [Text(
        f"{st['size']} study of {st['host']}, status {st['status']}, started "
        f"{fmt_time(st['created_at'])}; the method of 'I/O performance on KNL and Haswell' "
        "(CUG'17)")])
    skipped = res.get("skipped") or []
    head.blocks.append(Table(["experiment", "why it was skipped"], skipped, "Skipped")
                       if skipped else Text("Nothing was skipped."))
    secs = [head]
    for sw in sstore.list_sweeps(conn, study_id):
        full = sstore.get_sweep(conn, sw["id"])
        assert full is not None
        pts = sstore.sweep_points(conn, sw["id"])
        part = sweep_sections(full, pts, prefix=f"{sw['name']}-")
        part[0].heading = f"{sw['name']}: {dict(res.get('experiments') or {}).get(sw['name'], '')}"
        if sw["name"] == "cpu-freq":
            part[0].blocks += _fit_blocks(pts)
        secs += part
    mpi = Section("MPI within the node (2 ranks)")
    rows = mpi_rows(res.get("mpi") or [])
    mpi.blocks.append(Table(["measure", "median", "min", "max", "runs"], rows) if rows
                      else Text(f"not measured: {res.get('mpi_skipped') or 'unknown'}"))
    secs.append(mpi)
    return Page(f"iolab report: study {study_id}", [" ".join(st["command"])], secs)


def _fit_blocks(pts: list[SweepPoint]) -> list[Block]:
    out: list[Block] = []
    rows = []
    for mode, (xs, ys, fit) in frequency_fits(pts).items():
        if fit is None:
            rows.append([mode, "-", "-", "-", f"{len(xs)} point(s): too few for a line"])
            continue
        rows.append([mode, f"{fit.slope * 1e6:,.2f}", f"{fit.intercept:,.1f}", f"{fit.r2:.3f}",
                     str(fit.n)])
        out.append(Plot(f"fit-{mode}", f"{mode}: write bandwidth against CPU frequency",
                        partial(plots.fit_plot, xs, ys, fit.slope, fit.intercept, fit.r2,
                                "CPU frequency (kHz)", "MiB/s", f"{mode} writes")))
    return [Table(["mode", "slope (MiB/s per GHz)", "intercept (MiB/s)", "r²", "points"], rows,
                  "Bandwidth = slope x frequency + intercept"), *out]
