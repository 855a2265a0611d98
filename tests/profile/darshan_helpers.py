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


# Counters that legitimately differ between two runs of a program, or between iolab and
# Darshan 3.5, with the reason (assert_all_agree compares every other integer counter).
_RANK = "which rank was fastest or slowest changes from run to run"
_SIZES = ("timing: the size of the slowest access and the bytes of the fastest and slowest "
          "rank (exact only when every access and every rank move the same bytes)")
_MODULES = ("POSIX", "MPIIO", "STDIO", "H5D", "PNETCDF_VAR")


def timing_differ(sizes: bool) -> dict[str, str]:
    """Which rank was fastest/slowest, and with sizes, the counters that timing picks when
    accesses or ranks differ in size."""
    out = {f"{m}_{c}": _RANK for m in _MODULES for c in ("FASTEST_RANK", "SLOWEST_RANK")}
    if sizes:
        out |= {f"{m}_{c}": _SIZES for m in _MODULES
                for c in ("FASTEST_RANK_BYTES", "SLOWEST_RANK_BYTES", "MAX_READ_TIME_SIZE",
                          "MAX_WRITE_TIME_SIZE")}
    return out


# Darshan 3.5 wraps __fxstat/__xstat only: glibc >= 2.33 exports fstat/stat as real
# functions, so their calls (OMPIO's fstat of its file, libgfortran's) are not seen; the tests
# check that Darshan's count is at most iolab's.
_KNOWN = {
    "POSIX_MMAPS": "-1 in Darshan: its mmap counting is off unless configured",
    "POSIX_STATS": "Darshan 3.5 misses fstat/stat on glibc >= 2.33",
}
MPIIO_DIFFER = timing_differ(sizes=False)
POSIX_DIFFER = {**timing_differ(sizes=False), **_KNOWN}
# Only the rank that creates a shared file opens it with a mode (ROMIO: rank 0 alone, then
# every rank without O_CREAT); Darshan's reduction keeps the mode of whichever rank its
# MPI_Reduce meets last (0 in the MPICH logs), iolab the one that was given.
SHARED_POSIX_DIFFER = {**POSIX_DIFFER,
                       "POSIX_MODE": "reduced over ranks, the creating rank's mode or another's"}
# Programs whose accesses, or ranks, differ in size (HDF5 and PnetCDF: rank 0 writes the
# library's metadata too).
VARIED_DIFFER = {**timing_differ(sizes=True), **_KNOWN, **SHARED_POSIX_DIFFER}


# The MPI libraries the kept logs were made with (tests/profile/darshan/README.md): what an
# MPI library does below MPI-IO (its POSIX calls, its own files) changes between versions.
LOG_MPI_VERSION = {"openmpi": "4.1.4", "mpich": "4.0.2"}


def mpi_version_differs(mpi: str) -> str | None:
    """Why the kept logs of mpi cannot be compared here (another version), or None."""
    cmd = {"openmpi": ["mpirun.openmpi", "--version"], "mpich": ["mpichversion"]}[mpi]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return None  # not installed: the test's own build step says so
    words = out.split("\n", 1)[0].split()
    version = words[-1] if words else "?"
    if version != LOG_MPI_VERSION[mpi]:
        return (f"the kept Darshan logs were made with {mpi} {LOG_MPI_VERSION[mpi]}, this "
                f"machine has {version}: what it does below MPI-IO may differ")
    return None


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


# The 4 most common values of a record (value counter, then count counter, of slot i).
_COMMON = {(p, w): [(f"{p}_{w}{i}_{w}", f"{p}_{w}{i}_COUNT") for i in range(1, 5)]
           for p in ("POSIX", "MPIIO") for w in ("ACCESS", "STRIDE")}


def assert_common_values_no_worse(ours: RawRecord, theirs: dict[str, Any],
                                  slots: list[tuple[str, str]]) -> None:
    """A shared record's 4 most common values (rank -1): iolab adds each value's counts up
    over every rank; Darshan's reduction folds the ranks' top-4 lists pair by pair and can
    only lose counts. So: iolab's list in Darshan's order (count, then value, descending), and
    each (value, count) of Darshan's either in iolab's with at least that count or beaten
    by all four of iolab's; equal wherever Darshan lost nothing."""
    mine = [(ours.counters.get(v, 0), ours.counters.get(c, 0)) for v, c in slots]
    dars = [(int(theirs[v]), int(theirs[c])) for v, c in slots]
    assert mine == sorted(mine, key=lambda vc: (-vc[1], -vc[0])), (ours.path, mine)
    have = dict(mine)
    for v, n in dars:
        if v:
            assert have.get(v, -1) >= n or min(c for _, c in mine) >= n, (
                f"{ours.path}: (iolab, darshan) {mine} {dars}")


def assert_all_agree(ours: RawRecord, theirs: dict[str, Any], differ: dict[str, str]) -> None:
    """Every integer counter of Darshan's record equal in iolab's, except those named in
    differ (counter -> why it legitimately differs) and, for a shared record, the common
    values Darshan's reduction lost counts of (assert_common_values_no_worse). A counter
    iolab lacks is a difference."""
    merged: set[str] = set()
    if ours.rank == -1:
        for slots in _COMMON.values():
            if slots[0][0] in theirs:
                assert_common_values_no_worse(ours, theirs, slots)
                merged |= {n for pair in slots for n in pair}
    names = [k for k in theirs if k not in ("id", "rank") and k not in differ
             and k not in merged]
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
