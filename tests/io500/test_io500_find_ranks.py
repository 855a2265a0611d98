"""IO500's find over the run's ranks (iolab.io500.find_ranks): the ranks split the walk of a
real tree (an mdtest-like layout: a few folders on top, per-rank trees, one wide shared
folder, files with and without the name, size and age the criteria ask for), and the counts
they sum are the serial walk's, for every rank count; launched for real over mpirun."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from tool_helpers import mpirun_env, real_tool

from iolab import launch as launchers
from iolab.io500.find import Criteria, name_filter
from iolab.io500.find_ranks import WIDE_FOLDER_BYTES, split_walk


def _tree(root: Path) -> int:
    """A tree like IO500's datadir; returns the time (whole seconds, pfind's -newer) before its
    hard files."""
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
    before = time.time_ns() // 1_000_000_000
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
                    and (crit.newer_than_s is None
                         or st.st_ctime_ns // 1_000_000_000 >= crit.newer_than_s)):
                found += 1
    return found, checked


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 40])
def test_ranks_shares_add_up_to_the_serial_walk(tmp_path: Path, size: int) -> None:
    """expected every file checked by exactly one of `size` ranks, the found count the
    serial one / was one pool of processes on the launching node (no split over ranks)."""
    before = _tree(tmp_path / "data")
    for crit in (Criteria(), Criteria(size=3901, newer_than_s=before)):
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
    crit = Criteria(size=3901, newer_than_s=before)
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


def _io500_tree(root: Path, easy: int, hard: int) -> None:
    """IO500's datadir after its writes: the ior files, a tree a rank under mdtest-easy, one
    shared folder under mdtest-hard."""
    for folder, names in (("ior-easy", ["ior_file_easy.00000000", "ior_file_easy.00000001"]),
                          ("ior-hard", ["file"])):
        (root / folder).mkdir(parents=True)
        for name in names:
            (root / folder / name).touch()
    for r in range(2):
        tree = root / "mdtest-easy" / "test-dir.0-0" / f"mdtest_tree.{r}.0"
        tree.mkdir(parents=True)
        for i in range(easy):
            (tree / f"file.mdtest.{r}.{i}").touch()
    shared = root / "mdtest-hard" / "test-dir.0-0" / "mdtest_tree.0"
    shared.mkdir(parents=True)
    for i in range(hard):
        (shared / f"file.mdtest.{i % 2}.{i // 2}").write_bytes(b"z" * 3901)


def _links_count_subfolders(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    (probe / "sub").mkdir(parents=True)
    counts = os.stat(probe).st_nlink == 3 and os.stat(probe / "sub").st_nlink == 2
    shutil.rmtree(probe)
    return counts


def test_two_ranks_share_io500s_mdtest_trees(tmp_path: Path) -> None:
    """expected IO500's two mdtest-easy trees on different ranks, no rank checking more than
    60% of the files (pfind steals work) / was both trees on rank 0 (the top level's folders
    dealt round-robin: 802 of 903 files), the find at the slowest rank's pace."""
    if not _links_count_subfolders(tmp_path):
        pytest.skip("this file system's link counts do not count subfolders")
    _io500_tree(tmp_path / "data", easy=400, hard=100)
    shares = [split_walk(str(tmp_path / "data"), Criteria(), r, 2) for r in range(2)]
    total = sum(s[1] for s in shares)
    assert total == 2 + 1 + 2 * 400 + 100
    assert max(s[1] for s in shares) <= 0.6 * total, shares


