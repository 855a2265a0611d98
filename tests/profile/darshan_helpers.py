"""Helpers of the Darshan agreement tests (imported by name, as trace_helpers): read a real
Darshan 3.5 log's records (through pydarshan, or through darshan-parser's text output) and
compare them with an iolab profile's, counter by counter.

pydarshan is imported inside the functions, so a module that only parses darshan-parser's
output does not need it; the tests ``pytest.importorskip("darshan")`` first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from iolab.model.raw import RawRecord

BINS = [
    "0_100",
    "100_1K",
    "1K_10K",
    "10K_100K",
    "100K_1M",
    "1M_4M",
    "4M_10M",
    "10M_100M",
    "100M_1G",
    "1G_PLUS",
]
POSIX_COMPARED = (
    [
        "OPENS",
        "READS",
        "WRITES",
        "SEEKS",
        "FSYNCS",
        "FDSYNCS",
        "DUPS",
        "MODE",  # MMAPS: -1 (off) in Darshan
        "BYTES_READ",
        "BYTES_WRITTEN",
        "MAX_BYTE_READ",
        "MAX_BYTE_WRITTEN",
        "CONSEC_READS",
        "CONSEC_WRITES",
        "SEQ_READS",
        "SEQ_WRITES",
        "RW_SWITCHES",
        "MEM_NOT_ALIGNED",
        "FILE_NOT_ALIGNED",
        "FILE_ALIGNMENT",
    ]
    + [f"SIZE_{d}_{b}" for d in ("READ", "WRITE") for b in BINS]
    + [
        f"{w}{i}_{k}"
        for w in ("ACCESS", "STRIDE")
        for i in range(1, 5)
        for k in (w if w == "ACCESS" else "STRIDE", "COUNT")
    ]
)
STDIO_COMPARED = [
    "OPENS",
    "FDOPENS",
    "READS",
    "WRITES",
    "SEEKS",
    "FLUSHES",
    "BYTES_READ",
    "BYTES_WRITTEN",
    "MAX_BYTE_READ",
    "MAX_BYTE_WRITTEN",
]
MPIIO_COMPARED = (
    [
        "INDEP_OPENS",
        "COLL_OPENS",
        "INDEP_READS",
        "INDEP_WRITES",
        "COLL_READS",
        "COLL_WRITES",
        "SPLIT_READS",
        "SPLIT_WRITES",
        "NB_READS",
        "NB_WRITES",
        "SYNCS",
        "VIEWS",
        "MODE",
        "BYTES_READ",
        "BYTES_WRITTEN",
        "RW_SWITCHES",
    ]
    + [f"SIZE_{d}_AGG_{b}" for d in ("READ", "WRITE") for b in BINS]
    + [f"ACCESS{i}_{k}" for i in range(1, 5) for k in ("ACCESS", "COUNT")]
)

# Darshan module names of the records compared; their counters carry these prefixes.
PREFIX = {
    "POSIX": "POSIX",
    "STDIO": "STDIO",
    "MPI-IO": "MPIIO",
    "H5F": "H5F",
    "H5D": "H5D",
    "PNETCDF_FILE": "PNETCDF_FILE",
    "PNETCDF_VAR": "PNETCDF_VAR",
}


def darshan_records(
    log: Path, modules: tuple[str, ...] = ("POSIX", "STDIO", "MPI-IO")
) -> list[tuple[str, int, str, dict[str, Any]]]:
    """(module, rank, path, integer counters) of every record of those modules in a Darshan
    log, read by pydarshan."""
    import darshan

    out = []
    with darshan.DarshanReport(str(log), read_all=True) as rep:
        for mod in modules:
            if mod not in rep.records:
                continue
            coll = rep.records[mod]
            ids = [int(rec["id"]) for rec in coll]  # exact: the data frame holds them as floats
            rows = coll.to_df()["counters"].to_dict("records")
            for rid, row in zip(ids, rows, strict=True):
                path = rep.name_records.get(rid, "")
                out.append((mod, int(row["rank"]), path, {k: int(v) for k, v in row.items()}))
    return out


def assert_agree(ours: RawRecord, theirs: dict[str, Any], names: list[str], prefix: str) -> None:
    """Every counter prefix_name of names equal in iolab's record and Darshan's."""
    diff = {
        n: (ours.counters.get(f"{prefix}_{n}", 0), theirs[f"{prefix}_{n}"])
        for n in names
        if ours.counters.get(f"{prefix}_{n}", 0) != theirs[f"{prefix}_{n}"]
    }
    assert diff == {}, f"{ours.path}: counter: (iolab, darshan) {diff}"


def assert_all_agree(ours: RawRecord, theirs: dict[str, Any], differ: dict[str, str]) -> None:
    """Every integer counter of Darshan's record equal in iolab's, except those named in
    differ (counter -> why it legitimately differs). A counter iolab lacks is a difference."""
    names = [k for k in theirs if k not in ("id", "rank") and k not in differ]
    diff = {
        n: (ours.counters.get(n), theirs[n]) for n in names if ours.counters.get(n) != theirs[n]
    }
    assert diff == {}, f"{ours.path}: counter: (iolab, darshan) {diff}"


# ---- darshan-parser ----


def darshan_parser() -> str | None:
    """darshan-parser from $IOLAB_DARSHAN_PARSER, else PATH; None when neither has it."""
    env = os.environ.get("IOLAB_DARSHAN_PARSER")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("darshan-parser")


PARSER_MISSING = (
    "darshan-parser is not installed (set IOLAB_DARSHAN_PARSER to a Darshan 3.5 darshan-parser)"
)


def parse_darshan_parser(text: str) -> dict[tuple[str, int, int, str], dict[str, float]]:
    """darshan-parser's text output, as {(module, rank, record id, file name): {counter:
    value}}. Its counter lines are tab-separated: module, rank, record id, counter, value,
    file name, mount point, file system type (comments start with '#')."""
    out: dict[tuple[str, int, int, str], dict[str, float]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) < 6:
            continue
        module, rank, rid, counter, value, name = fields[:6]
        try:
            number: float = int(value)
        except ValueError:  # floating-point counters, printed with 6 decimals
            number = float(value)
        out.setdefault((module, int(rank), int(rid), name), {})[counter] = number
    return out


def run_darshan_parser(parser: str, log: Path) -> dict[tuple[str, int, int, str], dict[str, float]]:
    """The records of log as darshan-parser prints them (every module it knows)."""
    run = subprocess.run([parser, str(log)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"darshan-parser {log}: {run.stderr.strip()}"
    return parse_darshan_parser(run.stdout)
