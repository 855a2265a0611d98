"""IOR's report from the engine's results: the text report, ``summaryFormat=JSON`` and CSV.

First the figures IOR computes (:func:`iteration_row`, :func:`summary_row`) from each
phase's per-rank times, then one renderer per format walking them. IOR's definitions:
bandwidth = bytes / (last close end - first open start); IOPS = transfers / (last transfer
end - first transfer start); latency = rank 0's transfer time / its transfers; the summary's
standard deviation divides by N (the repetitions), not N-1.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from iolab import __version__
from iolab.ior.parse import IorTest
from iolab.runs.engine_doc import Phase, RankShare, from_json

MIB = 1 << 20
KIB = 1 << 10
VERSION = f"4.1.0 (iolab {__version__})"


@dataclass
class IterationRow:
    access: str
    bytes: int
    bw_mib: float
    iops: float
    latency_s: float
    open_s: float
    wrrd_s: float
    close_s: float
    total_s: float
    iteration: int
    stonewall: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)  # -j: IOR's outlier lines


@dataclass
class TestResult:
    test_id: int
    test: IorTest
    doc: dict[str, Any]
    command_line: str
    start_time: str
    rows: list[IterationRow] = field(default_factory=list)


def iteration_row(phase: Phase, transfer: int, iteration: int) -> IterationRow:
    ranks = phase.per_rank
    starts = [r.start_s or 0.0 for r in ranks]
    opened = [(r.start_s or 0.0) + (r.open_s or 0.0) for r in ranks]
    moved = [(r.start_s or 0.0) + (r.open_s or 0.0) + (r.xfer_s or 0.0) for r in ranks]
    closing = [(r.end_s or 0.0) - (r.close_s or 0.0) for r in ranks]
    ends = [r.end_s or 0.0 for r in ranks]
    total = float(phase.time_s or 0.0)
    access = max(moved) - min(opened) if ranks else 0.0
    size = phase.bytes or 0
    first = ranks[0] if ranks else None
    return IterationRow(
        access=str(phase.op), bytes=size, bw_mib=size / total / MIB if total > 0 else 0.0,
        iops=size / transfer / access if access > 0 else 0.0,
        latency_s=(first.xfer_s or 0.0) / first.ops if first is not None and first.ops
        else 0.0,
        open_s=max(opened) - min(starts) if ranks else 0.0,
        wrrd_s=access, close_s=max(ends) - min(closing) if ranks else 0.0,
        total_s=total, iteration=iteration,
        stonewall=dict(phase.stonewall) if phase.stonewall is not None else None)


def rows_of(doc: dict[str, Any], transfer: int, outlier_s: int = 0) -> list[IterationRow]:
    """One row per write and read phase (first read pass), in IOR's order; with
    ``outlier_s`` (IOR -j) each row carries IOR's outlier warnings."""
    rows = []
    for n, rep in enumerate(from_json(doc).repetitions):
        for phase in rep.phases:
            if phase.op in ("write", "read") and not phase.read_pass:
                rows.append(iteration_row(phase, transfer, n))
                if outlier_s > 0:
                    rows[-1].warnings = outlier_warnings(phase, outlier_s)
    return rows


def outlier_warnings(phase: Phase, threshold_s: int) -> list[str]:
    """IOR's CheckForOutliers (-j N): for each of its five timers, every rank whose value is
    more than N seconds from the ranks' mean gets IOR's warning line (population standard
    deviation, as IOR's DisplayOutliers)."""
    ranks = phase.per_rank
    timers: tuple[tuple[str, Callable[[RankShare], Any]], ...] = (
        ("start time", lambda r: r.start_s), ("elapsed create time", lambda r: r.open_s),
        ("elapsed transfer time", lambda r: r.xfer_s),
        ("elapsed close time", lambda r: r.close_s), ("end time", lambda r: r.end_s))
    out = []
    for name, get in timers:
        values = [float(get(r) or 0.0) for r in ranks]
        if not values:
            continue
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        out += [f"WARNING: for {r.host or 'unknown'}, task {r.rank}, {phase.op} "
                f"{name} is {v:f} (mean={mean:f}, stddev={sd:f})"
                for r, v in zip(ranks, values) if abs(v - mean) > threshold_s]
    return out


@dataclass
class SummaryRow:
    operation: str
    bw: tuple[float, float, float, float]  # max, min, mean, sd (MiB/s)
    ops: tuple[float, float, float, float]
    mean_time_s: float
    agg_mib: float
    stonewall_s: float | None
    stonewall_mib: float | None


