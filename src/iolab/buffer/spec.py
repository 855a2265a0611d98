"""The ``IOLAB_BUFFER`` value, checked before a run so that a typo is one clear line.

``ENTRY[,ENTRY...]`` with ``ENTRY = PATTERN[:KEY[=VALUE]...]`` (docs/buffer.md). The grammar
lives once, in the library (interpose/buffer/config.c): :func:`check` asks the library itself,
by starting ``true`` with it preloaded and the value set, and reads the one line it prints
for a bad value. Python never parses the keys, so the two cannot drift apart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from iolab.errors import UsageError

_LIBRARY_SAYS = "iolab-buffer: IOLAB_BUFFER: "


def check(spec: str, library: Path) -> None:
    """UsageError (the library's own words) when ``spec`` is not a value it accepts."""
    true = shutil.which("true") or "/bin/true"
    env = {**os.environ, "LD_PRELOAD": str(library), "IOLAB_BUFFER": spec}
    try:
        out = subprocess.run([true], env=env, capture_output=True, text=True, timeout=30,
                             check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"cannot run {true} to check IOLAB_BUFFER: {exc}") from None
    for line in out.stderr.splitlines():
        if line.startswith(_LIBRARY_SAYS):
            reason = line[len(_LIBRARY_SAYS):].split("; buffering is off")[0]
            raise UsageError(f"IOLAB_BUFFER {spec!r}: {reason}")


def with_verbose(spec: str, target: str) -> str:
    """spec with ``verbose=target`` added last (the library keeps the last one it reads)."""
    if "," in target or ":" in target:
        raise UsageError(f"the statistics file name '{target}' may not contain ',' or ':'")
    entries = [e for e in spec.split(",") if e] or ["*"]
    entries[-1] += f":verbose={target}"
    return ",".join(entries)
