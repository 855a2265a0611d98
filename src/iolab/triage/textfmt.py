"""Text helpers the triage report's text renderers share (numbers, cut lines, tables)."""

from __future__ import annotations

from typing import Any

_FIX_CHARS = 110  # the text table cuts a fix here; --json has it whole


def hours(x: float) -> str:
    return f"{x:,.2f}" if x >= 0.01 or x == 0 else f"{x:.2g}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def anonymized_note(report: dict[str, Any]) -> str:
    """The sentence the text report's header and the dashboard carry for an anonymised store
    ("" for readable names)."""
    a = report.get("anonymization")
    if not a:
        return ""
    return (f"anonymised store: user ids, job ids, programs and paths are keyed hashes "
            f"(key id {a['key_id']}); mount points readable")


def cut(text: str, n: int = _FIX_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return out
