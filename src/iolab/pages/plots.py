"""Drawing only: each function takes prepared series (``prep_*``) and returns a matplotlib
Figure. No pyplot state: figures are made directly and rendered by the Agg/SVG backends.

The axes say what their numbers are: ranks, trials and repetitions are whole numbers (ticks on
them only, as the terminal numbers them); byte sizes are powers of two on a log2 axis labelled
in KiB/MiB; categories (buffered, sync, direct) are places on an axis, never joined by a line.
Legends sit beside the data, and a lone point carries its value, so no mark is hidden or bare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from iolab.pages.fmt import human_bytes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from iolab.pages.prep_bench import Series
    from iolab.pages.prep_log import LayerRow, RankBars, SizeHistogram, TimelineSeries

MIB = float(1 << 20)
READ_C, WRITE_C, META_C = "#1f77b4", "#d62728", "#7f7f7f"
# What the x values of a plot are (plots.series): drawn and labelled accordingly.
X_KINDS = ("number", "integer", "bytes", "category")
_MAX_LISTED_TICKS = 12  # up to this many values, a tick on each (the measured ones)


def use_agg() -> None:
    import matplotlib  # deferred: matplotlib (~0.5 s to load) only when a page is drawn

    matplotlib.use("Agg", force=False)


def _fig(w: float = 8.0, h: float = 3.6, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    # deferred: matplotlib (~0.5 s to load) only when a page is drawn
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def legend_outside(ax: Axes) -> None:
    """The legend right of the axes (the constrained layout makes room): never over a bar
    or a point."""
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  frameon=False)


def index_axis(ax: Axes, values: Sequence[float], axis: str = "x") -> None:
    """An axis of whole numbers (ranks, trials, repetitions): ticks on the numbers only, and
    at least three slots wide, so one rank is a bar at 0, not a bar spanning -0.4..0.4."""
    # deferred: matplotlib (~0.5 s to load) only when a page is drawn
    from matplotlib.ticker import MaxNLocator, NullLocator

    vals = sorted({int(v) for v in values})
    if not vals:
        return
    lo, hi = vals[0], vals[-1]
    pad = max(0.6, (2 - (hi - lo)) / 2 + 0.5)
    which = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xlim if axis == "x" else ax.set_ylim)(lo - pad, hi + pad)
    if len(vals) <= 16:  # a label per rank while they fit side by side
        (ax.set_xticks if axis == "x" else ax.set_yticks)(vals, [str(v) for v in vals])
    else:
        which.set_major_locator(MaxNLocator(integer=True))
    which.set_minor_locator(NullLocator())


def bytes_axis(ax: Axes, values: Sequence[float]) -> None:
    """Sizes in bytes on a log2 axis labelled 64 KiB, 1 MiB (not 1.04858e+06)."""
    # deferred: matplotlib (~0.5 s to load) only when a page is drawn
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    vals = sorted({float(v) for v in values if float(v) > 0})
    ax.set_xscale("log", base=2)
    if vals and len(vals) <= _MAX_LISTED_TICKS:
        ax.set_xticks(vals, [human_bytes(int(v)) for v in vals])
    else:
        ax.xaxis.set_major_locator(LogLocator(base=2))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: human_bytes(int(v))))
    ax.xaxis.set_minor_locator(NullLocator())
    if vals:
        ax.set_xlim(vals[0] / 1.5, vals[-1] * 1.5)


def label_point(ax: Axes, x: float, y: float, unit: str, color: str | None = None) -> None:
    """A lone point's value written beside it (one repetition: no line, no band to read)."""
    ax.annotate(f"{y:,.1f} {unit}".strip(), (x, y), textcoords="offset points",
                xytext=(7, 5), fontsize=8, color=color or "#222")


def size_histograms(hists: Sequence[SizeHistogram]) -> Figure:
    fig, axes = _fig(4.2 * len(hists) + 0.8, 3.4, len(hists))
    for ax, h in zip(axes, hists):
        x = np.arange(len(h.bins))
        ax.bar(x - 0.2, h.read, 0.4, label="read", color=READ_C)
        ax.bar(x + 0.2, h.write, 0.4, label="write", color=WRITE_C)
        ax.set_xticks(x, h.bins, rotation=45, ha="right", fontsize=8)
        ax.set_title(f"{h.interface} request sizes (bytes)", fontsize=10)
        ax.set_xlabel("request size bin (bytes)")
        ax.set_ylabel("requests")
    legend_outside(axes[-1])  # the same two colours in every panel
    return fig