def _one_wide_folder(root: Path) -> int:
    """IO500's datadir with one wide mdtest-hard folder (every rank's files, 5,000 of them,
    a third of them the size find-hard asks for) and two small ior folders; returns the ctime
    (whole seconds: pfind's -newer) of the timestampfile beside root, touched (as IO500 does)
    before the wide folder's files are written."""
    _io500_tree(root, easy=0, hard=0)
    stamp = root.parent / "timestampfile"
    stamp.touch()
    before = stamp.stat().st_ctime_ns // 1_000_000_000
    time.sleep(0.02)
    wide = root / "mdtest-hard" / "test-dir.0-0" / "mdtest_tree.0"
    for i in range(5000):
        (wide / f"file.mdtest.{i % 2}.{i // 2}").write_bytes(b"z" * (3901 if i % 3 else 7))
    if os.stat(wide).st_size < WIDE_FOLDER_BYTES:
        pytest.skip(f"this file system's directory of 5,000 entries is under "
                    f"{WIDE_FOLDER_BYTES} bytes")
    return before


@pytest.mark.parametrize("size", [2, 3])
def test_one_wide_folder_is_shared_by_every_rank(tmp_path: Path, size: int) -> None:
    """expected IO500's one wide mdtest-hard folder checked by every rank, a slice each,
    the counts the serial walk's / was the whole folder on one rank (5,000 files against the
    other ranks' 3 or none)."""
    before = _one_wide_folder(tmp_path / "data")
    for crit in (Criteria(), Criteria(size=3901, newer_than_s=before)):
        shares = [split_walk(str(tmp_path / "data"), crit, r, size) for r in range(size)]
        assert (sum(s[0] for s in shares), sum(s[1] for s in shares)) == _serial(
            tmp_path / "data", crit)
        assert sum(s[2] for s in shares) == 0
        total = sum(s[1] for s in shares)
        assert all(s[1] >= total // size - 3 for s in shares), shares


def test_one_wide_folder_is_shared_by_mpirun_ranks(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """expected both of 2 mpirun ranks to report about half of the wide folder's files
    checked in their result files, the sum the serial walk's / was one rank checking all
    5,000 and the other 3."""
    from iolab.io500.find_ranks import rank_find

    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    before = _one_wide_folder(tmp_path / "data")
    crit = Criteria(size=3901, newer_than_s=before)
    for k, v in mpirun_env().items():
        if k.startswith("OMPI_ALLOW"):
            monkeypatch.setenv(k, v)
    spec = launchers.LaunchSpec(np=2, launcher="mpirun", extra=("--oversubscribe",))
    found, ranks = rank_find(str(tmp_path / "data"), crit, spec, str(tmp_path))
    assert (found.found, found.total) == _serial(tmp_path / "data", crit)
    assert all(r["checked"] >= 2500 for r in ranks), ranks  # the wide folder halved


def test_wide_folder_counts_are_real_pfinds(tmp_path: Path) -> None:
    """expected the matches and files scanned of real pfind (IO500's, on 2 ranks) from the 2
    ranks sharing the wide folder / was not compared with pfind on a folder wide enough to
    share."""
    io500 = real_tool("IOLAB_IO500", "IO500 (IO500/io500; IOLAB_IO500: its io500 binary)")
    pfind = io500.parent / "build" / "pfind" / "pfind"
    if not os.access(pfind, os.X_OK):
        pytest.skip(f"no pfind built beside {io500} ({pfind}: run IO500's prepare.sh)")
    data = tmp_path / "data"
    before = _one_wide_folder(data)
    stamp = tmp_path / "timestampfile"
    for f in sorted((data / "mdtest-hard").rglob("file.mdtest.1.*"))[:300]:
        os.utime(f, (946684800, 946684800))  # mtime set back to 2000: its ctime still counts
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(pfind), str(data),
                        "-newer", str(stamp), "-size", "3901c", "-name", "*01*", "-C"],
                       env=mpirun_env(), capture_output=True, text=True, timeout=300)
    done = re.search(r"found: (\d+) \(scanned (\d+) files", p.stdout)
    assert p.returncode == 0 and done, p.stdout + p.stderr
    crit = Criteria(size=3901, newer_than_s=before)
    shares = [split_walk(str(data), crit, r, 2) for r in range(2)]
    assert (sum(s[0] for s in shares), sum(s[1] for s in shares)) == (int(done[1]),
                                                                       int(done[2]))
    assert int(done[1]) > 0 and all(s[1] >= 2500 for s in shares), shares


