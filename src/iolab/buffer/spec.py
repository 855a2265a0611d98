"""The ``IOLAB_BUFFER`` syntax, checked before a run so that a typo is one clear line.

``ENTRY[,ENTRY...]`` with ``ENTRY = PATTERN[:KEY[=VALUE]...]``; PATTERN is an fnmatch glob
on the path given to open/fopen, or ``%stdout`` / ``%stderr`` (empty: ``*``). Keys:
``size=N[K|M|G]`` (512 B to 1 GiB), ``count=N`` (1-64), ``prefetch=auto|N`` (auto, the
default: read ahead 2 buffers only on file systems where every read is a round trip (FUSE,
NFS, Lustre, GPFS, SMB, 9p, BeeGFS, CephFS...), pass reads through on local ones where the
kernel reads ahead; N: 0-63, at most count-1, on every file system), ``verbose[=FILE]``.
An empty value is one entry ``*`` with the defaults.

The library (interpose/buffer/config.c) parses the same grammar; a test runs both over one
table of good and bad values so they cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from iolab.errors import UsageError

DEFAULT_SIZE = 4 << 20
DEFAULT_COUNT = 4
DEFAULT_PREFETCH = 2  # depth of prefetch=auto where it reads ahead
DEFAULT_PREFETCH_AUTO = True
MAX_COUNT = 64

_SIZE = re.compile(r"^(\d+)([KMGkmg]?)[Bb]?$")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class Rule:
    """One entry: which files, and the buffers they get."""

    pattern: str
    size: int = DEFAULT_SIZE
    count: int = DEFAULT_COUNT
    prefetch: int = DEFAULT_PREFETCH
    prefetch_auto: bool = DEFAULT_PREFETCH_AUTO  # read ahead only on round-trip file systems

    @property
    def loss_bound_bytes(self) -> int:
        """Most bytes a ``kill -9`` can lose for one file: every buffer full."""
        return self.size * self.count


def parse_size(text: str) -> int:
    """``64M`` -> 67108864; raises ValueError on anything else."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(text)
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def _int(text: str, lo: int, hi: int, what: str) -> int:
    if not re.fullmatch(r"[+-]?\d+", text) or not lo <= int(text) <= hi:
        raise UsageError(f"IOLAB_BUFFER: {what}={text}: expected {lo} to {hi}")
    return int(text)


def _entry(text: str) -> tuple[Rule, str | None]:
    pattern, *keys = text.split(":")
    pattern = pattern or "*"
    if pattern.startswith("%") and pattern not in ("%stdout", "%stderr"):
        raise UsageError(f"IOLAB_BUFFER: '{pattern}': only %stdout and %stderr are special")
    size, count, prefetch, verbose = DEFAULT_SIZE, DEFAULT_COUNT, DEFAULT_PREFETCH, None
    auto = DEFAULT_PREFETCH_AUTO
    for kv in (k for k in keys if k):
        key, eq, val = kv.partition("=")
        if key == "verbose":
            verbose = val
        elif not eq:
            raise UsageError(f"IOLAB_BUFFER: '{key}' needs a value (e.g. size=64M)")
        elif key == "size":
            try:
                size = parse_size(val)
            except ValueError:
                size = -1
            if not 512 <= size <= 1 << 30:
                raise UsageError(f"IOLAB_BUFFER: size={val}: expected 512 to 1G, e.g. size=64M")
        elif key == "count":
            count = _int(val, 1, MAX_COUNT, "count")
        elif key == "prefetch" and val == "auto":
            prefetch, auto = DEFAULT_PREFETCH, True
        elif key == "prefetch":
            try:
                prefetch, auto = _int(val, 0, MAX_COUNT - 1, "prefetch"), False
            except UsageError:
                raise UsageError(
                    f"IOLAB_BUFFER: prefetch={val}: expected auto or 0 to {MAX_COUNT - 1}"
                ) from None
        else:
            raise UsageError(
                f"IOLAB_BUFFER: unknown key '{key}' (size, count, prefetch, verbose)"
            )
    if prefetch >= count and prefetch > 0:
        prefetch = count - 1  # the window holds the buffer being read plus the prefetched
    return Rule(pattern, size, count, prefetch, auto), verbose


def parse(spec: str) -> list[Rule]:
    """The rules of an IOLAB_BUFFER value; raises UsageError (one line) when it is bad."""
    entries = [e for e in spec.split(",") if e]
    if not entries:
        return [Rule("*")]
    return [_entry(e)[0] for e in entries]


def with_verbose(spec: str, target: str) -> str:
    """spec with ``verbose=target`` added last (the library keeps the last one it reads)."""
    if "," in target or ":" in target:
        raise UsageError(f"the statistics file name '{target}' may not contain ',' or ':'")
    entries = [e for e in spec.split(",") if e] or ["*"]
    entries[-1] += f":verbose={target}"
    return ",".join(entries)
