"""IO500's find over the run's ranks (iolab.io500.find_ranks): the ranks split the walk of a
real tree (an mdtest-like layout: a few folders on top, per-rank trees, one wide shared
folder, files with and without the name, size and age the criteria ask for), and the counts
they sum are the serial walk's, for every rank count; launched for real over mpirun."""

from __future__ import annotations

import fnmatch
import os
import shutil
import time
from pathlib import Path

import pytest
from tool_helpers import mpirun_env

from iolab import launch as launchers
from iolab.io500.find import Criteria
from iolab.io500.find_ranks import split_walk


def _tree(root: Path) -> int:
    """A tree like IO500's datadir; returns the mtime (ns) before its hard files."""
    (root / "ior-easy").mkdir(parents=True)
    for r in range(3):
        (root / "ior-easy" / f"ior_file_easy.0000000{r}").write_bytes(b"x" * 10)
    easy = root / "mdtest-easy" / "test-dir.0-0"
    for r in range(3):
        d = easy / f"mdtest_tree.{r}.0"
        d.mkdir(parents=True)
        for i in range(23):
            (d / f"file.mdtest.{r}.{i}").touch()
    deep = root / "deep" / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "x01y").write_bytes(b"y" * 3901)
    before = time.time_ns()
    time.sleep(0.02)
    hard = root / "mdtest-hard" / "test-dir.0-0" / "mdtest_tree.0"
    hard.mkdir(parents=True)
    for r in range(3):
        for i in range(40):
            (hard / f"file.mdtest.{r}.{i}").write_bytes(b"z" * (3901 if i % 3 else 7))
    return before


def _serial(root: Path, crit: Criteria) -> tuple[int, int]:
    found = checked = 0
    for folder, _, files in os.walk(root):
        for name in files:
            checked += 1
            st = os.stat(os.path.join(folder, name))
            if (fnmatch.fnmatchcase(name, crit.name)
                    and (crit.size is None or st.st_size == crit.size)
                    and (crit.newer_than_ns is None or st.st_mtime_ns > crit.newer_than_ns)):
                found += 1
    return found, checked


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 40])
def test_ranks_shares_add_up_to_the_serial_walk(tmp_path: Path, size: int) -> None:
    """expected every file checked by exactly one of `size` ranks, the found count the
    serial one / was one pool of processes on the launching node (no split over ranks)."""
    before = _tree(tmp_path / "data")
    for crit in (Criteria(), Criteria(size=3901, newer_than_ns=before)):
        shares = [split_walk(str(tmp_path / "data"), crit, r, size) for r in range(size)]
        assert (sum(s[0] for s in shares), sum(s[1] for s in shares)) == _serial(
            tmp_path / "data", crit)
        assert sum(s[2] for s in shares) == 0
        if size in (2, 3):  # the work is split: no rank checks everything
            assert all(0 < s[1] < sum(x[1] for x in shares) for s in shares), shares


def test_find_over_mpirun_ranks_equals_the_serial_walk(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """expected the walk launched over 3 ranks by mpirun, each rank reporting its share and
    the sum the serial count / was a local process pool."""
    from iolab.io500.find_ranks import rank_find

    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    before = _tree(tmp_path / "data")
    crit = Criteria(size=3901, newer_than_ns=before)
    for k, v in mpirun_env().items():  # Open MPI as root, as the launch tests run it
        if k.startswith("OMPI_ALLOW"):
            monkeypatch.setenv(k, v)
    spec = launchers.LaunchSpec(np=3, launcher="mpirun", extra=("--oversubscribe",))
    found, ranks = rank_find(str(tmp_path / "data"), crit, spec, str(tmp_path))
    assert (found.found, found.total) == _serial(tmp_path / "data", crit)
    assert sorted(int(r["rank"]) for r in ranks) == [0, 1, 2]
    assert all(r["size"] == 3 and r["checked"] > 0 for r in ranks), ranks
    assert found.runtime_s > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # the ranks' files gone