def test_newer_is_pfinds_ctime_in_whole_seconds(tmp_path: Path) -> None:
    """expected -newer as pfind reads it: a file counts unless its ctime, in whole seconds, is
    before the timestamp file's (the same second counts; a file whose mtime was set back still
    counts: utime changes the ctime to now) / was iolab's mtime in ns, strictly after: a file
    with an old mtime, or written in the stamp's second before it, was left out."""
    data = tmp_path / "data"
    data.mkdir()
    stamp = tmp_path / "timestampfile"
    stamp.touch()
    newer = os.lstat(stamp).st_ctime_ns // 1_000_000_000
    for i in range(4):
        (data / f"f01.{i}").write_bytes(b"z" * 3901)
    os.utime(data / "f01.0", (946684800, 946684800))
    assert os.lstat(data / "f01.0").st_mtime_ns < os.lstat(stamp).st_mtime_ns
    (found, checked, errors, _) = split_walk(str(data), Criteria(size=3901, newer_than_s=newer),
                                             0, 1)
    assert (found, checked, errors) == (4, 4, 0)
    # a stamp a second after the files: none of them counts
    later = Criteria(size=3901, newer_than_s=max(os.lstat(data / f"f01.{i}").st_ctime_ns
                                                 for i in range(4)) // 1_000_000_000 + 1)
    assert split_walk(str(data), later, 0, 1)[:2] == (0, 4)


def test_leaf_folders_are_read_by_name_only(tmp_path: Path) -> None:
    """expected each folder without subfolders (link count 2: the mdtest trees, the ior
    folders) read as a list of names, filtered in one pass / was an os.DirEntry and a type test
    for every file (pfind reads d_type; the name list is all a leaf folder needs)."""
    if not _links_count_subfolders(tmp_path):
        pytest.skip("this file system's link counts do not count subfolders")
    _io500_tree(tmp_path / "data", easy=30, hard=20)
    crit = Criteria(size=3901, newer_than_s=0)
    shares = [split_walk(str(tmp_path / "data"), crit, r, 2) for r in range(2)]
    assert sum(s[3] for s in shares) == 5  # ior-easy, ior-hard, 2 easy trees, the hard one
    assert (sum(s[0] for s in shares), sum(s[1] for s in shares)) == _serial(
        tmp_path / "data", crit)


@pytest.mark.parametrize("pattern", ["*01*", "*", "**", "file*", "*.1", "x?y", "*[01]*",
                                     "*01", "01*", "file.mdtest.0.1"])
def test_name_filter_is_fnmatchcase(pattern: str) -> None:
    """expected the one-pass filter to keep exactly the names fnmatchcase keeps / was
    fnmatchcase called once a name (the filter compiles the pattern once)."""
    names = ["file.mdtest.0.1", "file.mdtest.1.101", "x01y", "xay", "01", "a.1", "", "F01"]
    assert name_filter(pattern)(names) == [n for n in names if fnmatch.fnmatchcase(n, pattern)]


def test_ranks_start_the_walk_after_every_rank_is_ready(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """expected no rank to start its clock before the last rank was ready (a barrier, as
    pfind's ranks start after IO500's MPI barrier) / was each rank's clock started when its
    own interpreter was up, the others' start-up counted in the find's runtime."""
    from iolab.io500.find_ranks import rank_find

    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    _io500_tree(tmp_path / "data", easy=20, hard=10)
    for k, v in mpirun_env().items():
        if k.startswith("OMPI_ALLOW"):
            monkeypatch.setenv(k, v)
    spec = launchers.LaunchSpec(np=3, launcher="mpirun", extra=("--oversubscribe",))
    _, ranks = rank_find(str(tmp_path / "data"), Criteria(), spec, str(tmp_path))
    assert min(r["start"] for r in ranks) >= max(r["ready"] for r in ranks), ranks
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # the marks gone too
