"""Quantities as people read them, the same in every verb's output."""

from __future__ import annotations

import numbers
import re
from typing import Any

_BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))
_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.I)


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


def parse_number(text: str) -> float | None:
    """'64k' -> 65536, '2' -> 2, '1.5' -> 1.5; None when not a number (a mode name)."""
    m = _NUMBER.match(str(text))
    if not m:
        return None
    v = float(m.group(1)) * _SUFFIX[m.group(2).lower()]
    return int(v) if v.is_integer() else v
