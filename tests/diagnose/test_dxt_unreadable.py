"""A DXT section iolab cannot read is one note, never a refusal, a crash or a silent drop;
and the I/O-bound advice then does not say "record DXT".

Real logs: the corpus's mpi-io-test with DXT (format 3.21, 32 ranks) and darshan-generated's
posix_mixed_rw_random_reads_dxt (format 3.41), each copied here cut inside its DXT section;
and a log written by libdarshan-util with a DXT module version newer than it reads."""

from __future__ import annotations

import json
from pathlib import Path

import darshan_writer
import pytest
from corpus import GENERATED_DIR, GENERATED_MISSING, REAL_LOGS_DIR, REAL_MISSING
from darshan_writer import Dxt, Rec, write_log

from iolab.cli import main
from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
DXT_UNREADABLE = "DXT trace present but unreadable"
# the corpora where tests/corpus.py finds them (IOLAB_TEST_LOGS / IOLAB_TEST_GENERATED, else
# ../shared); without them these tests skip, saying so, as every corpus test does
MPI_IO_TEST = next((REAL_LOGS_DIR / "mpi_io_test_with_dxt").glob("*.darshan"), None)
GENERATED = GENERATED_DIR / "posix_mixed_rw_random_reads_dxt.darshan"
needs_generated = pytest.mark.skipif(not GENERATED.is_file(), reason=GENERATED_MISSING)


def _cut(src: Path, share: float, out: Path) -> Path:
    data = src.read_bytes()
    out.write_bytes(data[:int(len(data) * share)])
    return out


def _unreadable(notes: list[str]) -> list[str]:
    return [n for n in notes if n.startswith(DXT_UNREADABLE)]


@needs_generated
def test_cut_dxt_of_a_341_log_is_a_note_not_a_refusal(tmp_path: Path, capsys) -> None:
    """Expected: the log is diagnosed from its counters, one note says the DXT section is cut
    / was: exit 2, "the log is incomplete", for a cut in the trace alone."""
    log = _cut(GENERATED, 0.6, tmp_path / "cut.darshan")
    assert main(["diagnose", str(log)]) == 0
    text = capsys.readouterr().out
    assert text.count("note: " + DXT_UNREADABLE) == 1
    assert "DXT_POSIX: the log was cut short" in " ".join(text.split())
    assert main(["diagnose", "--json", str(log)]) == 0
    doc = json.loads(capsys.readouterr().out)
    notes = _unreadable(doc["job"]["notes"])
    assert len(notes) == 1 and "the trace is left out" in notes[0]
    assert doc["summary"]["timeline"] is None
    whole = diagnose(build_model([load_darshan_log(GENERATED)]), Thresholds())
    assert [f["rule_id"] for f in doc["findings"]] == [f.rule.id for f in whole.findings
                                                       if f.rule.id in {
                                                           g["rule_id"]
                                                           for g in doc["findings"]}]


@needs_generated
def test_cut_in_the_counters_is_still_refused(tmp_path: Path, capsys) -> None:
    log = _cut(GENERATED, 0.02, tmp_path / "head.darshan")
    assert main(["diagnose", str(log)]) == 2
    assert "truncated" in capsys.readouterr().err


@pytest.mark.skipif(MPI_IO_TEST is None, reason=REAL_MISSING)
def test_cut_dxt_of_a_real_321_log_is_one_note(tmp_path: Path) -> None:
    """Expected: both DXT sections unreadable: one note naming both, and the I/O-bound advice
    without "record DXT" / was: the trace dropped silently, "record Darshan's DXT" advised."""
    assert MPI_IO_TEST is not None
    raw = load_darshan_log(_cut(MPI_IO_TEST, 0.8, tmp_path / "cut80.darshan"))
    notes = _unreadable(raw.notes)
    assert len(notes) == 1 and "DXT_POSIX:" in notes[0] and "DXT_MPIIO:" in notes[0]
    assert raw.trace_table is None
    rep = diagnose(build_model([raw]), Thresholds())
    bound = next(f for f in rep.findings if f.rule.id == "io-bound")
    assert "Darshan's DXT" not in bound.fix.text and "iolab profile --trace" in bound.fix.text
    whole = diagnose(build_model([load_darshan_log(MPI_IO_TEST)]), Thresholds())
    assert "Darshan's DXT" in next(f for f in whole.findings
                                   if f.rule.id == "io-bound").fix.text