def rank_bars(rb: RankBars) -> Figure:
    fig, (a1, a2) = _fig(9.5, 3.4, 2)
    colors = ["#ff7f0e" if r == rb.slowest else "#4c72b0" for r in rb.ranks]
    a1.bar(rb.ranks, rb.time_s, color=colors)
    a1.axhline(rb.median_time_s, color="k", lw=0.8, ls="--", label="median")
    a1.set_title(f"I/O time per rank (slowest: rank {rb.slowest})", fontsize=10)
    a1.set_xlabel("rank")
    a1.set_ylabel("seconds")
    legend_outside(a1)
    a2.bar(rb.ranks, rb.bytes / MIB, color=colors)
    a2.set_title("bytes per rank", fontsize=10)
    a2.set_xlabel("rank")
    a2.set_ylabel("MiB")
    for ax in (a1, a2):
        index_axis(ax, rb.ranks.tolist())
    return fig


def layer_bars(rows: Sequence[LayerRow]) -> Figure:
    fig, (a1, a2) = _fig(10, 0.9 + 0.55 * max(len(rows), 2), 2)
    y = np.arange(len(rows))[::-1]
    names = [r.layer for r in rows]
    a1.barh(y, [r.bytes_read / MIB for r in rows], color=READ_C, label="read")
    a1.barh(y, [r.bytes_written / MIB for r in rows], left=[r.bytes_read / MIB for r in rows],
            color=WRITE_C, label="write")
    a1.set_yticks(y, names)
    a1.set_xlabel("MiB")
    a1.set_ylabel("layer")
    a1.set_title("bytes per layer (application's interface on top)", fontsize=10)
    legend_outside(a1)
    left = np.zeros(len(rows))
    for kind, c in (("read", READ_C), ("write", WRITE_C), ("meta", META_C)):
        vals = np.array([r.time_s[kind] for r in rows])
        a2.barh(y, vals, left=left, color=c, label=kind)
        left += vals
    a2.set_yticks(y, names)
    a2.set_xlabel("seconds (summed over ranks)")
    a2.set_ylabel("layer")
    a2.set_title("time per layer", fontsize=10)
    legend_outside(a2)
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
    legend_outside(ax)
    if activity:
        ax2 = axes[1]
        for r, spans in activity.items():
            ax2.broken_barh(list(spans), (r - 0.4, 0.8), color="#4c72b0")
        ax2.set_ylabel("rank")
        index_axis(ax2, list(activity), axis="y")
        ax2.set_xlabel("seconds since the job started")
        ax2.set_title("when each rank was in I/O", fontsize=10)
        ax2.sharex(ax)
        ax.set_xlabel("seconds since the job started")
    else:
        ax.set_xlabel("seconds since the job started")
    return fig


def _two_rows() -> tuple[Figure, list[Axes]]:
    # deferred: matplotlib (~0.5 s to load) only when a page is drawn
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 6), layout="constrained")
    return fig, list(fig.subplots(2, 1, squeeze=False)[:, 0])


def series(lines: Sequence[Series], xlabel: str, ylabel: str, title: str,
           log_x: bool = False, categorical: bool = False, x_kind: str | None = None) -> Figure:
    """Medians with the min-max range across repetitions as error bars (and a band along a
    line). ``x_kind`` is one of X_KINDS; ``categorical`` is the older spelling of
    "category". Categories get markers side by side, never a line between them; a line of
    one point is a marker with its value written beside it."""
    # deferred: matplotlib (~0.5 s to load) only when a page is drawn
    from matplotlib.colors import to_hex

    kind = x_kind or ("category" if categorical else "number")
    if kind not in X_KINDS:
        raise ValueError(f"x_kind {kind!r}: one of {', '.join(X_KINDS)}")
    fig, (ax,) = _fig(8.5, 3.8)
    cats: list[str] = []
    if kind == "category":
        for s in lines:
            cats += [str(x) for x in s.x if str(x) not in cats]
    for i, s in enumerate(lines):
        med = np.asarray(s.median, dtype=float)
        err = np.vstack([med - np.asarray(s.low), np.asarray(s.high) - med])
        if kind == "category":  # side by side, so two modes at one place stay apart
            shift = (i - (len(lines) - 1) / 2) * min(0.12, 0.6 / max(len(lines), 1))
            x = [cats.index(str(v)) + shift for v in s.x]
        else:
            x = [float(v) for v in s.x]
        joined = kind != "category" and len(x) > 1
        bars = ax.errorbar(x, med, yerr=err, marker="o", capsize=3, label=s.label or None,
                           linestyle="-" if joined else "none")
        color = to_hex(bars.lines[0].get_color())
        if joined:
            ax.fill_between(x, s.low, s.high, alpha=0.15, color=color)
        if len(x) == 1 or kind == "category" and len(lines) * len(cats) <= 8:
            for xv, yv in zip(x, med.tolist()):
                label_point(ax, xv, yv, ylabel, color)
    xs = [float(v) for s in lines for v in s.x] if kind != "category" else []
    if kind == "category":
        ax.set_xticks(range(len(cats)), cats)
        ax.set_xlim(-0.6, len(cats) - 0.4)
    elif kind == "bytes":
        bytes_axis(ax, xs)
    elif kind == "integer" and not log_x:
        index_axis(ax, xs)
    else:
        _number_axis(ax, xs, log_x, whole=kind == "integer")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    top = max((h for s in lines for h in s.high), default=0.0)
    ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)  # room above for a point's value
    if any(s.label for s in lines):
        legend_outside(ax)
    return fig


