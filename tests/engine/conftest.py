"""Fixtures for the engine's integration tests (helpers in engine_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import Engine, get_engine, mount_fs, umount_fs


@pytest.fixture(scope="session")
def engine() -> Engine:
    e = get_engine("default")
    if e is None:
        pytest.skip("iolab-bench is not built (run ./setup) or mpirun is missing")
    return e


@pytest.fixture(scope="session")
def mpich_engine() -> Engine:
    e = get_engine("mpich")
    if e is None:
        pytest.skip("iolab-bench-mpich is not built (needs mpicc.mpich; ./setup builds it)")
    return e


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    d = tmp_path / "scratch"
    d.mkdir()
    return d


@pytest.fixture
def small_fs(tmp_path: Path):
    """A 1 MiB tmpfs (ENOSPC after 1 MiB); skipped with the reason when it cannot be made."""
    where = tmp_path / "small"
    why = mount_fs(where, "tmpfs", "size=1m")
    if why:
        pytest.skip(why)
    yield where
    umount_fs(where)


@pytest.fixture
def mount_factory(tmp_path: Path):
    """mount_factory(fstype, options) -> mounted directory (unmounted at teardown)."""
    done: list[Path] = []

    def make(fstype: str, options: str) -> Path:
        where = tmp_path / f"mnt{len(done)}"
        why = mount_fs(where, fstype, options)
        if why:
            pytest.skip(why)
        done.append(where)
        return where

    yield make
    for w in done:
        umount_fs(w)
