"""One entry point for every job source: a Darshan log or an iolab profile.

Darshan logs start with their binary header (``3.xx``); iolab profiles are JSON lines
(``*.iolab`` job files, ``*.iolabp`` parts, or a folder of parts). Both become a RawJob.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from iolab.errors import UsageError
from iolab.model.raw import RawJob

PROFILE_SUFFIXES = (".iolab", ".iolabp")


def is_profile(path: Path) -> bool:
    if path.is_dir():
        return any(path.glob("*.iolabp"))
    if path.suffix in PROFILE_SUFFIXES:
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(1) == b"{"
    except OSError:
        return False


def profile_rank_hosts(headers: list[dict[str, Any]]) -> dict[int, str]:
    """Rank -> host from the profile's process headers (``host``, ``rank``, ``mpi``).

    Ranks are numbered as the profile loader numbers them: MPI ranks as they are, the
    processes of a non-MPI job by start time (then pid).
    """
    if any(h.get("mpi") for h in headers):
        return {int(h.get("rank", 0)): str(h["host"]) for h in headers if h.get("host")}
    order = sorted(headers, key=lambda h: (h.get("start_unix", 0.0), h.get("pid", 0)))
    return {r: str(h["host"]) for r, h in enumerate(order) if h.get("host")}


def load_source(path: str | os.PathLike[str]) -> RawJob:
    """A RawJob from a Darshan log or an iolab profile (UsageError on bad input)."""
    p = Path(path)
    if p.exists() and is_profile(p):
        try:
            from iolab.profile.format import read
            from iolab.profile.load import to_raw_job
        except ImportError:
            raise UsageError(f"{p}: looks like an iolab profile, but this installation has no "
                             "profile loader") from None
        data = read(p)
        raw = to_raw_job(data)
        if not raw.rank_hosts:
            raw.rank_hosts = profile_rank_hosts([part.header for part in data.parts])
        return raw
    from iolab.model.darshan import load_darshan_log

    return load_darshan_log(p)
