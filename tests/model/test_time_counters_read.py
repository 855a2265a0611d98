"""Every time counter is read somewhere: a ``*_TIME`` counter of iolab's counter list
(counters/iolab_counters.def) or of the Darshan modules the sources load that no code of
src/iolab names is time the model silently leaves out.

Expected: each such counter is named in src/iolab (literally, or by an f-string whose
placeholders stand for a module prefix or a direction), or listed below with the reason it
is not needed / was: PNETCDF_FILE_F_WAIT_TIME was read nowhere, so non-blocking PnetCDF I/O
showed half its time at the library layer.

A static check over the source (its string literals and f-strings), not a run: it fails the
day a counter is added to the list and nobody reads it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from iolab import counters

SRC = Path(__file__).resolve().parents[2] / "src" / "iolab"

# What an f-string's placeholder may stand for: a module's counter prefix or a direction /
# kind of time. "WAIT" is deliberately not in it: f"{p}_F_{k}_TIME" over (read, write, meta)
# is exactly the loop that missed the wait time.
_PLACEHOLDER = "(?:POSIX|STDIO|MPIIO|H5F|H5D|PNETCDF_FILE|PNETCDF_VAR|READ|WRITE|META)"

# Counters no code needs to name, with the reason.
DELIBERATELY_UNUSED: dict[str, str] = {
    "POSIX_F_VARIANCE_RANK_BYTES": "not a time (bytes variance); the report reads ranks' bytes",
}


def _time_counter_names() -> set[str]:
    names = {c.name for mc in counters.load().values() for c in mc.floats
             if c.name.endswith("_TIME")}
    try:
        from iolab.sources import dutil

        b = dutil.binding()
    except ImportError:  # pydarshan absent: iolab's own list still checked
        return names
    for module in dutil.STRUCTS:
        names |= {n for n in dutil.counter_names(b, module, floats=True) if n.endswith("_TIME")}
    return names


def _patterns() -> list[re.Pattern[str]]:
    """Every string constant of src/iolab as an exact pattern; every f-string as a pattern
    whose placeholders match ``_PLACEHOLDER``."""
    out: list[re.Pattern[str]] = []
    for py in sorted(SRC.rglob("*.py")):
        tree = ast.parse(py.read_text(), str(py))
        inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
                 for v in n.values}
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                parts = [re.escape(v.value) if isinstance(v, ast.Constant) else _PLACEHOLDER
                         for v in node.values]
                out.append(re.compile("".join(parts)))
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in inner and "_TIME" in node.value):
                out.append(re.compile(re.escape(node.value)))
    return out


def test_every_time_counter_is_read_somewhere() -> None:
    names = _time_counter_names()
    assert "PNETCDF_FILE_F_WAIT_TIME" in names  # the list is the one the sources read
    pats = _patterns()
    unread = sorted(n for n in names if n not in DELIBERATELY_UNUSED
                    and not any(p.fullmatch(n) for p in pats))
    assert unread == [], (
        f"time counters read nowhere in src/iolab: {unread}; read them where their layer's "
        "time is summed (src/iolab/model/metrics.py) or list them in DELIBERATELY_UNUSED "
        "with the reason")


@pytest.mark.parametrize("name", sorted(DELIBERATELY_UNUSED))
def test_deliberately_unused_counters_exist(name: str) -> None:
    """A stale exception would hide nothing: each listed name is a counter of the lists."""
    assert name in _time_counter_names() | {c.name for mc in counters.load().values()
                                            for c in mc.floats}
