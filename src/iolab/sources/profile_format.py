"""Reading iolab profile files (JSON lines; see docs/profile.md) into per-process data.

A *part* (``*.iolabp``) is what one traced process wrote at its end; a *job file*
(``*.iolab``) is a ``job`` line followed by the parts of every process, as ``iolab profile``
merges them. Each line carries its record type and version (``"type"``, ``"v"``); readers
upgrade old versions here and nowhere else, writers write only the newest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab.errors import UsageError

PART_SUFFIX = ".iolabp"
JOB_SUFFIX = ".iolab"
# Newest version of each line type this reader understands.
VERSIONS = {"job": 1, "process": 1, "names": 1, "record": 1, "segments": 1}


@dataclass
class PartRecord:
    module: str
    idx: int
    record_id: int
    path: str
    counters: dict[str, int]
    fcounters: dict[str, float]
    rank: int | None = None  # -1: reduced over all ranks at MPI_Finalize (else the process's)
    time_base: float | None = None  # Unix time its timestamps count from (else process start)
    merged: bool = False  # counted in rank 0's reduced record; listed for its trace segments


@dataclass
class Part:
    """One process's profile."""

    header: dict[str, Any]
    records: list[PartRecord] = field(default_factory=list)
    segments: list[list[Any]] = field(default_factory=list)
    source: str = ""


@dataclass
class ProfileData:
    job: dict[str, Any]
    parts: list[Part]
    sources: list[str]
    notes: list[str] = field(default_factory=list)


def decode_path(s: str) -> str:
    """Paths are written byte by byte (\\u00XX for non-ASCII bytes): rebuild the bytes."""
    if all(ord(ch) < 0x80 for ch in s):
        return s
    return bytes(ord(ch) & 0xFF for ch in s).decode("utf-8", "surrogateescape")


def _upgrade(obj: dict[str, Any], where: str) -> dict[str, Any]:
    typ = obj.get("type")
    v = obj.get("v")
    if typ not in VERSIONS or not isinstance(v, int):
        raise UsageError(f"{where}: not an iolab profile line (type={typ!r}, v={v!r})")
    if v > VERSIONS[str(typ)]:
        raise UsageError(
            f"{where}: {typ} version {v} is newer than this iolab reads; upgrade iolab"
        )
    # Version 1 is the first and current version of every line type: nothing to upgrade yet.
    return obj


def _read_lines(path: Path) -> list[dict[str, Any]]:
    try:
        raw = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    out = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{n}: not an iolab profile ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise UsageError(f"{path}:{n}: not an iolab profile line")
        out.append(_upgrade(obj, f"{path}:{n}"))
    return out


def _parse_parts(lines: list[dict[str, Any]], source: str) -> tuple[dict[str, Any], list[Part]]:
    job: dict[str, Any] = {}
    parts: list[Part] = []
    names: dict[str, tuple[list[str], list[str]]] = {}
    for obj in lines:
        typ = obj["type"]
        if typ == "job":
            job = obj
        elif typ == "process":
            parts.append(Part(header=obj, source=source))
            names = {}
        elif not parts:
            raise UsageError(f"{source}: a {typ} line comes before any process line")
        elif typ == "names":
            names[obj["module"]] = (list(obj["i"]), list(obj["f"]))
        elif typ == "record":
            mod = obj["module"]
            if mod not in names:
                raise UsageError(f"{source}: record of module {mod} before its names line")
            inames, fnames = names[mod]
            parts[-1].records.append(
                PartRecord(
                    module=mod,
                    idx=int(obj.get("idx", -1)),
                    record_id=int(obj["id"], 16),
                    path=decode_path(obj["path"]),
                    counters=dict(zip(inames, (int(x) for x in obj["i"]))),
                    fcounters=dict(zip(fnames, (float(x) for x in obj["f"]))),
                    rank=int(obj["rank"]) if "rank" in obj else None,
                    time_base=float(obj["time_base_unix"]) if "time_base_unix" in obj else None,
                    merged=bool(obj.get("merged", False)),
                )
            )
        elif typ == "segments":
            parts[-1].segments.extend(obj["ops"])
    return job, parts


def read(path: str | Path) -> ProfileData:
    """Read a job file, one part, or a folder of parts."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*" + PART_SUFFIX))
        if not files:
            raise UsageError(f"{p}: no iolab profile parts (*{PART_SUFFIX}) in this folder")
    elif p.is_file():
        files = [p]
    else:
        raise UsageError(f"{p}: no such profile file or folder")
    job: dict[str, Any] = {}
    parts: list[Part] = []
    for f in files:
        j, ps = _parse_parts(_read_lines(f), str(f))
        job = job or j
        parts.extend(ps)
    return ProfileData(job=job, parts=parts, sources=[str(f) for f in files])