@pytest.mark.skipif(MPI_IO_TEST is None, reason=REAL_MISSING)
def test_dxt_read_before_the_cut_is_kept_and_marked_partial(tmp_path: Path) -> None:
    """Expected: DXT_POSIX whole, DXT_MPIIO cut: the POSIX trace kept, the trace partial,
    one note / was: the POSIX trace kept as if complete, nothing said."""
    assert MPI_IO_TEST is not None
    whole = load_darshan_log(MPI_IO_TEST)
    raw = load_darshan_log(_cut(MPI_IO_TEST, 0.95, tmp_path / "cut95.darshan"))
    notes = _unreadable(raw.notes)
    assert len(notes) == 1 and "DXT_MPIIO:" in notes[0] and "DXT_POSIX:" not in notes[0]
    assert raw.trace_table is not None and whole.trace_table is not None
    assert 0 < len(raw.trace_table.rank) < len(whole.trace_table.rank)
    model = build_model([raw])
    assert model.trace is not None and model.trace.partial_reasons


def test_newer_dxt_format_is_one_note(tmp_path: Path, monkeypatch) -> None:
    """A DXT_POSIX section in a format version this libdarshan-util does not read."""
    monkeypatch.setitem(darshan_writer.VERSIONS, "DXT_POSIX", 99)
    path = "/scratch/run/out.dat"
    log = write_log(tmp_path / "newer.darshan", nprocs=1, run_time_s=10.0, exe="./app",
                    records=[Rec("POSIX", path, 0, {
                        "POSIX_OPENS": 1, "POSIX_WRITES": 4, "POSIX_BYTES_WRITTEN": 4 << 20,
                        "POSIX_SIZE_WRITE_1M_4M": 4, "POSIX_F_WRITE_TIME": 8.0})],
                    dxt=[Dxt("DXT_POSIX", path, 0, "node1",
                             writes=[(i << 20, 1 << 20, 1.0 + 2 * i, 3.0 + 2 * i)
                                     for i in range(4)])])
    raw = load_darshan_log(log)
    notes = _unreadable(raw.notes)
    assert len(notes) == 1 and "version 99" in notes[0] and raw.trace_table is None


def test_impossible_segments_of_a_readable_dxt_section_are_one_note(tmp_path: Path) -> None:
    """Expected: libdarshan-util reads the section without failing, but its third write ends
    before it starts: the first two kept, the rest left out, one "DXT trace damaged" note, the
    trace partial / was: every segment kept, a negative duration in the rank busy times."""
    path = "/scratch/run/out.dat"
    writes = [(i << 20, 1 << 20, 1.0 + 2 * i, 2.0 + 2 * i) for i in range(6)]
    writes[2] = (2 << 20, 1 << 20, 6.0, 5.0)  # ends before it starts
    log = write_log(tmp_path / "impossible.darshan", nprocs=1, run_time_s=20.0, exe="./app",
                    records=[Rec("POSIX", path, 0, {
                        "POSIX_OPENS": 1, "POSIX_WRITES": 6, "POSIX_BYTES_WRITTEN": 6 << 20,
                        "POSIX_SIZE_WRITE_1M_4M": 6, "POSIX_F_WRITE_TIME": 6.0})],
                    dxt=[Dxt("DXT_POSIX", path, 0, "node1", writes=writes)])
    raw = load_darshan_log(log)
    assert not _unreadable(raw.notes)
    damaged = [n for n in raw.notes if n.startswith("DXT trace damaged")]
    assert damaged == ["DXT trace damaged: DXT_POSIX: 4 of the 6 segments read are damaged "
                       "(from segment 3 on: times, lengths, offsets or ranks no run can have) "
                       "and left out; the trace is partial, its figures come from the "
                       "segments before the damage"]
    t = raw.trace_table
    assert t is not None and t.truncated and list(t.start_s) == [1.0, 3.0]
    model = build_model([raw])
    assert model.trace is not None and model.trace.partial_reasons
