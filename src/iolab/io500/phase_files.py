"""IO500's per-phase files in the result folder, as IO500 02091cf writes them: for each IOR
and mdtest phase ``<phase>.txt`` (the tool's report of that phase) and ``<phase>.csv`` (its
per-rank figures: IOR's ``saveRankPerformanceDetailsCSV``, mdtest's
``--saveRankPerformanceDetails``), and ``find.csv`` (pfind's runtime and rate line, then its
counters). The reports come from iolab ior's and iolab mdtest's renderers, on the phase's
stored run, with IO500's command line; the figures are the engine's per-rank times.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from iolab.io500.find import FindResult
from iolab.ior import output as ior_output
from iolab.ior.parse import parse_command_line as parse_ior
from iolab.mdtest import mapping as md_mapping
from iolab.mdtest import output as md_output
from iolab.mdtest.parse import parse_command_line as parse_mdtest

# mdtest's CSV columns, in its order (mdtest_test_names of IOR 4's mdtest.c)
MDTEST_CSV_PHASES = ("Directory creation", "Directory stat", "Directory read",
                     "Directory rename", "Directory removal", "File creation", "File stat",
                     "File read", "File removal", "Tree creation", "Tree removal")
# the engine's op of each column (mdtest's directory read has none: an empty column, as
# IO500's own mdtest phases leave it)
_MDTEST_OPS = dict(zip(MDTEST_CSV_PHASES, (
    "dir_create", "dir_stat", "", "dir_rename", "dir_remove", "create", "stat", "open_read",
    "remove", "tree_create", "tree_remove")))
# the per-rank rows stop after the item phases, as mdtest's do
_MDTEST_RANK_COLUMNS = 9


def _phases(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [ph for rep in doc.get("repetitions") or [] for ph in rep.get("phases") or []]


def _e(value: float) -> str:
    return f"{value:.10e}"


def ior_csv(doc: dict[str, Any]) -> str:
    """IOR's saveRankPerformanceDetailsCSV: each rank's time with and without open and
    close, and its bytes over each."""
    lines = ["access,rank,runtime-with-openclose,runtime,throughput-withopenclose,throughput"]
    for ph in _phases(doc):
        for r in ph.get("per_rank") or []:
            xfer = float(r.get("xfer_s") or 0.0)
            total = float(r.get("open_s") or 0.0) + xfer + float(r.get("close_s") or 0.0)
            nbytes = float(r.get("bytes") or 0)
            lines.append(",".join([str(ph.get("op")), str(r.get("rank")), _e(total), _e(xfer),
                                   _e(nbytes / total if total > 0 else 0.0),
                                   _e(nbytes / xfer if xfer > 0 else 0.0)]))
    return "\n".join(lines) + "\n"


def mdtest_csv(doc: dict[str, Any], items: int) -> str:
    """mdtest's --saveRankPerformanceDetails: rate and time of every phase that ran, over all
    ranks (the "all" row) and per rank (its own loop)."""
    by_op = {ph.get("op"): ph for ph in _phases(doc)}
    header = ["rank", "items"] + [f"{k}-{name}" for name in MDTEST_CSV_PHASES
                                  for k in ("rate", "time")]
    row_all = ["all", str(items)]
    for name in MDTEST_CSV_PHASES:
        ph = by_op.get(_MDTEST_OPS[name])
        t = float(ph.get("time_s") or 0.0) if ph else 0.0
        row_all += [_e(float(ph.get("ops") or 0) / t), _e(t)] if ph and t > 0 else ["", ""]
    lines = [",".join(header), ",".join(row_all)]
    ranks = sorted({int(r.get("rank", 0)) for ph in by_op.values()
                    for r in ph.get("per_rank") or []})
    for rank in ranks:
        row = [str(rank), ""]
        for name in MDTEST_CSV_PHASES[:_MDTEST_RANK_COLUMNS]:
            ph = by_op.get(_MDTEST_OPS[name])
            mine = [r for r in (ph.get("per_rank") or []) if r.get("rank") == rank] if ph else []
            t = float(mine[0].get("xfer_s") or 0.0) if mine else 0.0
            row += [_e(float(mine[0].get("ops") or 0) / t), _e(t)] if t > 0 else ["", ""]
        lines.append(",".join(row))
    return "\n".join(lines) + "\n"


def find_csv(found: FindResult, ranks: list[dict[str, Any]]) -> str:
    """pfind's file: its runtime and rate line, then each rank's counters (pfind's first
    columns: the work-stealing ones are not in iolab's split)."""
    rate = found.total / found.runtime_s if found.runtime_s > 0 else 0.0
    rows = [f"{r['rank']}, {r['errors']}, 0, {r['found']}, {r['checked']}, {r['checked']}"
            for r in sorted(ranks, key=lambda r: int(r["rank"]))]
    return "\n".join([f"runtime: {found.runtime_s:f} rate: {rate:f}",
                      "rank, errors, unknown, found, total, checked", *rows]) + "\n"


def write_ior(resdir: str, phase: str, io500: list[str], words: list[str],
              doc: dict[str, Any], began: str) -> None:
    """<phase>.txt (IOR's report, IO500's command line) and <phase>.csv."""
    test = parse_ior(words).tests[0]
    command = shlex.join(["./ior", *io500[1:]])
    result = ior_output.TestResult(0, test, doc, command, began)
    result.rows = ior_output.rows_of(doc, int(test.params["transferSize"]))
    Path(resdir, f"{phase}.txt").write_text(ior_output.render_text([result], began, command))
    Path(resdir, f"{phase}.csv").write_text(ior_csv(doc))


def write_mdtest(resdir: str, phase: str, io500: list[str], words: list[str],
                 doc: dict[str, Any], began: str, items: int | None) -> None:
    """<phase>.txt (mdtest's report with rates and times, as IO500's -P) and <phase>.csv."""
    test = parse_mdtest([*words, "-P"]).test
    run = md_mapping.plan(test, int((doc.get("environment") or {}).get("ranks") or 1))
    if items is not None:
        run = dataclasses.replace(run, items=items)
    command = md_output.command_line_text(io500[1:]).replace("mdtest", "./mdtest", 1)
    Path(resdir, f"{phase}.txt").write_text(
        md_output.render_text(doc, test, run, command, began, None))
    Path(resdir, f"{phase}.csv").write_text(mdtest_csv(doc, run.items))
