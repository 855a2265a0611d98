"""Numbers for people: 1.2 GiB, 512.3 MiB/s, 3.0 s, 1,234 ops."""

from __future__ import annotations

import math

_BINARY = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def human_bytes(n: float | None) -> str:
    """1536 -> '1.5 KiB'; whole bytes below 1 KiB; '-' for None."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    v = float(n)
    for unit in _BINARY:
        if abs(v) < 1024 or unit == _BINARY[-1]:
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{v:.1f} PiB"  # not reached


def human_size(n: int) -> str:
    """An access or transfer size, exact when it is a whole power-of-two unit: 4 KiB, 1 MiB,
    else like :func:`human_bytes` (a size of 47008 B is '45.9 KiB')."""
    for shift, unit in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return human_bytes(n)


def human_rate(bytes_per_s: float | None) -> str:
    """Bandwidth in binary units per second: '512.3 MiB/s'."""
    if bytes_per_s is None:
        return "-"
    return human_bytes(bytes_per_s) + "/s"


def mib_s(bytes_per_s: float | None) -> str:
    """Bandwidth in MiB/s with one decimal (tables whose column says the unit)."""
    return "-" if bytes_per_s is None else f"{bytes_per_s / (1 << 20):,.1f}"


def human_seconds(s: float | None) -> str:
    """0.0042 -> '4.2 ms', 3 -> '3.0 s', 754 -> '12.6 min', 9000 -> '2.5 h'."""
    if s is None:
        return "-"
    if s <= 0:
        return "0 s"
    if s < 1e-3:
        return f"{1e6 * s:.0f} µs"
    if s < 1:
        return f"{1000 * s:.1f} ms"
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def human_count(n: float | None) -> str:
    """1234567 -> '1,234,567'."""
    return "-" if n is None else f"{int(round(n)):,}"


def human_ratio(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.2f}x"


def human_pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"
