"""Numbers for people on a page: 1.2 GiB, 512.3 MiB/s, 3.0 s, 1,234 ops. Bytes and seconds
are :mod:`iolab.units`' (the terminal's), so a page and a terminal say '1 MiB' alike."""

from __future__ import annotations

from iolab.units import fmt_bytes as human_bytes
from iolab.units import fmt_seconds as human_seconds

__all__ = ["human_bytes", "human_count", "human_pct", "human_rate", "human_seconds", "mib_s"]


def human_rate(bytes_per_s: float | None) -> str:
    """Bandwidth in binary units per second: '512.3 MiB/s'."""
    if bytes_per_s is None:
        return "-"
    return human_bytes(bytes_per_s) + "/s"


def mib_s(bytes_per_s: float | None) -> str:
    """Bandwidth in MiB/s with one decimal (tables whose column says the unit)."""
    return "-" if bytes_per_s is None else f"{bytes_per_s / (1 << 20):,.1f}"


def human_count(n: float | None) -> str:
    """1234567 -> '1,234,567'."""
    return "-" if n is None else f"{int(round(n)):,}"


def human_pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"
