"""iolab's counter list, read from the one X-macro file the tracer is compiled from.

``counters/iolab_counters.def`` declares every counter once as
``IOLAB_<MODULE>_<I|F>(NAME, kind, unit, "doc")``; this module parses that file (from the
source tree, or from ``<prefix>/share/iolab`` where ``./setup`` installs it), so C and Python
cannot disagree on names or order. ``tests/profile/test_profile_counters.py`` checks it against the
table compiled into ``libiolab-trace.so``.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import UsageError

DEF_NAME = "iolab_counters.def"
# Module as spelled in the .def file -> module as pydarshan and the profile spell it.
MODULES: dict[str, str] = {
    "POSIX": "POSIX", "STDIO": "STDIO", "MPIIO": "MPI-IO", "H5F": "H5F", "H5D": "H5D",
    "PNETCDF_FILE": "PNETCDF_FILE", "PNETCDF_VAR": "PNETCDF_VAR",
}
FLOAT_KINDS = frozenset({"time", "timestamp", "variance"})

_LINE = re.compile(
    r'^IOLAB_(POSIX|STDIO|MPIIO|H5F|H5D|PNETCDF_FILE|PNETCDF_VAR)_(I|F)\((\w+),\s*(\w+),\s*(\w+),\s*"(.*)"\)\s*$'
)


@dataclass(frozen=True)
class Counter:
    """One counter: Darshan's name where Darshan has it."""

    module: str  # "POSIX", "STDIO", "MPI-IO", "H5F", "H5D"
    name: str
    is_float: bool
    kind: str  # count, bytes, offset, size, rank, flags, id, time, timestamp, variance
    unit: str
    doc: str


@dataclass(frozen=True)
class ModuleCounters:
    module: str
    ints: tuple[Counter, ...]
    floats: tuple[Counter, ...]

    def int_names(self) -> list[str]:
        return [c.name for c in self.ints]

    def float_names(self) -> list[str]:
        return [c.name for c in self.floats]


def def_file() -> Path:
    """Where the counter list is: $IOLAB_COUNTERS_DEF, the source tree, or the install."""
    env = os.environ.get("IOLAB_COUNTERS_DEF")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "counters" / DEF_NAME)
    candidates.append(Path(sys.prefix) / "share" / "iolab" / DEF_NAME)
    for c in candidates:
        if c.is_file():
            return c
    raise UsageError(
        f"the counter list {DEF_NAME} is not found; run ./setup (or set IOLAB_COUNTERS_DEF)"
    )


def parse(text: str) -> dict[str, ModuleCounters]:
    """Parse the .def text into one :class:`ModuleCounters` per module."""
    ints: dict[str, list[Counter]] = {m: [] for m in MODULES.values()}
    floats: dict[str, list[Counter]] = {m: [] for m in MODULES.values()}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        mod, typ, name, kind, unit, doc = m.groups()
        module = MODULES[mod]
        c = Counter(module, name, typ == "F", kind, unit, doc)
        (floats if c.is_float else ints)[module].append(c)
    return {m: ModuleCounters(m, tuple(ints[m]), tuple(floats[m])) for m in MODULES.values()}


@functools.lru_cache(maxsize=1)
def load() -> dict[str, ModuleCounters]:
    """The counters of every module (cached)."""
    return parse(def_file().read_text())


def by_name() -> dict[str, Counter]:
    """Every counter by name."""
    out: dict[str, Counter] = {}
    for mc in load().values():
        for c in (*mc.ints, *mc.floats):
            out[c.name] = c
    return out
