"""mdtest's report from the engine's metadata run: the header lines, the ``SUMMARY rate``
table (``-Z``: ``SUMMARY time``, ``-P``: both) and ``--showRankStatistics`` columns.

First the figures mdtest computes (:func:`summary_rows`), then the text. mdtest's
definitions (``summarize_results_rank0``): an iteration's rate is all ranks' items tried
(failed calls included: :func:`tried`) over the slowest rank's phase time, its time the
slowest rank's; Max,
Min and Mean are over the iterations and the Std Dev divides by N-1 (0 for one iteration),
unlike IOR's N. The per-rank columns are over every rank and iteration of each rank's own
loop (mdtest's "before barrier" figures, the engine's per-rank ``xfer_s``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from iolab import __version__
from iolab.ior.output import file_system
from iolab.ior.parse import IorTest
from iolab.mdtest.mapping import TREE_PHASES, MdtestRun
from iolab.runs.engine_doc import Phase, RankShare, from_json

VERSION = f"4.1.0+iolab-{__version__}"  # one word, as mdtest's "mdtest-%s was launched"
Stats = tuple[float, float, float, float]


@dataclass
class SummaryRow:
    operation: str  # mdtest's name ("File creation")
    iterations: Stats  # max, min, mean, sd over the iterations
    per_rank: tuple[float, float, float]  # max, min, mean over ranks x iterations


def now_text() -> str:
    return time.strftime("%m/%d/%Y %H:%M:%S")  # mdtest's PrintTimestamp


def sample_stats(values: list[float]) -> Stats:
    """Max, min, mean and mdtest's standard deviation (divisor N-1; 0 for one value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return max(values), min(values), mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return max(values), min(values), mean, sd


def _phases(doc: dict[str, Any], op: str) -> list[Phase]:
    return list(from_json(doc).phases(op))


def tried(ph: Phase) -> int:
    """The items the phase's calls were made on: mdtest's rate divides every item it tried
    (updateResult's o.items), the engine counts in ``ops`` only the calls that succeeded and
    the failed ones under ``warnings`` (--md-warn)."""
    failed = int(ph.warnings.get("count") or 0) if ph.warnings else 0
    return int(ph.ops or 0) + failed


def _rank_value(ph: Phase, rank: RankShare, as_time: bool) -> float:
    own = float(rank.xfer_s or 0.0)
    if as_time:
        return own
    # mdtest: each rank's o.items, the same on every rank; the engine says how many calls
    # failed in the phase, not on which rank, so a phase with failures shares them out
    ops = tried(ph) / len(ph.per_rank) if ph.warnings else float(rank.ops or 0)
    return ops / own if own > 0 else 0.0


