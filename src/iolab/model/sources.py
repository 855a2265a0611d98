"""One entry point for every job source: a Darshan log or an iolab profile.

Darshan logs start with their binary header (``3.xx``); iolab profiles are JSON lines
(``*.iolab`` job files, ``*.iolabp`` parts, or a folder of parts). Both become a RawJob.
"""

from __future__ import annotations

import os
from pathlib import Path

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
        return to_raw_job(read(p))
    from iolab.model.darshan import load_darshan_log

    return load_darshan_log(p)