def population_stats(values: list[float]) -> tuple[float, float, float, float]:
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))  # IOR: N
    return max(values), min(values), mean, sd


def summary_row(rows: list[IterationRow], op: str, transfer: int) -> SummaryRow | None:
    mine = [r for r in rows if r.access == op]
    if not mine:
        return None
    bw = [r.bytes / r.total_s / MIB for r in mine if r.total_s > 0] or [0.0]
    ops = [r.bytes / transfer / r.total_s for r in mine if r.total_s > 0] or [0.0]
    walls = [r.stonewall for r in mine if r.stonewall]
    sw_time = sw_mib = None
    if walls:
        sw_time = sum(float(w.get("deadline_s") or 0) for w in walls) / len(walls)
        moved = sum(float(w.get("xfers_min") or 0) * transfer for w in walls)
        sw_mib = moved / (sw_time * len(walls)) / MIB if sw_time else 0.0
    mean_time = sum(r.total_s for r in mine) / len(mine)
    return SummaryRow(op, population_stats(bw), population_stats(ops), mean_time,
                      mine[0].bytes / MIB, sw_time, sw_mib)


def _pp(number: float) -> str:
    """IOR's PPDouble: left-justified, 10 wide, 6 decimals under 1, 2 under 3600."""
    if number < 0:
        return "   -      "
    precision = 6 if number < 1 else 2 if number < 3600 else 0
    return f"{number:<10.{precision}f}"


