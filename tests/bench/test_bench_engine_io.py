"""Reading what the launched engine prints: progress lines, the JSON document among launcher
noise, the engine's own one-line message."""

from __future__ import annotations

import io
import json

from iolab.bench.engine import EngineOutcome, Progress, ProgressView, parse_document, parse_progress

OPEN_MPI_BANNER = """--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------"""


def test_progress_lines() -> None:
    assert parse_progress("progress 2 read 1 5/6") == Progress(2, "read", 1, 5, 6)
    for bad in ("progress 2 read 1", "progress x read 1 5/6", "progress 2 read 1 5-6",
                "Progress 2 read 1 5/6", ""):
        assert parse_progress(bad) is None


def test_document_found_after_launcher_output() -> None:
    doc = {"schema_version": 1, "status": "ok", "config": {"api": "null"}}
    text = json.dumps(doc, indent=2)
    assert parse_document(text) == doc
    assert parse_document("Warning: something from a rank\n{not json}\n" + text + "\n") == doc
    assert parse_document("") is None
    assert parse_document('{"no": "schema"}') is None
    assert parse_document(text[:-5]) is None  # cut short: no document, not a crash


def test_engine_message_skips_the_launcher_banner() -> None:
    lines = [*OPEN_MPI_BANNER.splitlines(), "iolab-bench: --block 0 must be above zero"]
    assert EngineOutcome(2, None, lines).engine_message() == \
        "iolab-bench: --block 0 must be above zero"
    hydra = ["[mpiexec@vm] Sending Ctrl-C to processes", "mpirun: could not find x"]
    assert EngineOutcome(1, None, hydra).engine_message() == "mpirun: could not find x"
    assert EngineOutcome(1, None, []).engine_message() is None


def test_plain_progress_lines_after_the_quiet_period() -> None:
    out = io.StringIO()
    view = ProgressView("default:fpp", stream=out, quiet_s=3600)
    view.update(Progress(0, "write", 0, 1, 2))
    assert out.getvalue() == ""  # a short run stays quiet
    view = ProgressView("default:fpp", stream=out, quiet_s=0)
    view.update(Progress(0, "write", 0, 1, 2))
    view.update(Progress(2, "read", 1, 2, 2))
    view.close()
    assert out.getvalue().splitlines() == [
        "iolab: default:fpp: repetition 1, write done (1/2)",
        "iolab: default:fpp: repetition 3, read pass 2 done (2/2)"]


def test_progress_lines_held_in_the_quiet_period_are_not_lost() -> None:
    """Expected: once a run is long enough to show progress, the log starts at the first
    phase; was: the phases done within the quiet period were never printed."""
    out = io.StringIO()
    view = ProgressView("c", stream=out, quiet_s=3600)
    view.update(Progress(0, "write", 0, 1, 4))
    view.quiet_s = 0  # the run has now lasted long enough
    view.update(Progress(0, "read", 0, 2, 4))
    assert out.getvalue().splitlines() == ["iolab: c: repetition 1, write done (1/4)",
                                           "iolab: c: repetition 1, read pass 1 done (2/4)"]
