"""The grid of a sweep: parameters are ``iolab bench`` options, values as the user wrote
them (``np=1,2,4``, ``transfer=64k,1m``, ``posix.mode=buffered,direct``, ``collective=on,off``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache

from iolab.bench.parser import bench_parser
from iolab.errors import UsageError

# Friendlier names for common parameters -> the bench option they set.
ALIASES = {"ranks": "np", "mode": "posix.mode", "transfer-size": "transfer", "xfer": "transfer",
           "queue-depth": "posix.queue-depth", "aio": "posix.aio", "t": "transfer",
           "b": "block"}
SWITCH_VALUES = {"on": True, "off": False, "yes": True, "no": False, "true": True,
                 "false": False}
# Options a point may not set: the sweep owns them.
RESERVED = {"json", "csv", "db", "label", "dry-run", "quiet", "q", "verbose", "v", "reps", "i",
            "help", "h"}


@lru_cache(maxsize=1)
def bench_options() -> dict[str, bool]:
    """iolab bench's long options -> does it take a value (False: a switch)."""
    bench = bench_parser()
    bench.parse_known_args([])  # the engine's options are added on the first parse
    out = {}
    for action in bench._actions:
        for opt in action.option_strings:
            out[opt.lstrip("-")] = action.nargs != 0
    return out


def parse_param(spec: str) -> tuple[str, list[str]]:
    """'np=1,2,4' -> ('np', ['1', '2', '4']), checked against iolab bench's options."""
    name, sep, values = spec.partition("=")
    name = ALIASES.get(name.strip().lstrip("-"), name.strip().lstrip("-"))
    vals = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not name or not vals:
        raise UsageError(f"--param {spec!r}: write NAME=V1,V2,... (e.g. --param np=1,2,4)")
    opts = bench_options()
    if name in RESERVED or name not in opts:
        raise UsageError(f"--param {name}: not an iolab bench option a sweep can vary; see "
                         "'iolab bench --help' (e.g. np, transfer, block, posix.mode, "
                         "threads, layout, api, collective)")
    if not opts[name]:
        bad = [v for v in vals if v.lower() not in SWITCH_VALUES]
        if bad:
            raise UsageError(f"--param {name}: a switch takes on/off, not {', '.join(bad)}")
    if len(set(vals)) != len(vals):
        raise UsageError(f"--param {name}: a value is given twice")
    return name, vals


def points(grid: Sequence[tuple[str, Sequence[str]]]) -> list[dict[str, str]]:
    """Every combination, the first parameter varying slowest."""
    names = [n for n, _ in grid]
    return [dict(zip(names, combo)) for combo in itertools.product(*(v for _, v in grid))]


def point_args(params: dict[str, str]) -> list[str]:
    """The iolab bench options that set this point's values."""
    opts = bench_options()
    out: list[str] = []
    for name, value in params.items():
        flag = ("-" if len(name) == 1 else "--") + name
        if not opts.get(name, True):
            if SWITCH_VALUES[value.lower()]:
                out.append(flag)
        else:
            out.append(f"{flag}={value}")
    return out


def check_bench_args(bench_args: Sequence[str], grid: Sequence[tuple[str, Sequence[str]]]
                     ) -> None:
    """The fixed options neither set what the sweep varies nor what it owns."""
    varied = {n for n, _ in grid}
    for a in bench_args:
        if not a.startswith("-"):
            continue
        name = a.lstrip("-").split("=", 1)[0]
        name = ALIASES.get(name, name)
        if name in RESERVED:
            raise UsageError(f"'{a}' after '--': the sweep sets it itself (use the sweep's "
                             "own --reps, --db, --label)")
        if name in varied:
            raise UsageError(f"'{a}' after '--': {name} is a swept parameter")
