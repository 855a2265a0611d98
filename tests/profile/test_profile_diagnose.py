"""An iolab profile feeds `iolab diagnose` like a Darshan log: the same program, traced by
iolab and by Darshan 3.5, gives the same findings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_profile_darshan import LOGS
from trace_helpers import profile

diag = pytest.importorskip("iolab.diagnose.report")
config = pytest.importorskip("iolab.diagnose.config")
job_mod = pytest.importorskip("iolab.model.job")
darshan_loader = pytest.importorskip("iolab.sources.darshan")


# io-bound also needs a run of at least ~1 s: this program takes 0.9-1.2 s here, either way.
# Severity comes from each finding's cost in seconds (INFO under 1 s), so it is timing
# dependent too: the two traces are compared on the rules that fire.
TIMING_DEPENDENT = {"io-bound"}


def _findings(raw: object) -> list[str]:
    rep = diag.diagnose(job_mod.build_model([raw]), config.Thresholds())
    return sorted(
        f.rule.id + (f"/{f.hit.direction}" if f.hit.direction else "")
        for f in rep.findings if f.rule.id not in TIMING_DEPENDENT
    )


def test_same_findings_as_darshan(prog: Callable[[str], Path], tmp_path: Path) -> None:
    _, ours = profile(
        [str(prog("posix_write")), str(tmp_path / "p64.dat"), "1000000", "64"], tmp_path / "p"
    )
    theirs = darshan_loader.load_darshan_log(LOGS / "posix_write_1M_x_64B.darshan")
    assert _findings(ours) == _findings(theirs)
    assert "small-requests/write" in _findings(ours)


def test_two_commands(prog: Callable[[str], Path], tmp_path: Path) -> None:
    """`iolab profile -- ./app` then `iolab diagnose <profile>`: the whole user story."""
    import os
    import subprocess
    import sys

    from trace_helpers import LIBDIR

    env = {**os.environ, "IOLAB_LIBDIR": str(LIBDIR)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "iolab",
            "profile",
            "-o",
            str(tmp_path),
            "--",
            str(prog("posix_write")),
            str(tmp_path / "w.dat"),
            "20000",
            "64",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout == ""
    (job,) = tmp_path.glob("*.iolab")
    assert str(job) in run.stderr
    diag_run = subprocess.run(
        [sys.executable, "-m", "iolab", "diagnose", str(job)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert diag_run.returncode == 0, diag_run.stderr
    assert "small-requests" in diag_run.stdout and "iolab-profile 1" in diag_run.stdout