def summary_rows(doc: dict[str, Any], run: MdtestRun, as_time: bool) -> list[SummaryRow]:
    """mdtest's rows in its order; a phase that did not run (the rename of a single
    directory) is 0, as mdtest prints it."""
    rows = []
    for op, name in run.summary_phases():
        phases = _phases(doc, op)
        if not phases:
            rows.append(SummaryRow(name, (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
            continue
        if as_time:
            per_iteration = [float(ph.time_s or 0.0) for ph in phases]
        else:
            per_iteration = [tried(ph) / float(ph.time_s) if ph.time_s else 0.0
                             for ph in phases]
        ranks = [_rank_value(ph, r, as_time) for ph in phases for r in ph.per_rank]
        per_rank = (max(ranks), min(ranks), sum(ranks) / len(ranks)) if ranks else (0, 0, 0)
        rows.append(SummaryRow(name, sample_stats(per_iteration), per_rank))
    return rows


def tree_rows(doc: dict[str, Any], run: MdtestRun, as_time: bool) -> list[SummaryRow]:
    """mdtest's Tree creation / removal rows: rank 0's figures, the tree's directories over
    the phase's time (one tree's, whether rank 0 made the shared one or each rank its own);
    0 where the phase did not run (-T alone)."""
    rows = []
    for op, name in TREE_PHASES:
        times = [float(ph.time_s or 0.0) for ph in _phases(doc, op)]
        values = times if as_time else [run.tree.dirs / t if t else 0.0 for t in times]
        stats = sample_stats(values) if values else (0.0, 0.0, 0.0, 0.0)
        rows.append(SummaryRow(name, stats, stats[:3]))
    return rows


def _table(doc: dict[str, Any], run: MdtestRun, as_time: bool, rank_stats: bool
           ) -> list[str]:
    """mdtest's summary table, column for column (its printf formats)."""
    title = "SUMMARY time (in ms/op)" if as_time else "SUMMARY rate (in ops/sec)"
    out = ["", f"{title}: (of {run.iterations} iterations)"]
    out.append("   Operation     "
               + ("per Rank: Max            Min           Mean      per Iteration:"
                  if rank_stats else "               ")
               + " Max            Min           Mean        Std Dev")
    out.append("   ---------      "
               + ("         ---            ---           ----       " if rank_stats else "")
               + "               ---            ---           ----        -------")
    for row in summary_rows(doc, run, as_time):
        line = f"   {row.operation:<18} "
        if rank_stats:
            line += "".join(f"{v:14.3f} " for v in row.per_rank) + "    "
        line += "    " + " ".join(f"{v:14.3f}" for v in row.iterations)
        out.append(line)
    for row in tree_rows(doc, run, as_time):  # mdtest: "%-22s " and no 4 spaces
        line = f"   {row.operation:<22} "
        if rank_stats:
            line += "".join(f"{v:14.3f} " for v in row.per_rank) + "    "
        out.append(line + " ".join(f"{v:14.3f}" for v in row.iterations))
    return out


def _nodes(doc: dict[str, Any]) -> tuple[int, int, str]:
    """(ranks, nodes, mdtest's Nodemap: 1 for each rank on rank 0's node)."""
    env = from_json(doc).environment
    ranks = env.ranks or 0
    per_rank = sorted(((r.get("rank", 0), r.get("host")) for r in env.placement),
                      key=lambda x: x[0])
    first = per_rank[0][1] if per_rank else None
    nodemap = "".join("1" if host == first else "0" for _, host in per_rank) or "1" * ranks
    return ranks, max(len(env.ranks_per_host), 1), nodemap


# mdtest -a DUMMY's FS line (DUMMY_statfs: one block of one byte, one inode, all free)
DUMMY_FS_TEXT = "0.0 GiB   Used FS: 0.0%   Inodes: 0.0 Mi   Used Inodes: 0.0%"


def fs_text(directory: str) -> str | None:
    """mdtest's FS line of the -d directory (statvfs; taken while it exists)."""
    return dict(file_system(f"{directory}/test-dir.0-0")).get("FS")


def render_text(doc: dict[str, Any], test: IorTest, run: MdtestRun, command_line: str,
                began: str, fs_text: str | None) -> str:
    """mdtest's report of one test (every launched rank taking part)."""
    ranks = _nodes(doc)[0]
    return render_series([(ranks, doc)], test, run, command_line, began, fs_text, ranks)


def render_series(tests: list[tuple[int, dict[str, Any]]], test: IorTest, run: MdtestRun,
                  command_line: str, began: str, fs_text: str | None, launched: int) -> str:
    """mdtest's report: its header once, then for each task count (-f/-l/-s; one count
    without them) the ``N tasks, M items`` line and the SUMMARY table, as mdtest prints them."""
    p = test.params
    last_doc = tests[-1][1]
    _, nodes, nodemap = _nodes(last_doc)
    if len(nodemap) != launched:  # a series' last count below the launched ranks
        nodemap = nodemap[:1] * launched
    out = [f"-- started at {began} --", "",
           f"mdtest-{VERSION} was launched with {launched} total task(s) on {nodes} node(s)",
           f"Command line used: {command_line}"]
    if int(p["read_bytes"]) <= 0:
        out.append("WARNING: Read bytes is 0, thus, a read test will actually just "
                   "open/close")
    out.append(f"Nodemap: {nodemap}")
    out.append(f"{'Path':<20}: {run.directory}")  # mdtest names the -d directory
    if fs_text:
        out.append(f"{'FS':<20}: {fs_text}")
    rank_stats = bool(p["show_perrank_statistics"])
    for ranks, doc in tests:
        out += warning_lines(doc)
        out.append(f"{ranks} tasks, {ranks * run.items * run.dir_loops} {run.items_text()}")
        if p["print_rate_and_time"]:
            out += _table(doc, run, False, rank_stats)
            out += _table(doc, run, True, rank_stats)
        else:
            out += _table(doc, run, bool(p["print_time"]), rank_stats)
    out += [f"-- finished at {now_text()} --", ""]
    return "\n".join(out) + "\n"


def warning_lines(doc: dict[str, Any]) -> list[str]:
    """mdtest's WARNING lines for the calls that failed while the run went on (a phase on
    items an earlier line did not make, or made already): the first of each phase, with
    how many there were (mdtest prints one line per call)."""
    out = []
    for ph in from_json(doc).phases():
        if ph.warnings:
            count = int(ph.warnings.get("count") or 0)
            more = f" ({count} calls of {ph.op} failed; the run went on, as mdtest's)" \
                if count > 1 else ""
            out.append(f"WARNING: {ph.warnings.get('first')}{more}")
    return out


def command_line_text(words: list[str]) -> str:
    """mdtest's "Command line used": the program, then each word in single quotes."""
    return "mdtest" + "".join(f" '{w}'" for w in words)
