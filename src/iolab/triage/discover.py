"""Which inputs are logs: folders in any layout (walked recursively, e.g. a centre's
year/month/day tree), manifest files (one path per line), Darshan logs and iolab profiles.

A log is named by what it is, not only by its name: a ``*.darshan`` file (even an empty or
cut one, so that it becomes a row with its reason), any file starting with Darshan's header,
an iolab profile (``*.iolab``, a folder of ``*.iolabp`` parts). Other files in a walked
folder are counted as skipped, never read. A missing path on the command line is bad input
(exit 2, nothing stored); a missing path in a manifest is a log that cannot be read (a row).
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from iolab.errors import UsageError

_DARSHAN_MAGIC = 6567223
_MANIFEST_SNIFF = 4096  # bytes read to tell a manifest (text) from a log (binary)


@dataclass
class Found:
    logs: list[Path] = field(default_factory=list)  # in a stable order, each once
    skipped: int = 0  # files in walked folders that are not logs


def _darshan_header(head: bytes) -> bool:
    if len(head) < 20 or not head.startswith(b"3."):
        return False
    return _DARSHAN_MAGIC in (struct.unpack_from("<Q", head, 8)[0],
                              struct.unpack_from(">Q", head, 8)[0])


def _head(path: Path, n: int = 24) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return b""


def is_profile_dir(path: Path) -> bool:
    return path.is_dir() and any(path.glob("*.iolabp"))


def looks_like_log(path: Path) -> bool:
    """A file a walked folder offers as a log: by name (``.darshan``, ``.iolab``) or by
    Darshan's header."""
    name = path.name.lower()
    if name.endswith((".darshan", ".iolab")):
        return True
    return _darshan_header(_head(path))


def _is_manifest(path: Path) -> bool:
    """A text file of paths: no Darshan header, not JSON (a profile), readable as UTF-8."""
    head = _head(path, _MANIFEST_SNIFF)
    if not head or _darshan_header(head) or head.lstrip().startswith(b"{"):
        return False
    if path.suffix.lower() in (".darshan", ".iolab", ".iolabp"):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in head


def _walk(folder: Path, found: Found) -> Iterator[Path]:
    """Logs under ``folder`` in name order; a folder of profile parts is one log."""
    for root, dirs, files in os.walk(folder, followlinks=False):
        here = Path(root)
        dirs.sort()
        keep = []
        for d in dirs:
            if is_profile_dir(here / d):
                yield here / d
            else:
                keep.append(d)
        dirs[:] = keep
        for name in sorted(files):
            p = here / name
            if p.suffix == ".iolabp":
                continue  # a part of a profile whose folder is read as one
            if looks_like_log(p):
                yield p
            else:
                found.skipped += 1


def _manifest(path: Path) -> Iterator[Path]:
    base = path.resolve().parent
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            entry = line.strip()
            if not entry or entry.startswith("#"):
                continue
            p = Path(entry).expanduser()
            yield p if p.is_absolute() else base / p


def discover(inputs: list[str]) -> Found:
    """Every log the inputs name, each once (by resolved path), in a stable order."""
    found = Found()
    seen: set[str] = set()

    def add(p: Path) -> None:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            found.logs.append(Path(os.path.abspath(p)))

    for raw in inputs:
        p = Path(raw).expanduser()
        if not p.exists():
            raise UsageError(f"{raw}: no such file or folder; give folders of logs, logs or "
                             "manifest files (one path per line)")
        if is_profile_dir(p):
            add(p)
        elif p.is_dir():
            for log in _walk(p, found):
                add(log)
        elif _is_manifest(p):
            for log in _manifest(p):
                if log.is_dir() and not is_profile_dir(log):
                    for inner in _walk(log, found):
                        add(inner)
                else:
                    add(log)
        else:
            add(p)
    return found


def content_hash(path: Path) -> str:
    """SHA-256 of the log's bytes (a folder of parts: of its parts' names and bytes); what
    makes a log "already read" whatever its name or place."""
    h = hashlib.sha256()
    files = sorted(path.glob("*.iolabp")) if path.is_dir() else [path]
    for f in files:
        if path.is_dir():
            h.update(f.name.encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def stat_key(path: Path) -> tuple[int, int]:
    """(size, mtime in ns) of a log (a folder of parts: of its newest part, total size):
    a log whose path, size and time are in the store is not even hashed again."""
    if path.is_dir():
        parts = [f.stat() for f in path.glob("*.iolabp")]
        return (sum(s.st_size for s in parts), max((s.st_mtime_ns for s in parts), default=0))
    st = path.stat()
    return st.st_size, st.st_mtime_ns
