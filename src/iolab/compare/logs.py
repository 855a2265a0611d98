"""Two logs or profiles of one application: per-layer bytes and time, B against A."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.pages.fmt import human_bytes, human_seconds

if TYPE_CHECKING:
    from iolab.pages.prep_log import LayerRow

LAYER_HEADERS = ["layer", "bytes A", "bytes B", "time A", "time B", "time B/A",
                 "slowest-rank I/O A", "slowest-rank I/O B"]


def layer_diff(a: list[LayerRow], b: list[LayerRow]) -> list[tuple[str, float | None]]:
    """(layer, time B/A) for every layer either side has; None where A spent no time."""
    ta = {r.layer: r.time_total_s for r in a}
    tb = {r.layer: r.time_total_s for r in b}
    names = list(ta) + [n for n in tb if n not in ta]
    return [(n, tb.get(n, 0.0) / ta[n] if ta.get(n) else None) for n in names]


def layer_rows(a: list[LayerRow], b: list[LayerRow], io_a: float, io_b: float
               ) -> list[list[str]]:
    da, db = {r.layer: r for r in a}, {r.layer: r for r in b}
    out = []
    for name, ratio in layer_diff(a, b):
        ra, rb = da.get(name), db.get(name)
        out.append([name, human_bytes(ra.bytes_read + ra.bytes_written) if ra else "-",
                    human_bytes(rb.bytes_read + rb.bytes_written) if rb else "-",
                    human_seconds(ra.time_total_s) if ra else "-",
                    human_seconds(rb.time_total_s) if rb else "-",
                    "-" if ratio is None else f"{ratio:.2f}",
                    human_seconds(io_a), human_seconds(io_b)])
    return out
