"""Quantities as people read and write them, the same in every verb: sizes in (the engine's
grammar), bytes, seconds and moments out."""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

_BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))
# The engine's size grammar (engine/src/options.c, iolab_size_parse): a whole number, an
# optional K, M, G or T (binary: 1K = 1024), an optional 'i' after it, an optional 'B'.
_SIZE = re.compile(r"([0-9]+)(?:([kmgt])i?)?b?", re.I)
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_SHIFT = {"k": 10, "m": 20, "g": 30, "t": 40}
SIZE_HELP = "a whole number with an optional K, M, G or T suffix, below 2^64"
# Lustre lays files out in stripes of whole 64 KiB units (lfs setstripe -S, striping_unit).
LUSTRE_STRIPE_UNIT = 64 << 10


def fmt_bytes(n: Any) -> str:
    """Bytes in binary units, as Darshan counts them: 1536 -> '1.5 KiB'; an exact multiple
    keeps no decimals (sizes people typed: 1048576 -> '1 MiB'); '-' when not a number
    (a missing value in a results table)."""
    if not isinstance(n, numbers.Real) or isinstance(n, bool) or math.isnan(n):
        return "-"
    v = float(n)
    for unit, scale in _BYTE_UNITS:
        if abs(v) >= scale:
            q = v / scale
            return f"{q:.0f} {unit}" if q == int(q) else f"{q:.1f} {unit}"
    return f"{v:.0f} B"


def fmt_seconds(s: float | None) -> str:
    """A duration: 0.0042 -> '4.2 ms', 3 -> '3.0 s', 754 -> '12.6 min', 9000 -> '2.5 h',
    0.00003 -> '30 µs'; '-' when there is none."""
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


def fmt_time(when: Any) -> str:
    """A moment as iolab shows and stores it everywhere: ISO 8601 to the second with its
    zone, in UTC (``2026-11-27T15:51:42+00:00``). Takes a ``datetime`` (a naive one is
    taken as UTC), Unix seconds, or a stored ISO string (older databases wrote ``...Z``);
    '-' when there is nothing, and an unreadable string as it is (never lost)."""
    from datetime import datetime, timezone

    if when is None or when == "":
        return "-"
    if isinstance(when, datetime):
        moment = when
    elif isinstance(when, numbers.Real) and not isinstance(when, bool):
        moment = datetime.fromtimestamp(float(when), timezone.utc)
    else:
        text = str(when).strip()
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00")
                                            if text.endswith("Z") else text)
        except ValueError:
            return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


def now_time() -> str:
    """Now, in :func:`fmt_time`'s form: the value every store writes."""
    from datetime import datetime, timezone

    return fmt_time(datetime.now(timezone.utc))


def parse_size(text: str) -> int:
    """Bytes of a size as the engine reads it: '64k', '64KiB', '4M', '1g', '4096' (surrounding
    blanks ignored). ValueError when it is not one (:data:`SIZE_HELP`)."""
    m = _SIZE.fullmatch(str(text).strip())
    if not m:
        raise ValueError(f"{text!r}: not a size ({SIZE_HELP})")
    v = int(m.group(1)) << _SHIFT.get((m.group(2) or "").lower(), 0)
    if v >= 1 << 64:
        raise ValueError(f"{text!r}: not a size ({SIZE_HELP})")
    return v


def parse_number(text: str) -> float | None:
    """'64k' -> 65536 (a size, :func:`parse_size`), '2' -> 2, '1.5' -> 1.5; None when not a
    number (a mode name)."""
    try:
        return parse_size(text)
    except ValueError:
        pass
    t = str(text).strip()
    return float(t) if _DECIMAL.fullmatch(t) else None
