"""The pictures say what their numbers are: whole-number axes for ranks and trials, byte
sizes in KiB/MiB on a log2 axis, categories as places without a line, legends beside the
data, a lone point with its value. Each figure is drawn for real (Agg) and its axes read."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from report_jobs import MIB, traced_job

from iolab.diagnose.config import Thresholds
from iolab.diagnose.page import log_page
from iolab.diagnose.report import diagnose
from iolab.diagnose.rules import registry
from iolab.pages import plots, prep_bench, prep_log
from iolab.pages.build_bench import sweep_sections
from iolab.pages.page import Plot, draw_all, render
from iolab.pages.prep_bench import Series, SweepPoint
from iolab.pages.prep_log import RankBars
from iolab.results.tunes import Trial
from iolab.tune.page import tune_page


def _drawn(fig: Any) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return fig


def _ticks(ax: Any, axis: str = "x") -> tuple[list[float], list[str]]:
    lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    shown = [(float(t), lab.get_text()) for t, lab in zip(ticks, labels)
             if min(lo, hi) <= t <= max(lo, hi)]
    return [t for t, _ in shown], [s for _, s in shown]


def _doc(bws: list[float], op: str = "write") -> dict:
    return {"config": {"api": "posix", "transfer_bytes": MIB},
            "repetitions": [{"index": i, "phases": [{"op": op, "pass": 0, "bytes": 4 * MIB,
                                                     "time_s": 1.0, "bw_bytes_per_s": b * MIB}]}
                            for i, b in enumerate(bws)]}


def _sweep_figure(grid: list[tuple[str, list[str]]], pts: list[SweepPoint]) -> Any:
    sw = {"id": 1, "name": None, "grid": grid, "status": "done", "repetitions": 2,
          "bench_args": []}
    plot = next(b for s in sweep_sections(sw, pts) for b in s.blocks if isinstance(b, Plot))
    return _drawn(plot.draw())


def test_one_rank_is_one_bar_at_rank_0_not_a_span_of_fractions() -> None:
    """expected one tick '0' on the rank axis of a 1-rank job / was ticks -0.4 ... 0.4"""
    fig = _drawn(plots.rank_bars(RankBars(np.array([0]), np.array([0.5]), np.array([MIB]),
                                          0, 0.5)))
    for ax in fig.axes:
        ticks, labels = _ticks(ax)
        assert ticks == [0.0] and labels == ["0"], (ticks, labels)
    five = _drawn(plots.rank_bars(RankBars(np.arange(5), np.ones(5), np.ones(5), 0, 1.0)))
    assert _ticks(five.axes[0])[1] == ["0", "1", "2", "3", "4"]
    # the Gantt chart of a traced 1-rank job: rank 0 only on its axis
    model = traced_job(ranks=1, slow_rank=0)
    tl = prep_log.timeline(model)
    assert tl is not None
    gantt = _drawn(plots.timeline(tl, prep_log.rank_activity(model))).axes[1]
    assert _ticks(gantt, "y") == ([0.0], ["0"])


def test_a_transfer_size_sweep_is_labelled_in_kib_and_mib_on_a_log2_axis() -> None:
    """expected ticks '64 KiB' '256 KiB' '1 MiB' on a log2 axis / was '1.04858e+06' on a
    linear axis"""
    sizes = ["64k", "256k", "1m"]
    pts = [SweepPoint({"transfer": s}, "ok", _doc([100.0 + i, 110.0 + i]))
           for i, s in enumerate(sizes)]
    ax = _sweep_figure([("transfer", sizes)], pts).axes[0]
    assert ax.get_xscale() == "log"
    assert _ticks(ax)[1] == ["64 KiB", "256 KiB", "1 MiB"]
    # written as plain numbers, the engine's transfer_bytes still says they are sizes
    plain = [SweepPoint({"transfer": str(n)}, "ok", _doc([50.0, 60.0]))
             for n in (4096, 1048576)]
    assert prep_bench.x_kind("transfer", ["4096", "1048576"], plain) == "bytes"
    assert prep_bench.x_kind("np", ["1", "2", "4"], plain) == "integer"
    assert prep_bench.x_kind("posix.mode", ["buffered", "direct"]) == "category"


def test_tune_trials_are_numbered_as_the_terminal_numbers_them() -> None:
    """expected 'trial 1'... in the table and ticks 1, 2, 3 / was '0' in the HTML while the
    terminal printed 1, and ticks at 2.5"""
    trials = [Trial(i, "search", {"posix.mode": m}, "ok", v)
              for i, (m, v) in enumerate((("buffered", 100.0), ("sync", 40.0),
                                          ("buffered", 105.0)))]
    trials += [Trial(3 + i, "confirm", {"posix.mode": "buffered"}, "ok", 101.0)
               for i in range(2)]
    assert prep_bench.trial_labels(trials, confirm=1) == [
        "trial 1", "trial 2", "trial 3", "confirm 1", "confirm 2"]
    tune = {"id": 7, "status": "done", "seed": 0, "confirm": 1, "command": ["iolab", "tune"],
            "objective": {"unit": "MiB/s"}, "result": {}}
    page = tune_page(tune, trials)
    figs = draw_all(page)
    ticks, labels = _ticks(_drawn(figs["convergence"]).axes[0])
    assert labels == ["1", "2", "3"] and ticks == [1.0, 2.0, 3.0]
    html = render(page, figs)
    assert "<td>trial 1</td>" in html and "<td>confirm 2</td>" in html
    assert not re.search(r"<tr><td[^>]*>0</td>", html)


def test_categories_are_places_on_an_axis_never_joined_by_a_line() -> None:
    """expected markers at buffered / sync / direct with no line / was a line through them"""
    modes = ["buffered", "sync", "direct"]
    pts = [SweepPoint({"posix.mode": m}, "ok", _doc([b, b * 1.1]))
           for m, b in zip(modes, (900.0, 20.0, 300.0))]
    ax = _sweep_figure([("posix.mode", modes)], pts).axes[0]
    assert _ticks(ax)[1] == modes
    data_lines = [c.lines[0] for c in ax.containers]  # each errorbar's line of medians
    assert len(data_lines) == 1 and len(data_lines[0].get_xdata()) == 3
    assert all(ln.get_linestyle() == "None" and ln.get_marker() == "o" for ln in data_lines)


def _overlap(a: Any, b: Any) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _figures_with_legends() -> dict[str, Any]:
    model = traced_job(ranks=4, slow_rank=2)
    tl = prep_log.timeline(model)
    assert tl is not None
    two = [Series("posix.mode=buffered", [1, 2, 4], [100, 190, 380], [90, 180, 350],
                  [110, 200, 400]),
           Series("posix.mode=direct", [1, 2, 4], [380, 190, 100], [350, 180, 90],
                  [400, 200, 110])]
    rb = prep_log.rank_bars(model)
    assert rb is not None
    return {
        "series": plots.series(two, "np", "MiB/s", "write", x_kind="integer"),
        "ranks": plots.rank_bars(rb),
        "layers": plots.layer_bars(prep_log.layers(model)),
        "timeline": plots.timeline(tl, prep_log.rank_activity(model)),
        "sizes": plots.size_histograms(prep_log.access_sizes(model)),
        "convergence": plots.convergence([1.0, 3.0, 2.0], [1.0, 3.0, 3.0], "MiB/s"),
        "fit": plots.fit_plot([1.0, 2.0, 3.0], [2.0, 4.0, 6.0], 2.0, 0.0, 1.0, "GHz",
                              "MiB/s", "fit"),
    }


def test_legends_sit_beside_the_data_never_over_it() -> None:
    """expected every legend outside every axes of its figure / was drawn over bars and
    points (matplotlib's 'best' place inside the axes)"""
    for name, fig in _figures_with_legends().items():
        _drawn(fig)
        renderer = fig.canvas.get_renderer()
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
        assert legends, name
        for leg in legends:
            box = leg.get_window_extent(renderer)
            for ax in fig.axes:
                assert not _overlap(box, ax.get_window_extent(renderer)), name
            assert box.x1 <= fig.bbox.x1 + 1, f"{name}: legend cut off"


def test_a_single_point_is_a_marker_with_its_value_written() -> None:
    """expected one marker and its value '812.3 MiB/s' beside it / was a lone dot with no
    value (one repetition)"""
    fig = _drawn(plots.series([Series("write", [1], [812.3], [812.3], [812.3])],
                              "repetition", "MiB/s", "bandwidth", x_kind="integer"))
    ax = fig.axes[0]
    assert "812.3 MiB/s" in [t.get_text() for t in ax.texts]
    assert any(ln.get_marker() == "o" for ln in ax.get_lines())
    assert _ticks(ax) == ([1.0], ["1"])
    assert ax.get_ylim()[1] > 812.3 * 1.05  # room for the value above the point
    trial = _drawn(plots.convergence([42.0], [42.0], "MiB/s"))
    assert "42.0 MiB/s" in [t.get_text() for t in trial.axes[0].texts]


def test_sources_are_cited_by_title_not_by_file_name() -> None:
    """expected 'Parallel I/O seminar (KAUST)' on the page / was
    '004_51e52714ea7cb1c8.txt (KAUST, ...)', a file name a reader cannot look up"""
    internal = re.compile(r"\b\d{3}_[0-9a-f]{16}\.txt\b|\.py\b|src/iolab")
    docs = {s.doc for r in registry() for s in r.sources}
    assert docs and not [d for d in docs if internal.search(d)], docs
    rep = diagnose(traced_job(ranks=4, slow_rank=2), Thresholds())
    cited = {s.doc for f in rep.findings for s in f.rule.sources}
    assert cited, "the job should trigger a rule that cites a source"
    html = render(log_page([rep]))
    text = re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
    assert not internal.search(text), internal.search(text)
    for doc in cited:
        assert doc.replace("&", "&amp;") in text


@pytest.mark.parametrize("values, kind", [
    (["1", "2", "4", "8"], "integer"), (["0.5", "1.5"], "number"), (["1m", "4m"], "bytes"),
    (["romio", "ompio"], "category")])
def test_the_x_kind_of_a_swept_parameter(values: list[str], kind: str) -> None:
    assert prep_bench.x_kind("whatever", values) == kind
