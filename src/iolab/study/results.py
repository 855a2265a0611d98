"""What a study found, prepared for the page and for compare: the MPI numbers and the
bandwidth-frequency fits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import median
from typing import Any

from iolab.pages.prep_bench import MIB, SweepPoint, phase_bandwidths
from iolab.study.fit import LineFit, linear_fit
from iolab.units import parse_number


def frequency_fits(points: Iterable[SweepPoint], op: str = "write"
                   ) -> dict[str, tuple[list[float], list[float], LineFit | None]]:
    """Per posix.mode: (frequencies in kHz, median MiB/s, the line through them)."""
    per: dict[str, tuple[list[float], list[float]]] = {}
    for pt in points:
        bws = phase_bandwidths(pt.doc, op)
        freq = parse_number(pt.params.get("launcher-args", "").rpartition("=")[2])
        if pt.status != "ok" or not bws or freq is None:
            continue
        xs, ys = per.setdefault(pt.params.get("posix.mode", "buffered"), ([], []))
        xs.append(float(freq))
        ys.append(median(bws) / MIB)
    return {mode: (xs, ys, linear_fit(xs, ys)) for mode, (xs, ys) in per.items()}


def mpi_rows(runs: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    if not runs:
        return []
    lat = [float(r["latency_us"]) for r in runs]
    bw = [float(r["bandwidth_bytes_per_s"]) / MIB for r in runs]
    return [["0-byte latency (µs, half round trip)", f"{median(lat):.2f}", f"{min(lat):.2f}",
             f"{max(lat):.2f}", str(len(runs))],
            [f"bandwidth (MiB/s, {runs[0].get('message_bytes', 0) // 1024} KiB messages)",
             f"{median(bw):,.1f}", f"{min(bw):,.1f}", f"{max(bw):,.1f}", str(len(runs))]]
