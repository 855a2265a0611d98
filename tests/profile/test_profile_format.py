"""The profile format and the CLI's handling of bad input (one line, exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.errors import UsageError
from iolab.sources.profile import load


def _iolab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iolab", "profile", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _write(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


PROCESS = {
    "type": "process",
    "v": 1,
    "pid": 7,
    "host": "h",
    "rank": 0,
    "nprocs": 1,
    "mpi": False,
    "start_unix": 100.0,
    "end_unix": 102.0,
    "end": "exit",
    "partial": False,
    "cmdline": ["./a", "b c"],
    "left_out": {},
}


def test_counters_missing_from_an_older_profile_read_as_zero(tmp_path: Path) -> None:
    names = {
        "type": "names",
        "v": 1,
        "module": "POSIX",
        "i": ["POSIX_OPENS", "POSIX_WRITES"],
        "f": ["POSIX_F_OPEN_START_TIMESTAMP"],
    }
    rec = {
        "type": "record",
        "v": 1,
        "module": "POSIX",
        "idx": 0,
        "id": "00ff",
        "path": "/d/caf\u00c3\u00a9.dat",
        "i": [1, 5],
        "f": [0.5],
    }
    job = load(_write(tmp_path / "old.iolabp", [PROCESS, names, rec]))
    (r,) = job.rows()
    assert r.path == "/d/café.dat"  # bytes written one by one, decoded as UTF-8
    assert r.counters == {"POSIX_OPENS": 1, "POSIX_WRITES": 5} and r.record_id == 255
    assert r.fcounters["POSIX_F_OPEN_START_TIMESTAMP"] == 0.5
    assert (job.nprocs, job.run_time_s, job.exe) == (1, 2.0, "./a 'b c'")


def test_newer_version_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="newer"):
        load(_write(tmp_path / "new.iolabp", [{**PROCESS, "v": 99}]))


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "nothing to run"),
        (["show"], "usage: iolab profile show FILE"),
        (["show", "/nonexistent.iolab"], "no such profile"),
        (["--np", "0", "--", "true"], "--np must be at least 1"),
        (["-o", "/proc/iolab-cannot", "--", "true"], "output folder"),
    ],
)
def test_bad_input_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    run = _iolab(*args, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and message in run.stderr
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_program_not_found(tmp_path: Path) -> None:
    run = _iolab("--", str(tmp_path / "no-such-program"), cwd=tmp_path)
    assert run.returncode == 2 and "cannot start" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_garbage_file_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.iolab"
    bad.write_text("this is not json\n")
    run = _iolab("show", str(bad))
    assert run.returncode == 2 and "not an iolab profile" in run.stderr
