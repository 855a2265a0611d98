"""Nothing left behind by ``iolab tune`` and ``iolab sweep``: the temporary folders (a
command tune's ``iolab-tune-*`` hints folder, the bench verb's ``.iolab-bench-*`` test
folder) are gone on every way out -- a finished tune, bad input (exit 2), a failing
command, Ctrl-C sent for real to the process or to its whole process group. Real
processes, real engine runs (the null backend), folders listed before and after."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

NULL_BENCH = ["-a", "null", "--null.delay-us", "30000", "-t", "64k", "-b", "4m", "--np", "2",
              "-w"]


@pytest.fixture
def engine_ok() -> None:
    from iolab.paths import engine_binary

    engine_binary("default")  # raises (test error) when ./setup did not build it
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")


def _env(tmpdir: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmpdir), "PYTHONUNBUFFERED": "1"}


def _start(args: list[str], cwd: Path, tmpdir: Path, group: bool) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "iolab", *args], cwd=cwd, env=_env(tmpdir),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=group)


def _interrupt_when(proc: subprocess.Popen[str], seen: Path, pattern: str,
                    group: bool) -> tuple[int, str]:
    """SIGINT once a folder matching pattern exists in seen (the work has started)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(seen.glob(pattern)):
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.05)
    assert list(seen.glob(pattern)), f"no {pattern} appeared in {seen}"
    time.sleep(0.3)
    if group:  # Ctrl-C at a terminal: the whole foreground process group
        os.killpg(proc.pid, signal.SIGINT)
    else:  # kill -INT PID: the iolab process only
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def _settle(folder: Path, pattern: str) -> list[str]:
    """What matches pattern in folder once every child had a moment to finish."""
    for _ in range(20):
        left = sorted(p.name for p in folder.glob(pattern))
        if not left:
            return []
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("group", [False, True], ids=["process", "group"])
def test_interrupted_tune_leaves_no_bench_folder(tmp_path: Path, engine_ok: None,
                                                 group: bool) -> None:
    """Expected: Ctrl-C in a tune leaves the current folder as it was but for the database /
    was: an empty .iolab-bench-* folder left in it (the bench verb killed mid-cleanup)."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    proc = _start(["tune", "--db", "r.db", "--knob", "transfer=256k,1m", "--trials", "8",
                   "--", "iolab", "bench", *NULL_BENCH], work, tmp, group)
    rc, err = _interrupt_when(proc, work, ".iolab-bench-*", group)
    assert rc in (130, -signal.SIGINT), err
    assert _settle(work, ".iolab-bench-*") == []
    assert sorted(p.name for p in work.iterdir()) == ["r.db"]
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize("group", [False, True], ids=["process", "group"])
def test_interrupted_sweep_leaves_no_bench_folder(tmp_path: Path, engine_ok: None,
                                                  group: bool) -> None:
    """Expected: Ctrl-C in a sweep leaves no .iolab-bench-* / was: an empty one left."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    proc = _start(["sweep", "-p", "b=4m,8m", "--reps", "2", "--db", "r.db", "--",
                   *NULL_BENCH[:6], *NULL_BENCH[8:]], work, tmp, group)
    rc, err = _interrupt_when(proc, work, ".iolab-bench-*", group)
    assert rc == 130, err
    assert "continue with: iolab sweep --resume 1 --db r.db" in err  # was: without --db
    assert _settle(work, ".iolab-bench-*") == []
    assert sorted(p.name for p in work.iterdir()) == ["r.db"]


def _command_tune(*extra: str, command: list[str]) -> list[str]:
    return ["tune", "--db", "r.db", "--knob", "cb_buffer_size=1m,4m", "--trials", "3",
            "--confirm", "0", *extra, "--", *command]


@pytest.mark.parametrize("case,extra,command,code", [
    ("finished", (), ["true"], 0),
    ("bad --metric", ("--metric", "([0-9]"), ["true"], 2),
    ("--metric without a group", ("--metric", "[0-9]+"), ["true"], 2),
    ("failing command", (), ["false"], 1),
])
def test_command_tune_leaves_no_temporary_folder(tmp_path: Path, case: str,
                                                 extra: tuple[str, ...], command: list[str],
                                                 code: int) -> None:
    """Expected: no iolab-tune-* folder in TMPDIR after a command tune, whatever its end /
    was: one left by every command tune, exit 2 included (made before the checks)."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    r = subprocess.run([sys.executable, "-m", "iolab", *_command_tune(*extra, command=command)],
                       cwd=work, env=_env(tmp), capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == code, (case, r.stderr)
    assert list(tmp.iterdir()) == [], case
    assert not list(work.glob("iolab-tune-*")), case


def test_interrupted_command_tune_leaves_no_temporary_folder(tmp_path: Path) -> None:
    """Expected: Ctrl-C during a command's trial removes its hints folder / was: left."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    proc = _start(_command_tune(command=["sleep", "30"]), work, tmp, group=False)
    rc, err = _interrupt_when(proc, tmp, "iolab-tune-*", group=False)
    assert rc in (130, -signal.SIGINT), err
    assert "Continue with: iolab tune --resume 1 --db r.db" in err  # was: without --db
    assert _settle(tmp, "*") == []
