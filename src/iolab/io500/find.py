"""IO500's find phases: the criteria and the check of one folder.

IO500 runs pfind over its MPI ranks: every file under the folder is checked against
``-newer timestampfile -size 3901c -name "*01*"`` (find-easy: the name only, under
mdtest-easy/), and the score is the files checked per second, in thousands. The walk over
the run's ranks, each checking its share of the folders, is :mod:`iolab.io500.find_ranks`;
this module checks one folder (``os.scandir``: its files against the criteria, and its
subfolders for the walk).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Criteria:
    name: str = "*01*"
    size: int | None = None  # bytes (find -size Nc)
    newer_than_ns: int | None = None  # mtime of the -newer file


@dataclass
class FindResult:
    found: int
    total: int  # files checked
    errors: int
    runtime_s: float

    @property
    def kiops(self) -> float:
        return self.total / self.runtime_s / 1000 if self.runtime_s > 0 else 0.0


def scan_folder(folder: str, crit: Criteria) -> tuple[list[str], int, int, int]:
    """(subfolders, files checked, files matched, errors) of one folder."""
    subdirs: list[str] = []
    checked = matched = errors = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.path)
                        continue
                    checked += 1
                    if not fnmatch.fnmatchcase(entry.name, crit.name):
                        continue
                    if crit.size is None and crit.newer_than_ns is None:
                        matched += 1
                        continue
                    st = entry.stat(follow_symlinks=False)
                    if crit.newer_than_ns is not None and st.st_mtime_ns <= crit.newer_than_ns:
                        continue
                    if crit.size is not None and st.st_size != crit.size:
                        continue
                    matched += 1
                except OSError:
                    errors += 1
    except OSError:
        errors += 1
    return subdirs, checked, matched, errors
