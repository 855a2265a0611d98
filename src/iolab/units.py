"""Quantities as people read them, the same in every verb's output."""

from __future__ import annotations

import numbers
from typing import Any

_BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def fmt_bytes(n: Any) -> str:
    """Bytes in binary units, as Darshan counts them: 1536 -> '1.5 KiB'; an exact multiple
    keeps no decimals (sizes people typed: 1048576 -> '1 MiB'); '-' when not a number
    (a missing value in a results table)."""
    if not isinstance(n, numbers.Real) or isinstance(n, bool):
        return "-"
    v = float(n)
    for unit, scale in _BYTE_UNITS:
        if abs(v) >= scale:
            q = v / scale
            return f"{q:.0f} {unit}" if q == int(q) else f"{q:.1f} {unit}"
    return f"{v:.0f} B"
