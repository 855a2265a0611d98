"""Every job source, in one place: a Darshan log (:mod:`iolab.sources.darshan`) or an iolab
profile (:mod:`iolab.sources.profile`) becomes one :class:`iolab.model.raw.RawJob` (record
tables and a trace table), the only thing the model reads.

Darshan logs start with their binary header (``3.xx``); iolab profiles are JSON lines
(``*.iolab`` job files, ``*.iolabp`` parts, or a folder of parts).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from iolab.model.raw import RawJob

# The readers (numpy, the Darshan library's bindings) are imported by load_source, not here:
# importing a submodule (profile_format, dutil) runs this file first, and `iolab profile`
# (which only merges its parts' text) would otherwise start with numpy's ~0.2 s of CPU.

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


class PendingSource(Protocol):
    """A source being read: ``result()`` its RawJob, ``cancel()`` when it is not wanted."""

    def result(self) -> RawJob: ...

    def cancel(self) -> None: ...


class _ProfileSource:
    """An iolab profile: read by result() (its reader is quick, and needs no process)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def result(self) -> RawJob:
        # deferred: the profile reader, only for a profile
        from iolab.sources.profile import load as load_profile

        return load_profile(self.path)

    def cancel(self) -> None:
        pass


def start_source(path: str | os.PathLike[str]) -> PendingSource:
    """:func:`load_source` begun (its checks made, UsageError): a Darshan log's forked reader
    runs while the caller imports what it needs next (numpy, the model, the rules)."""
    p = Path(path)
    if p.exists() and is_profile(p):
        return _ProfileSource(p)
    # deferred: the Darshan reader (cffi, libdarshan-util), only for a log
    from iolab.sources.darshan import start_darshan_read

    return start_darshan_read(p)


def load_source(path: str | os.PathLike[str], *, isolate: bool = True,
                limit_s: float | None = None) -> RawJob:
    """A RawJob from a Darshan log or an iolab profile (UsageError on bad input);
    ``isolate=False``: a Darshan log read in this process, without the forked child that
    survives libdarshan-util crashing; ``limit_s``: that child stopped when it has not answered
    in that many seconds (iolab.sources.darshan.load_darshan_log)."""
    # The readers (numpy, cffi) only when a file is read, not for profile_format; each only
    # for its kind of file (the profile reader: ~15 ms of a Darshan log's start-up).
    p = Path(path)
    if p.exists() and is_profile(p):
        # deferred: the profile reader, only for a profile
        from iolab.sources.profile import load as load_profile

        return load_profile(p)
    # deferred: the Darshan reader (cffi, libdarshan-util), only for a log
    from iolab.sources.darshan import load_darshan_log

    return load_darshan_log(p, isolate=isolate, limit_s=limit_s)
