"""Drawing only: each function takes prepared series (``prep_*``) and returns a matplotlib
Figure. No pyplot state: figures are made directly and rendered by the Agg/SVG backends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from iolab.report.prep_bench import Series
    from iolab.report.prep_log import LayerRow, RankBars, SizeHistogram, TimelineSeries

MIB = float(1 << 20)
READ_C, WRITE_C, META_C = "#1f77b4", "#d62728", "#7f7f7f"


def use_agg() -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)


def _fig(w: float = 8.0, h: float = 3.6, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def size_histograms(hists: Sequence[SizeHistogram]) -> Figure:
    fig, axes = _fig(4.2 * len(hists), 3.4, len(hists))
    for ax, h in zip(axes, hists):
        x = np.arange(len(h.bins))
        ax.bar(x - 0.2, h.read, 0.4, label="read", color=READ_C)
        ax.bar(x + 0.2, h.write, 0.4, label="write", color=WRITE_C)
        ax.set_xticks(x, h.bins, rotation=45, ha="right", fontsize=8)
        ax.set_title(f"{h.interface} request sizes (bytes)", fontsize=10)
        ax.set_ylabel("requests")
        ax.legend(fontsize=8)
    return fig


def rank_bars(rb: RankBars) -> Figure:
    fig, (a1, a2) = _fig(9, 3.4, 2)
    colors = ["#ff7f0e" if r == rb.slowest else "#4c72b0" for r in rb.ranks]
    a1.bar(rb.ranks, rb.time_s, color=colors)
    a1.axhline(rb.median_time_s, color="k", lw=0.8, ls="--", label="median")
    a1.set_title(f"I/O time per rank (slowest: rank {rb.slowest})", fontsize=10)
    a1.set_xlabel("rank")
    a1.set_ylabel("seconds")
    a1.legend(fontsize=8)
    a2.bar(rb.ranks, rb.bytes / MIB, color=colors)
    a2.set_title("bytes per rank", fontsize=10)
    a2.set_xlabel("rank")
    a2.set_ylabel("MiB")
    _integer_x(a1, a2)
    return fig


def _integer_x(*axes: Axes) -> None:
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def layer_bars(rows: Sequence[LayerRow]) -> Figure:
    fig, (a1, a2) = _fig(9, 0.6 + 0.55 * max(len(rows), 2), 2)
    y = np.arange(len(rows))[::-1]
    names = [r.layer for r in rows]
    a1.barh(y, [r.bytes_read / MIB for r in rows], color=READ_C, label="read")
    a1.barh(y, [r.bytes_written / MIB for r in rows], left=[r.bytes_read / MIB for r in rows],
            color=WRITE_C, label="write")
    a1.set_yticks(y, names)
    a1.set_xlabel("MiB")
    a1.set_title("bytes per layer (application's interface on top)", fontsize=10)
    a1.legend(fontsize=8)
    left = np.zeros(len(rows))
    for kind, c in (("read", READ_C), ("write", WRITE_C), ("meta", META_C)):
        vals = np.array([r.time_s[kind] for r in rows])
        a2.barh(y, vals, left=left, color=c, label=kind)
        left += vals
    a2.set_yticks(y, names)
    a2.set_xlabel("seconds (summed over ranks)")
    a2.set_title("time per layer", fontsize=10)
    a2.legend(fontsize=8)
    return fig


def timeline(ts: TimelineSeries, activity: Mapping[int, Sequence[tuple[float, float]]]) -> Figure:
    n = 2 if activity else 1
    fig, axes = _fig(9, 3.2 * n, 1) if n == 1 else _two_rows()
    ax = axes[0]
    mid = (ts.edges[:-1] + ts.edges[1:]) / 2
    ax.fill_between(mid, ts.rate("write") / MIB, step="mid", color=WRITE_C, alpha=0.6,
                    label="write")
    ax.fill_between(mid, ts.rate("read") / MIB, step="mid", color=READ_C, alpha=0.6,
                    label="read")
    ax.set_ylabel("MiB/s")
    ax.set_title("bandwidth over the run (each byte counted once)", fontsize=10)
    ax.legend(fontsize=8)
    if activity:
        ax2 = axes[1]
        for r, spans in activity.items():
            ax2.broken_barh(list(spans), (r - 0.4, 0.8), color="#4c72b0")
        ax2.set_ylabel("rank")
        from matplotlib.ticker import MaxNLocator

        ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax2.set_xlabel("seconds since the job started")
        ax2.set_title("when each rank was in I/O", fontsize=10)
        ax2.sharex(ax)
    else:
        ax.set_xlabel("seconds since the job started")
    return fig


def _two_rows() -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 6), layout="constrained")
    return fig, list(fig.subplots(2, 1, squeeze=False)[:, 0])


def series(lines: Sequence[Series], xlabel: str, ylabel: str, title: str,
           log_x: bool = False, categorical: bool = False) -> Figure:
    """Lines of medians with the min-max range across repetitions as a band and error bars."""
    fig, (ax,) = _fig(8, 3.8)
    cats: list[str] = []
    if categorical:
        for s in lines:
            cats += [str(x) for x in s.x if str(x) not in cats]
    for s in lines:
        x = [cats.index(str(v)) for v in s.x] if categorical else list(s.x)
        med = np.asarray(s.median)
        err = np.vstack([med - np.asarray(s.low), np.asarray(s.high) - med])
        ax.errorbar(x, med, yerr=err, marker="o", capsize=3, label=s.label)
        if len(x) > 1 and not categorical:
            ax.fill_between(x, s.low, s.high, alpha=0.15)
    if categorical:
        ax.set_xticks(range(len(cats)), cats)
        ax.set_xlim(-0.5, len(cats) - 0.5)
    else:
        if log_x:
            ax.set_xscale("log", base=2)
        xs = sorted({float(v) for s in lines for v in s.x})
        if len(xs) <= 12:  # the measured values, not 1.2, 1.4...
            ax.set_xticks(xs, [f"{v:g}" for v in xs])
            ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.set_ylim(bottom=0)
    if len(lines) > 1 or (lines and lines[0].label):
        ax.legend(fontsize=8)
    return fig


def convergence(values: Sequence[float | None], best: Sequence[float | None],
                unit: str) -> Figure:
    fig, (ax,) = _fig(8, 3.4)
    x = np.arange(1, len(values) + 1)
    v = np.array([np.nan if a is None else a for a in values], dtype=float)
    b = np.array([np.nan if a is None else a for a in best], dtype=float)
    ax.plot(x, v, "o", color="#4c72b0", label="trial")
    ax.step(x, b, where="post", color="#ff7f0e", label="best so far")
    ax.set_xlabel("trial")
    ax.set_ylabel(unit)
    ax.set_title("tuning convergence", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def importances(names: Sequence[str], values: Sequence[float]) -> Figure:
    fig, (ax,) = _fig(6, 0.6 + 0.4 * max(len(names), 2))
    y = np.arange(len(names))[::-1]
    ax.barh(y, values, color="#4c72b0")
    ax.set_yticks(y, names)
    ax.set_xlabel("importance (fANOVA share)")
    ax.set_title("which knobs mattered", fontsize=10)
    return fig


def ratio_bars(labels: Sequence[str], ratio: Sequence[float], low: Sequence[float],
               high: Sequence[float], title: str) -> Figure:
    fig, (ax,) = _fig(8, 0.8 + 0.4 * max(len(labels), 2))
    y = np.arange(len(labels))[::-1]
    r = np.asarray(ratio, dtype=float)
    err = np.vstack([r - np.asarray(low, dtype=float), np.asarray(high, dtype=float) - r])
    ax.barh(y, r, xerr=np.nan_to_num(err), color=["#2ca02c" if v >= 1 else "#d62728" for v in r],
            capsize=3)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel("B / A")
    ax.set_title(title, fontsize=10)
    return fig


def fit_plot(x: Sequence[float], y: Sequence[float], slope: float, intercept: float,
             r2: float, xlabel: str, ylabel: str, title: str) -> Figure:
    fig, (ax,) = _fig(7, 3.6)
    ax.plot(x, y, "o", label="measured")
    xs = np.linspace(min(x), max(x), 20)
    ax.plot(xs, slope * xs + intercept, "-", label=f"fit: r²={r2:.3f}, intercept={intercept:.1f}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return fig
