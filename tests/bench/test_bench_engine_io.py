"""Reading what the launched engine prints: progress lines, the JSON document among launcher
noise, the engine's own one-line message."""

from __future__ import annotations

import io
import json

import pytest

from iolab.bench.engine import (
    EngineOutcome,
    PhaseBytes,
    Progress,
    ProgressView,
    parse_document,
    parse_progress,
)

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
        "iolab bench: default:fpp: repetition 1, write done (1/2)",
        "iolab bench: default:fpp: repetition 3, read pass 2 done (2/2)"]


def test_progress_lines_held_in_the_quiet_period_are_not_lost() -> None:
    """Expected: once a run is long enough to show progress, the log starts at the first
    phase; was: the phases done within the quiet period were never printed."""
    out = io.StringIO()
    view = ProgressView("c", stream=out, quiet_s=3600)
    view.update(Progress(0, "write", 0, 1, 4))
    view.quiet_s = 0  # the run has now lasted long enough
    view.update(Progress(0, "read", 0, 2, 4))
    assert out.getvalue().splitlines() == ["iolab bench: c: repetition 1, write done (1/4)",
                                           "iolab bench: c: repetition 1, read pass 1 done (2/4)"]


def test_progress_bytes_lines() -> None:
    p = parse_progress("progress-bytes 0 write 0 1048576/4194304 0.500")
    assert p == PhaseBytes(0, "write", 0, 1 << 20, 4 << 20, 0.5)
    assert isinstance(p, PhaseBytes)
    assert p.rate_bytes_per_s == 2 * (1 << 20) and p.left_s == pytest.approx(1.5)
    for bad in ("progress-bytes 0 write 0 1/4", "progress-bytes 0 write 0 1-4 0.5",
                "progress-bytes x write 0 1/4 0.5", "progress-bytes 0 write 0 1/4 soon"):
        assert parse_progress(bad) is None


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_within_a_phase_from_the_first_phase() -> None:
    """Off a terminal: quiet for quiet_s, then the held phase lines, then in-phase lines
    (bytes of total, rate, time left) at most every every_s."""
    out, clock = io.StringIO(), FakeClock()
    view = ProgressView("c", stream=out, quiet_s=5, every_s=5, tty=False, clock=clock)
    mib = 1 << 20
    clock.now = 2
    view.update(PhaseBytes(0, "write", 0, 16 * mib, 64 * mib, 2.0))
    assert out.getvalue() == ""  # quiet period: nothing yet
    clock.now = 3
    view.update(Progress(0, "write", 0, 1, 2))
    clock.now = 6
    view.update(PhaseBytes(0, "read", 0, 16 * mib, 64 * mib, 2.0))
    clock.now = 7  # within every_s of the last line: none
    view.update(PhaseBytes(0, "read", 0, 20 * mib, 64 * mib, 3.0))
    clock.now = 11
    view.update(PhaseBytes(0, "read", 0, 48 * mib, 64 * mib, 6.0))
    view.close()
    assert out.getvalue().splitlines() == [
        "iolab bench: c: repetition 1, write done (1/2)",
        "iolab bench: c: repetition 1, read pass 1: 16.0 MiB of 64.0 MiB (25%), 8.0 MiB/s, "
        "about 6 s left",
        "iolab bench: c: repetition 1, read pass 1: 48.0 MiB of 64.0 MiB (75%), 8.0 MiB/s, "
        "about 2 s left"]


def test_terminal_bar_follows_the_phase_bytes() -> None:
    """On a terminal: a rich bar per phase, its total the phase's bytes."""
    view = ProgressView("c", stream=io.StringIO(), tty=True)
    assert view._bar is not None
    view.update(PhaseBytes(0, "write", 0, 1000, 4000, 0.5))
    task = view._bar.tasks[0]
    assert (task.completed, task.total) == (1000, 4000)
    assert "repetition 1, write" in task.description
    view.update(Progress(0, "write", 0, 1, 2))
    assert view._bar.tasks[0].completed == 4000
    assert view._bar.tasks[0].fields["phases"] == "phase 1/2"
    view.update(PhaseBytes(0, "read", 0, 500, 4000, 0.5))  # a new phase starts from its own
    task = view._bar.tasks[0]
    assert (task.completed, task.total) == (500, 4000)
    # the engine's rate and time left: 500 bytes in 0.5 s, 3500 bytes to go
    assert task.fields["rate"] == "0.0 MiB/s" and task.fields["left"] == "4 s left"
    view.close()
    quiet = ProgressView("c", stream=io.StringIO(), tty=True, quiet_s=float("inf"))
    assert quiet._bar is None  # -q: no bar either