def _number_axis(ax: Axes, xs: Sequence[float], log_x: bool, whole: bool) -> None:
    # deferred: matplotlib (~0.5 s to load) only when a page is drawn
    from matplotlib.ticker import NullLocator

    vals = sorted(set(xs))
    if log_x:
        ax.set_xscale("log", base=2)
    if len(vals) <= _MAX_LISTED_TICKS:  # the measured values, not 1.2, 1.4...
        ax.set_xticks(vals, [f"{int(v)}" if whole else f"{v:g}" for v in vals])
        ax.xaxis.set_minor_locator(NullLocator())
    if len(vals) == 1:
        v = vals[0]
        ax.set_xlim(*((v / 2, v * 2) if log_x and v > 0 else (v - 1, v + 1)))


def convergence(values: Sequence[float | None], best: Sequence[float | None],
                unit: str, numbers: Sequence[int] | None = None) -> Figure:
    """Each trial's score and the best so far; ``numbers`` are the trials' numbers as the
    terminal printed them (1, 2, ...), the default."""
    fig, (ax,) = _fig(8.5, 3.4)
    x = np.asarray(numbers if numbers is not None else range(1, len(values) + 1), dtype=float)
    v = np.array([np.nan if a is None else a for a in values], dtype=float)
    b = np.array([np.nan if a is None else a for a in best], dtype=float)
    ax.plot(x, v, "o", color="#4c72b0", label="trial")
    ax.step(x, b, where="post", color="#ff7f0e", label="best so far")
    if len(x) == 1 and np.isfinite(v[0]):
        label_point(ax, float(x[0]), float(v[0]), unit)
    index_axis(ax, x.tolist())
    ax.set_xlabel("trial")
    ax.set_ylabel(unit)
    ax.set_title("tuning convergence", fontsize=10)
    legend_outside(ax)
    return fig


def phase_rates(names: Sequence[str], mean: Sequence[float], low: Sequence[float],
                high: Sequence[float], unit: str, title: str) -> Figure:
    """One bar per phase (categories: create, stat, read, remove): the mean with the
    min-max range across repetitions, its value written at the end. A linear axis: on a log
    one a bar's length would mean nothing, and the written values carry the small ones."""
    fig, (ax,) = _fig(8.5, 0.9 + 0.5 * max(len(names), 2))
    y = np.arange(len(names))[::-1]
    m = np.asarray(mean, dtype=float)
    err = np.vstack([m - np.asarray(low, dtype=float), np.asarray(high, dtype=float) - m])
    ax.barh(y, m, xerr=err, color="#4c72b0", capsize=3)
    for yv, hv, mv in zip(y.tolist(), np.asarray(high, dtype=float).tolist(), m.tolist()):
        ax.annotate(f"{mv:,.0f}", (hv, yv), textcoords="offset points", xytext=(5, -3),
                    fontsize=8)
    ax.set_yticks(y, names)
    ax.set_ylabel("phase")
    ax.set_xlabel(unit)
    ax.margins(x=0.15)
    ax.set_title(title, fontsize=10)
    return fig


def importances(names: Sequence[str], values: Sequence[float]) -> Figure:
    fig, (ax,) = _fig(6, 0.6 + 0.4 * max(len(names), 2))
    y = np.arange(len(names))[::-1]
    ax.barh(y, values, color="#4c72b0")
    ax.set_yticks(y, names)
    ax.set_ylabel("knob")
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
    ax.set_ylabel("workload")
    ax.set_xlabel("B / A")
    ax.set_title(title, fontsize=10)
    return fig


def fit_plot(x: Sequence[float], y: Sequence[float], slope: float, intercept: float,
             r2: float, xlabel: str, ylabel: str, title: str) -> Figure:
    fig, (ax,) = _fig(8, 3.6)
    ax.plot(x, y, "o", label="measured")
    xs = np.linspace(min(x), max(x), 20)
    ax.plot(xs, slope * xs + intercept, "-", label=f"fit: r²={r2:.3f}, intercept={intercept:.1f}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    legend_outside(ax)
    return fig
