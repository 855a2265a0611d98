"""IO500's find phases: a parallel walk of the data folder with IO500's criteria.

IO500 runs pfind over its MPI ranks: every file under the folder is checked against
``-newer timestampfile -size 3901c -name "*01*"`` (find-easy: the name only, under
mdtest-easy/), and the score is the files checked per second, in thousands. Here the walk is
done by as many worker processes as the run has ranks, on the node that launched the run:
each worker reads one directory at a time (``os.scandir``), checks its files and hands the
subdirectories it finds back to the pool, so a tree is walked in parallel as pfind walks
it. (iolab's engine has no walk, and the Python side has no MPI.)
"""

from __future__ import annotations

import fnmatch
import os
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
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


def _scan(folder: str, crit: Criteria) -> tuple[list[str], int, int, int]:
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


def parallel_find(root: str, crit: Criteria, workers: int) -> FindResult:
    """Walk ``root`` with ``workers`` processes; every folder is one task."""
    start = time.perf_counter()
    found = total = errors = 0
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        pending: set[Future[tuple[list[str], int, int, int]]] = {
            pool.submit(_scan, root, crit)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                subdirs, checked, matched, errs = fut.result()
                total += checked
                found += matched
                errors += errs
                pending |= {pool.submit(_scan, d, crit) for d in subdirs}
    return FindResult(found, total, errors, time.perf_counter() - start)
