"""The dashboard's plots: drawing only, from series prepared in iolab.triage.dashboard.

Weeks are places on the x axis (a tick each, named by their Monday); names from logs reach
matplotlib only as legend text, which its SVG writer escapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from iolab.pages.plots import legend_outside

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FLAG_C = "#d62728"


@dataclass
class WeekBars:
    weeks: list[str]
    node_hours: list[float]
    io_node_hours: list[float]
    wasted_node_hours: list[float]


@dataclass
class TrendLine:
    name: str
    values: dict[str, float]  # week -> median seconds per GiB
    flagged: set[str] = field(default_factory=set)  # weeks flagged as a slowdown


def _fig(w: float, h: float) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), layout="constrained")
    return fig, fig.subplots()


def _week_axis(ax: Axes, weeks: Sequence[str]) -> None:
    ax.set_xticks(range(len(weeks)), list(weeks), rotation=45, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(weeks) - 0.4)
    ax.set_xlabel("week (Monday, UTC)")


def week_bars(b: WeekBars) -> Figure:
    """Per week: the node-hours of all jobs, in I/O, and wasted by problems with a fix."""
    fig, ax = _fig(8.0, 3.6)
    x = np.arange(len(b.weeks))
    ax.bar(x - 0.27, b.node_hours, 0.27, label="all node-hours", color="#9e9e9e")
    ax.bar(x, b.io_node_hours, 0.27, label="I/O node-hours", color="#1f77b4")
    ax.bar(x + 0.27, b.wasted_node_hours, 0.27, label="wasted node-hours", color=FLAG_C)
    _week_axis(ax, b.weeks)
    ax.set_ylabel("node-hours")
    ax.set_title("Node-hours per week", fontsize=10)
    legend_outside(ax)
    return fig


def trend_lines(weeks: Sequence[str], lines: Sequence[TrendLine], title: str) -> Figure:
    """Median I/O seconds per GiB week by week, one line per application or file system;
    the weeks flagged as slowdowns ringed in red."""
    fig, ax = _fig(8.0, 3.8)
    pos = {w: i for i, w in enumerate(weeks)}
    flagged_shown = False
    for line in lines:
        xs = [pos[w] for w in sorted(line.values) if w in pos]
        ys = [line.values[w] for w in sorted(line.values) if w in pos]
        ax.plot(xs, ys, marker="o", ms=4, lw=1.2, label=line.name)
        bad = [(pos[w], line.values[w]) for w in sorted(line.flagged) if w in line.values]
        if bad:
            ax.scatter([p[0] for p in bad], [p[1] for p in bad], s=90, facecolors="none",
                       edgecolors=FLAG_C, linewidths=1.6,
                       label=None if flagged_shown else "flagged slowdown", zorder=3)
            flagged_shown = True
    _week_axis(ax, weeks)
    ax.set_ylabel("median I/O s per GiB")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=10)
    legend_outside(ax)
    return fig
