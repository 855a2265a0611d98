"""The engine's option table is read once a process per build of the binary: bench's parser
is built for every sweep point, tune workload and study case, and each build ran
``iolab-bench --list-options`` again (~0.1 s of an engine start each)."""

from __future__ import annotations

import os
from pathlib import Path

from iolab.bench import options
from iolab.errors import UsageError
from iolab.paths import engine_binary


def _counting_engine(tmp_path: Path) -> tuple[Path, Path]:
    """A script in the engine's place that notes each start, then runs the real engine."""
    real = engine_binary("default")  # as iolab finds it (UsageError: not built, ./setup)
    count = tmp_path / "starts"
    engine = tmp_path / "iolab-bench"
    engine.write_text(f'#!/bin/sh\necho started >> "{count}"\nexec "{real}" "$@"\n')
    engine.chmod(0o755)
    return engine, count


def _starts(count: Path) -> int:
    return len(count.read_text().splitlines()) if count.exists() else 0


def test_the_table_is_read_once_and_again_after_a_rebuild(tmp_path: Path) -> None:
    """Expected: one engine start for any number of reads of the same binary, one more when
    the binary changes, the same table each time / was: one start per read."""
    engine, count = _counting_engine(tmp_path)
    first = options.load_table(engine)
    again = [options.load_table(engine) for _ in range(5)]
    assert _starts(count) == 1
    assert all(t == first for t in again) and first
    again[0].clear()  # a caller's copy: changing it changes no later read
    assert options.load_table(engine) == first
    st = engine.stat()
    os.utime(engine, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # "rebuilt"
    assert options.load_table(engine) == first
    assert _starts(count) == 2


def test_a_missing_engine_is_still_one_line(tmp_path: Path) -> None:
    """Expected: a binary that is not there is a one-line UsageError on every read, never a
    cached table / was: the same."""
    for _ in range(2):
        try:
            options.load_table(tmp_path / "no-engine")
        except UsageError as exc:
            assert "\n" not in str(exc) and "--list-options" in str(exc)
        else:
            raise AssertionError("a missing engine gave a table")
