"""A job whose one rank reads the job's bytes gets read code (issue #27).

Expected / was: ``single-io-stream`` for reads shows ``lone_reader.c/.f90/.py``: every rank
reads its own part with ``MPI_File_read_at_all`` (HDF5: H5Dread with a collective transfer
property; PnetCDF: a ``get ... _all`` call), its code change says "reads" / was: the write
snippets (``lone_writer.*``: MPI_File_write_at_all, MPI_MODE_WRONLY) with a sentence telling
the reader to swap read for write.

The log is a real run (darshan35/rank0read-mpich.darshan: progs/posix_habits.c rank0read
under MPICH and Darshan 3.5.0, 4 ranks, rank 0 reads a 1 GiB input alone).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose, to_dict
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
LOG = Path(__file__).parent / "darshan35" / "rank0read-mpich.darshan"
WRITE_CALLS = re.compile(r"write_at|Write_at|MODE_WRONLY|MODE_CREATE|H5Dwrite|put_vara|"
                         r"h5dwrite|\bwrite\(fd")


def _lone_finding():
    rep = diagnose(build_model([load_darshan_log(LOG)]), Thresholds())
    (f,) = [f for f in rep.findings if f.rule.id == "single-io-stream"]
    return rep, f


def test_lone_reader_gets_read_snippets() -> None:
    """expected: lone_reader.{c,f90,py}, read calls only / was: lone_writer.* (writes)."""
    _, f = _lone_finding()
    assert f.hit.data["verb"] == "read"
    snippets = {a.name: a.content for a in f.fix.artifacts if a.kind.startswith("snippet-")}
    assert set(snippets) == {"lone_reader.c", "lone_reader.f90", "lone_reader.py"}
    c = snippets["lone_reader.c"]
    assert "MPI_File_read_at_all(" in c and "MPI_MODE_RDONLY" in c
    assert "H5Dread(" in c and "H5FD_MPIO_COLLECTIVE" in c and "ncmpi_get_vara" in c
    assert "MPI_File_read_at_all(" in snippets["lone_reader.f90"]
    assert "Read_at_all(" in snippets["lone_reader.py"]
    for name, text in snippets.items():
        code = "\n".join(ln for ln in text.splitlines() if "was:" not in ln)
        assert not WRITE_CALLS.search(code), (name, WRITE_CALLS.search(code))


def test_lone_reader_change_is_a_read_and_the_text_says_reads() -> None:
    """expected: the code change (JSON too) is "every rank reads its own part", direction
    read; no sentence asking to swap write for read / was: "writes", direction write."""
    rep, f = _lone_finding()
    (change,) = [c for c in f.fix.code if c.layer == "mpiio"]
    assert change.change == "every rank reads its own part" and change.direction == "read"
    assert change.calls == ("MPI_File_read_at_all",)
    assert "reads its own part" in f.fix.text and "MPI_File_read_at_all" in f.fix.text
    assert "snippets show writes" not in f.fix.text and "write_at_all" not in f.fix.text
    (doc,) = [d for d in to_dict(rep)["findings"] if d["rule_id"] == "single-io-stream"]
    assert [c["direction"] for c in doc["fix"]["code_changes"]] == ["read"]