def human(value: int) -> str:
    """IOR's HumanReadable (base two)."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if value >= size:
            return f"{value / size:.2f} {unit}" if value % size else f"{value // size} {unit}"
    return f"{value} bytes"


def now_text() -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y")


def _hosts(doc: dict[str, Any]) -> tuple[int, int, int]:
    env = from_json(doc).environment
    per_host = env.ranks_per_host
    ranks = env.ranks or 0
    first = next(iter(per_host.values()), ranks)
    return max(len(per_host), 1), ranks, int(first)


def file_system(path: str) -> list[tuple[str, str]]:
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        st = os.statvfs(folder)
    except OSError:
        return [("Path", path)]
    total = st.f_blocks * st.f_frsize
    used = (1 - st.f_bfree / st.f_blocks) * 100 if st.f_blocks else 0.0
    inodes = st.f_files / (1 << 20)
    used_inodes = (1 - st.f_ffree / st.f_files) * 100 if st.f_files else 0.0
    unit, div = ("TiB", 1 << 40) if total >= 1 << 40 else ("GiB", 1 << 30)
    return [("Path", path), ("FS", f"{total / div:.1f} {unit}   Used FS: {used:2.1f}%   "
                             f"Inodes: {inodes:.1f} Mi   Used Inodes: {used_inodes:2.1f}%")]


def options_section(result: TestResult) -> list[tuple[str, Any]]:
    p = result.test.params
    nodes, ranks, per_node = _hosts(result.doc)
    agg = int((result.doc.get("config") or {}).get("total_bytes") or 0)
    out: list[tuple[str, Any]] = [
        ("api", str(p["api"]).upper()), ("apiVersion", ""), ("test filename", p["testFileName"]),
        ("access", "file-per-process" if p["filePerProc"] else "single-shared-file"),
        ("type", "collective" if p["collective"] else "independent"),
        ("segments", p["segmentCount"]),
        ("ordering in a file", "random" if p["randomOffset"] else "sequential")]
    if p["reorderTasks"]:
        out += [("ordering inter file", "constant task offset"),
                ("task offset", p["taskPerNodeOffset"])]
    else:
        out.append(("ordering inter file", "no tasks offsets"))
    out += [("nodes", nodes), ("tasks", ranks), ("clients per node", per_node),
            ("memoryBuffer", "CPU"), ("dataAccess", "CPU"), ("GPUDirect", "0"),
            ("repetitions", p["repetitions"]), ("xfersize", human(p["transferSize"])),
            ("blocksize", human(p["blockSize"])), ("aggregate filesize", human(agg))]
    if p["verbose"]:
        out.append(("verbose", p["verbose"]))
    if p["deadlineForStonewalling"] > 0:
        out += [("stonewallingTime", p["deadlineForStonewalling"]),
                ("stoneWallingWearOut", p["stoneWallingWearOut"])]
    return out


def _summary_fields(result: TestResult) -> list[tuple[str, Any]]:
    p = result.test.params
    _, ranks, per_node = _hosts(result.doc)
    return [("TestID", result.test_id), ("ReferenceNumber", p["refNum"]),
            ("segmentCount", p["segmentCount"]), ("blockSize", p["blockSize"]),
            ("transferSize", p["transferSize"]), ("numTasks", ranks),
            ("tasksPerNode", per_node), ("repetitions", p["repetitions"]),
            ("filePerProc", p["filePerProc"]), ("reorderTasks", p["reorderTasks"]),
            ("taskPerNodeOffset", p["taskPerNodeOffset"]),
            ("reorderTasksRandom", p["reorderTasksRandom"]),
            ("reorderTasksRandomSeed", p["reorderTasksRandomSeed"])]


def summaries(result: TestResult) -> list[SummaryRow]:
    p = result.test.params
    ops = [op for op, on in (("write", p["writeFile"]), ("read", p["readFile"] or
                                                        p["checkRead"])) if on]
    found = [summary_row(result.rows, op, p["transferSize"]) for op in ops]
    return [s for s in found if s is not None]


# -- renderers: each walks the same TestResults ------------------------------------------

def _uname() -> str:
    u = os.uname()
    return f"{u.sysname} {u.nodename}"


def render_text(results: list[TestResult], began: str, command_line: str) -> str:
    out = [f"IOR-{VERSION}: MPI Coordinated Test of Parallel I/O",
           f"{'Began':<20}: {began}", f"{'Command line':<20}: {command_line}",
           f"{'Machine':<20}: {_uname()}"]
    for result in results:
        out.append(f"{'TestID':<20}: {result.test_id}")
        out.append(f"{'StartTime':<20}: {result.start_time}")
        out += [f"{k:<20}: {v}" for k, v in file_system(str(result.test.params["testFileName"]))]
        out += ["", "Options: "]
        out += [f"{k:<20}: {v}" for k, v in options_section(result)]
        out += ["", "Results: ", "",
                "access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    "
                "wr/rd(s)   close(s)   total(s)   iter",
                "------    ---------  ----       ----------  ---------- ---------  --------   "
                "--------   --------   --------   ----"]
        p = result.test.params
        for r in result.rows:
            out.append(f"{r.access:<10}{_pp(r.bw_mib)} {_pp(r.iops)} {_pp(r.latency_s)}  "
                       f"{_pp(p['blockSize'] / KIB)} {_pp(p['transferSize'] / KIB)} "
                       f"{_pp(r.open_s)} {_pp(r.wrrd_s)} {_pp(r.close_s)} {_pp(r.total_s)} "
                       f"{r.iteration:<4d}")
            out += r.warnings
    out += ["", "Summary of all tests:" + _summary_header()]
    for result in results:
        out += [_summary_text(result, s) for s in summaries(result)]
    out.append(f"{'Finished':<20}: {now_text()}")
    return "\n".join(out) + "\n"


def _summary_header() -> str:
    names = ("Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev", "Max(OPs)", "Min(OPs)",
             "Mean(OPs)", "StdDev", "Mean(s)", "Stonewall(s)")
    return ("\n" + f"{'Operation':<9} " + " ".join(f"{n:>10}" for n in names)
            + f" {'Stonewall(MiB)':>13}"
            + " Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt "
            + f"{' blksiz':>8} {'xsize':>8} {'aggs(MiB)':>9} {'API':>5} RefNum")


def _summary_text(result: TestResult, s: SummaryRow) -> str:
    f = dict(_summary_fields(result))
    p = result.test.params
    nums = " ".join(f"{v:10.2f}" for v in (*s.bw, *s.ops))
    wall = (f"{s.stonewall_s:10.2f} {s.stonewall_mib or 0:13.2f} " if s.stonewall_s is not None
            else f"{'NA':>10} {'NA':>13} ")
    return (f"{s.operation:<9} {nums} {s.mean_time_s:10.5f} {wall}"
            f"{f['TestID']:5d} {f['numTasks']:6d} {f['tasksPerNode']:3d} "
            f"{f['repetitions']:4d} {f['filePerProc']:3d} {f['reorderTasks']:5d} "
            f"{f['taskPerNodeOffset']:8d} {f['reorderTasksRandom']:9d} "
            f"{f['reorderTasksRandomSeed']:4d} {f['segmentCount']:6d} {f['blockSize']:8d} "
            f"{f['transferSize']:8d} {s.agg_mib:9.1f} {str(p['api']).upper():>3} "
            f"{f['ReferenceNumber']:6d}")


def _r4(x: float) -> float:
    return round(float(x), 4)


def _parameters(result: TestResult) -> dict[str, Any]:
    p = result.test.params
    nodes, _, per_node = _hosts(result.doc)
    keys = ("deadlineForStonewalling:deadlineForStonewall", "stoneWallingWearOut",
            "maxTimeDuration", "outlierThreshold", "options", "dryRun")
    out: dict[str, Any] = {"testID": result.test_id, "refnum": p["refNum"],
                           "api": str(p["api"]).upper(),
                           "platform": p["platform"] or f"{os.uname().nodename}"
                                                        f"({os.uname().sysname})",
                           "testFileName": p["testFileName"]}
    for spec in keys:
        key, _, shown = spec.partition(":")
        out[shown or key] = p[key] if key != "options" else "(null)"
    out.update({"nodes": nodes, "memoryPerTask": 0, "memoryPerNode": 0,
                "tasksPerNode": per_node})
    for key in ("repetitions", "multiFile", "interTestDelay", "fsync"):
        out[key] = p[key]
    out["fsyncperwrite"] = p["fsyncPerWrite"]
    for key in ("useExistingTestFile", "uniqueDir", "singleXferAttempt", "readFile",
                "writeFile", "filePerProc", "reorderTasks", "reorderTasksRandom",
                "reorderTasksRandomSeed", "randomOffset", "checkWrite", "checkRead"):
        out[key] = p[key]
    out.update({"dataPacketType": 0, "keepFile": p["keepFile"],
                "keepFileWithError": p["keepFileWithError"],
                "warningAsErrors": p["warningAsErrors"], "verbose": p["verbose"],
                "data packet type": "g",
                "setTimeStampSignature/incompressibleSeed": p["setTimeStampSignature"],
                "collective": p["collective"], "segmentCount": p["segmentCount"],
                "transferSize": p["transferSize"], "blockSize": p["blockSize"]})
    return out


def render_json(results: list[TestResult], began: str, command_line: str) -> str:
    tests = []
    for result in results:
        fs = dict(file_system(str(result.test.params["testFileName"])))
        fs_parts = [x.split(": ")[-1] for x in fs.get("FS", "").split("   ")]
        test: dict[str, Any] = {"TestID": result.test_id, "StartTime": result.start_time,
                                "Path": fs["Path"]}
        if len(fs_parts) == 4:
            test.update({"Capacity": fs_parts[0], "Used Capacity": fs_parts[1],
                         "Inodes": fs_parts[2], "Used Inodes": fs_parts[3]})
        p = result.test.params
        test["Parameters"] = _parameters(result)
        test["Options"] = dict(options_section(result))
        test["Results"] = [{"access": r.access, "bwMiB": _r4(r.bw_mib),
                            "blockKiB": _r4(p["blockSize"] / KIB),
                            "xferKiB": _r4(p["transferSize"] / KIB), "iops": _r4(r.iops),
                            "latency": _r4(r.latency_s), "openTime": _r4(r.open_s),
                            "wrRdTime": _r4(r.wrrd_s), "closeTime": _r4(r.close_s),
                            "totalTime": _r4(r.total_s)} for r in result.rows]
        tests.append(test)
    summary = []
    for result in results:
        for s in summaries(result):
            row: dict[str, Any] = {"operation": s.operation,
                                   "API": str(result.test.params["api"]).upper()}
            row.update(_summary_fields(result))
            names = ("bwMaxMIB", "bwMinMIB", "bwMeanMIB", "bwStdMIB")
            row.update({n: _r4(v) for n, v in zip(names, s.bw)})
            row.update({n: _r4(v) for n, v in zip(("OPsMax", "OPsMin", "OPsMean", "OPsSD"),
                                                   s.ops)})
            row["MeanTime"] = _r4(s.mean_time_s)
            if s.stonewall_s is not None:
                row["StoneWallTime"] = _r4(s.stonewall_s)
                row["StoneWallbwMeanMIB"] = _r4(s.stonewall_mib or 0)
            row["xsizeMiB"] = _r4(s.agg_mib)
            summary.append(row)
    doc = {"Version": VERSION, "Began": began, "Command line": command_line,
           "Machine": _uname(), "tests": tests, "summary": summary, "Finished": now_text()}
    return json.dumps(doc, indent=2) + "\n"


def render_csv(results: list[TestResult]) -> str:
    out = []
    for result in results:
        p = result.test.params
        _, ranks, _ = _hosts(result.doc)
        out.append("access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),"
                   "close(s),total(s),numTasks,iter")
        for r in result.rows:
            nums = (r.bw_mib, r.iops, r.latency_s, p["blockSize"] / KIB,
                    p["transferSize"] / KIB, r.open_s, r.wrrd_s, r.close_s, r.total_s)
            out.append(",".join([r.access, *(f"{v:.4f}" for v in nums), str(ranks),
                                 str(r.iteration)]))
    return "\n".join(out) + "\n"
