"""POSIX asynchronous I/O, counted as Darshan's POSIX module does: one read or write per
request whose result is collected (aio_return), at its offset, with its bytes.

Expected / was: aio_read/aio_write (and so Open MPI's MPI_File_iwrite*, which OMPIO submits
that way) were invisible in the POSIX layer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trace_helpers import profile, record


def test_aio_write_read_and_lio_listio(prog: Callable[[str], Path], tmp_path: Path) -> None:
    data = tmp_path / "a.dat"
    _, job = profile([str(prog("posix_aio")), str(data)], tmp_path / "p")
    assert data.stat().st_size == 14 * 1024
    c = record(job, "POSIX", "a.dat").counters
    got = {k: c[f"POSIX_{k}"] for k in ("WRITES", "READS", "BYTES_WRITTEN", "BYTES_READ",
                                         "MAX_BYTE_WRITTEN", "MAX_BYTE_READ",
                                         "SIZE_WRITE_1K_10K", "SIZE_WRITE_100_1K",
                                         "SIZE_READ_1K_10K", "RW_SWITCHES", "OPENS")}
    assert got == {"WRITES": 5, "READS": 1, "BYTES_WRITTEN": 3 * 4096 + 2 * 1024,
                   "BYTES_READ": 4096, "MAX_BYTE_WRITTEN": 14 * 1024 - 1,
                   "MAX_BYTE_READ": 8191, "SIZE_WRITE_1K_10K": 3, "SIZE_WRITE_100_1K": 2,
                   "SIZE_READ_1K_10K": 1, "RW_SWITCHES": 1, "OPENS": 1}
