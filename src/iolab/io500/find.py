"""IO500's find phases: the criteria and the check of one folder.

IO500 runs pfind over its MPI ranks: every file under the folder is checked against
``-newer timestampfile -size 3901c -name "*01*"`` (find-easy: the name only, under
mdtest-easy/), and the score is the files checked per second, in thousands. The walk over
the run's ranks, each checking its share of the folders, is :mod:`iolab.io500.find_ranks`;
this module checks one folder (its files against the criteria, and its subfolders for the
walk).

The checks are pfind's, made as cheaply as pfind makes them: the name first (compiled once,
as pfind compiles its regex once), a stat only for a name that matched and only when size or
age is asked for. A folder whose link count is 2 has no subfolders (each subfolder's ``..``
adds a link; GNU find's leaf optimisation), so every entry is a file and its names are read
with ``os.listdir`` and filtered in one pass, without an ``os.DirEntry`` and a type test per
entry; a folder with another link count (some file systems give 1) is read with
``os.scandir`` and each entry's type from the listing, as pfind reads ``d_type``.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Criteria:
    name: str = "*01*"
    size: int | None = None  # bytes (find -size Nc)
    # pfind's -newer: the -newer file's ctime in whole seconds; a file counts unless its own
    # ctime (whole seconds) is before it (same second included; ctime, so a file whose mtime
    # was set back still counts, as pfind counts it)
    newer_than_s: int | None = None


@dataclass
class FindResult:
    found: int
    total: int  # files checked
    errors: int
    runtime_s: float

    @property
    def kiops(self) -> float:
        return self.total / self.runtime_s / 1000 if self.runtime_s > 0 else 0.0


@functools.lru_cache(maxsize=16)
def name_filter(pattern: str) -> Callable[[list[str]], list[str]]:
    """The names of a list that match find's ``-name pattern``, in one pass. ``*text*`` (IO500's
    ``*01*``) is a substring test, exactly what fnmatch and pfind's ``.*01.*`` mean there."""
    inner = pattern[1:-1]
    if len(pattern) >= 2 and pattern[0] == pattern[-1] == "*" and not any(
            c in inner for c in "*?[]\\"):
        return lambda names: [n for n in names if inner in n]
    match = re.compile(fnmatch.translate(pattern)).match
    return lambda names: [n for n in names if match(n)]


def is_leaf(st: os.stat_result | None) -> bool:
    """A folder known to hold no subfolder (its link count is 2: itself and its own ``.``)."""
    return st is not None and stat.S_ISDIR(st.st_mode) and st.st_nlink == 2


def _meets(st: os.stat_result, crit: Criteria) -> bool:
    if crit.newer_than_s is not None and st.st_ctime_ns // 1_000_000_000 < crit.newer_than_s:
        return False
    return crit.size is None or st.st_size == crit.size


def _matched(folder: str, names: list[str], crit: Criteria) -> tuple[int, int]:
    """(matched, errors) of the files `names` of folder: the name, then a stat if asked."""
    names = name_filter(crit.name)(names)
    if crit.size is None and crit.newer_than_s is None:
        return len(names), 0
    matched = errors = 0
    for name in names:
        try:
            matched += _meets(os.lstat(os.path.join(folder, name)), crit)
        except OSError:
            errors += 1
    return matched, errors


def _slice(names: list[str], share: tuple[int, int]) -> list[str]:
    """The names at positions rank, rank + size, ... of the sorted list: each of `size`
    ranks reading the same folder takes its own, every name exactly once (sorted, so the
    slices do not depend on the order each rank's listing came in)."""
    rank, size = share
    return names if size == 1 else sorted(names)[rank::size]


def scan_folder(folder: str, crit: Criteria, leaf: bool = False,
                share: tuple[int, int] = (0, 1)) -> tuple[list[str], int, int, int]:
    """(subfolders, files checked, files matched, errors) of one folder; leaf: the folder is
    known to hold no subfolder (:func:`is_leaf`), so its names alone are read. share (rank,
    size): `size` ranks read the folder and this one takes its :func:`_slice` of the files
    (checked) and of the subfolders (returned); errors every rank meets alike (the listing,
    an entry's type) are rank 0's."""
    own = share[0] == 0
    try:
        if leaf:
            names = _slice(os.listdir(folder), share)
            matched, errors = _matched(folder, names, crit)
            return [], len(names), matched, errors
        subdirs: list[str] = []
        files: list[str] = []
        type_errors = 0
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    folder_entry = entry.is_dir(follow_symlinks=False)
                except OSError:
                    type_errors += own
                    continue
                if folder_entry:
                    subdirs.append(entry.path)
                else:
                    files.append(entry.name)
        files = _slice(files, share)
        matched, errors = _matched(folder, files, crit)
        return _slice(subdirs, share), len(files), matched, errors + type_errors
    except OSError:
        return [], 0, 0, int(own)
