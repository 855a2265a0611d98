"""``iolab buffer -o FILE`` never writes its statistics over a file of the program's or the
user's: a file the wrapped command names (its output, its input), the file its stdout goes
to, or an existing file that is not an earlier run's statistics. Real programs (a compiled
writer of 64 kB, ``cat``), real files; checksums and folder listings before and after."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from buffer_helpers import pattern

from iolab.buffer.target import STATS_HEAD
from iolab.errors import UsageError

SIZE = 64 * 1024


@pytest.fixture(scope="module")
def buflib() -> Path:
    """The library ``iolab buffer`` itself finds (installed, IOLAB_LIBDIR or the build)."""
    from iolab.paths import interposer_library

    try:
        return interposer_library("buffer")
    except UsageError as exc:
        pytest.skip(str(exc))


def iolab_in(cwd: Path, *args: str | Path, stdout: int | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *map(str, args)], cwd=cwd,
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


def sums(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def refused(r: subprocess.CompletedProcess[str], says: str) -> None:
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iolab buffer: ") and says in lines[0], \
        r.stderr


def test_stats_never_replace_the_programs_output(buflib, cprog, tmp_path):
    """Expected: exit 2 before the program runs, its 64 kB output untouched / was: the
    program's 64 kB replaced by 754 bytes of statistics, exit 0."""
    writer = cprog("writer")
    (tmp_path / "out.dat").write_bytes(pattern(SIZE))  # an earlier run's output
    before = sums(tmp_path)
    for out_arg in ("out.dat", "./out.dat", str(tmp_path / "out.dat")):
        r = iolab_in(tmp_path, "buffer", "-o", out_arg, "--", writer, "out.dat", str(SIZE),
                     "512", "write", "close")
        refused(r, "the program's command line names this file (out.dat)")
        assert sums(tmp_path) == before  # nothing run, nothing created
    # the same with the output not yet there: the program would create it
    (tmp_path / "out.dat").unlink()
    r = iolab_in(tmp_path, "buffer", "-o", "out.dat", "--", writer, "out.dat", str(SIZE),
                 "512", "write", "close")
    refused(r, "names this file")
    assert not list(tmp_path.iterdir())


def test_stats_never_replace_the_programs_input(buflib, tmp_path):
    """Expected: exit 2, in.bin unchanged / was: ``-o in.bin -- cat in.bin`` overwrote the
    input with the statistics."""
    data = os.urandom(SIZE)
    (tmp_path / "in.bin").write_bytes(data)
    before = sums(tmp_path)
    for argv in (["cat", "in.bin"], ["cat", str(tmp_path / "in.bin")],
                 ["dd", "if=in.bin", "of=/dev/null"]):
        r = iolab_in(tmp_path, "buffer", "-o", "in.bin", "--", *argv)
        refused(r, "names this file")
        assert sums(tmp_path) == before


def test_stats_never_replace_the_programs_stdout_file(buflib, tmp_path):
    """Expected: exit 2 when the program's stdout already goes to the -o file / was: its
    output replaced by the statistics."""
    with open(tmp_path / "log.txt", "w") as f:
        r = iolab_in(tmp_path, "buffer", "-o", "log.txt", "--", "echo", "hello", stdout=f.fileno())
    refused(r, "the program's stdout already goes to this file")
    assert (tmp_path / "log.txt").read_text() == ""  # the shell's truncation, nothing more


def test_stats_never_replace_a_users_file(buflib, cprog, tmp_path):
    """Expected: an existing file that is not an earlier run's statistics is refused /
    was: silently replaced."""
    writer = cprog("writer")
    (tmp_path / "notes.txt").write_text("my notes\n")
    before = sums(tmp_path)
    r = iolab_in(tmp_path, "buffer", "-o", "notes.txt", "--", writer, "new.dat", str(SIZE),
                 "512", "write", "close")
    refused(r, "is not an iolab buffer statistics file")
    assert sums(tmp_path) == before  # the program did not run: no new.dat


def test_earlier_statistics_are_replaced(buflib, cprog, tmp_path):
    """The statistics file of an earlier run is iolab's: a second run replaces it, and the
    program's output is whole."""
    writer = cprog("writer")
    for _ in range(2):
        r = iolab_in(tmp_path, "buffer", "-o", "stats.txt", "--", writer, "out.dat",
                     str(SIZE), "512", "write", "close")
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "stats.txt").read_bytes().startswith(STATS_HEAD)
        assert (tmp_path / "out.dat").read_bytes() == pattern(SIZE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.dat", "stats.txt"]


def test_a_file_the_program_writes_unnamed_is_kept(buflib, tmp_path):
    """Expected: a program that writes the -o path without naming it keeps its bytes, and
    the statistics go to stderr / was: its file replaced by the statistics."""
    script = f"head -c {SIZE} /dev/urandom > \"$(printf 'out%s' .dat)\""
    r = iolab_in(tmp_path, "buffer", "-o", "out.dat", "--", "sh", "-c", script)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.dat").stat().st_size == SIZE
    assert "-o out.dat was written by the program during the run; kept it" in r.stderr
