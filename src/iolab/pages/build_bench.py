"""The pages of stored runs and sweeps (the results database); a tune's is tune.page's, a
study's study.report's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from statistics import median
from typing import Any

from iolab.pages import plots, prep_bench, prep_run
from iolab.pages.fmt import mib_s
from iolab.pages.page import Block, Page, Plot, Section, Table, Text

SUMMARY_HEADERS = ["phase", "reps", "median MiB/s", "min MiB/s", "max MiB/s", "bytes/rep",
                   "median time", "cache"]


def run_sections(run: Mapping[str, Any], prefix: str = "") -> list[Section]:
    doc = run.get("engine_json") if isinstance(run.get("engine_json"), dict) else None
    head = Section(f"Run {run['id']}", [Text(
        f"{prep_run.headline(run, doc)}, stored {run.get('created_at')} on {run.get('host')}"
        + (f", label {run['label']}" if run.get("label") else ""))])
    if run.get("error"):
        head.blocks.append(Text(f"error: {run['error']}", "high"))
    if doc is None:
        head.blocks.append(Text("No engine document stored for this run."))
        return [head]
    if prep_run.kind(doc) == "metadata":
        head.blocks += _metadata_blocks(doc, prefix)
    else:
        head.blocks += _bandwidth_blocks(doc, prefix)
    head.blocks.append(Table(["setting", "value"], prep_run.config_rows(doc),
                             "Configuration and environment"))
    return [head]


def _bandwidth_blocks(doc: Mapping[str, Any], prefix: str) -> list[Block]:
    out: list[Block] = [Table(SUMMARY_HEADERS, prep_bench.summary_rows(doc), "Bandwidth")]
    series = prep_bench.repetition_series(doc)
    if series:
        out.append(Plot(f"{prefix}bandwidth", "Bandwidth of each repetition",
                        partial(plots.series, series, "repetition", "MiB/s",
                                "bandwidth per repetition", x_kind="integer")))
    for op in ("write", "read"):
        rb = prep_bench.run_rank_bars(doc, op)
        if rb is not None and len(rb.ranks) > 0:
            out.append(Plot(
                f"{prefix}ranks-{op}", f"{op}: per-rank time (open + transfer + close) and "
                f"bytes, last repetition; slowest rank {rb.slowest}",
                partial(plots.rank_bars, rb)))
    return out


def _metadata_blocks(doc: Mapping[str, Any], prefix: str) -> list[Block]:
    """Operations per second of each phase, as mdtest reports them: no bandwidth."""
    rates = prep_run.metadata_rates(doc)
    out: list[Block] = [Table(prep_run.METADATA_HEADERS, prep_run.metadata_rows(doc),
                              "Metadata rates (operations per second, all ranks)")]
    if rates:
        out.append(Plot(f"{prefix}metadata-rates", "Operations per second of each phase: mean "
                        "over the repetitions, the bar the min-max range",
                        partial(plots.phase_rates, [p.name for p in rates],
                                [p.mean for p in rates], [min(p.rates) for p in rates],
                                [max(p.rates) for p in rates], "ops/s",
                                "metadata rate per phase")))
    return out


def runs_page(runs: Sequence[Mapping[str, Any]]) -> Page:
    """One run, or several on one page (the default job's runs), each with its plots."""
    if len(runs) == 1:
        run = runs[0]
        return Page(f"iolab report: run {run['id']}", [" ".join(run.get("command") or [])],
                    run_sections(run))
    page = Page(f"iolab report: runs {', '.join(str(r['id']) for r in runs)}")
    for r in runs:
        page.sections += run_sections(r, prefix=f"run{r['id']}-")
    return page


def sweep_sections(sw: Mapping[str, Any], pts: list[prep_bench.SweepPoint],
                   prefix: str = "") -> list[Section]:
    grid = sw["grid"]
    x_param = grid[0][0]
    line_param = grid[1][0] if len(grid) > 1 else None
    x_kind = prep_bench.x_kind(x_param, grid[0][1], pts)
    sec = Section(sw.get("name") or f"Sweep {sw['id']}", [Text(
        f"status {sw['status']}, {len(pts)} of {_n_points(grid)} points stored, "
        f"{sw['repetitions']} repetition(s) each; fixed options: "
        f"{' '.join(sw['bench_args']) or '(none)'}")])
    ops: list[tuple[str, int]] = []
    for pt in pts:
        ops += [k for k in prep_bench.ops_of(pt.doc) if k not in ops]
    # a sweep of metadata runs is in operations per second, per phase (create, stat...)
    md = any(prep_run.kind(pt.doc) == "metadata" for pt in pts if pt.doc)
    unit, what, key = ("ops/s", "rate", "iops") if md else ("MiB/s", "bandwidth",
                                                           "bw_bytes_per_s")
    for op, rpass in ops:
        series = prep_bench.sweep_series(pts, x_param, op, line_param, rpass, metadata=md)
        if not series:
            continue
        name = _phase(op, rpass, md)
        sec.blocks.append(Plot(
            f"{prefix}sweep-{name.replace(' ', '-')}", f"{name} {what} against {x_param}: "
            "median and range across repetitions",
            partial(plots.series, series, x_param, unit, f"{name} {what}",
                    log_x=x_kind == "integer" and _spans_powers(series), x_kind=x_kind)))
    rows = []
    for pt in pts:
        for op, p in prep_bench.ops_of(pt.doc):
            vals = prep_bench.phase_values(pt.doc, op, p, key)
            if vals:
                cell = prep_run.rate if md else mib_s
                rows.append([", ".join(f"{k}={v}" for k, v in pt.params.items()),
                             _phase(op, p, md), cell(median(vals)), cell(min(vals)),
                             cell(max(vals)), str(pt.run_id)])
        if pt.status != "ok":
            rows.append([", ".join(f"{k}={v}" for k, v in pt.params.items()), pt.status,
                         "-", "-", "-", str(pt.run_id or "-")])
    sec.blocks.append(Table(["point", "phase", f"median {unit}", f"min {unit}", f"max {unit}",
                             "run"], rows, "Points"))
    return [sec]


def _phase(op: str, read_pass: int, metadata: bool) -> str:
    return prep_run.phase_name(op) if metadata else prep_bench.op_name(op, read_pass)


def _n_points(grid: list[tuple[str, list[str]]]) -> int:
    n = 1
    for _, v in grid:
        n *= len(v)
    return n


def _spans_powers(series: list[prep_bench.Series]) -> bool:
    xs = [float(x) for s in series for x in s.x if float(x) > 0]
    return bool(xs) and max(xs) / min(xs) >= 8


def sweep_page(sw: Mapping[str, Any], pts: list[prep_bench.SweepPoint]) -> Page:
    return Page(f"iolab report: sweep {sw['id']}", [" ".join(sw.get("command") or [])],
                sweep_sections(sw, pts))
