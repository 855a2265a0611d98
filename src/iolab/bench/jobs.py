"""What ``iolab bench`` runs: the user's one case, or the bundled default job.

The default job (``iolab bench`` with no engine option; ``./setup`` runs it) is a short
benchmark of the current directory's file system: POSIX file per process and one shared file,
2 ranks, write then cold read (eviction checked), 3 repetitions, sizes a laptop handles in
seconds. Later issues extend it; its cases keep their labels so results stay comparable.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import UsageError

# The sizes: 2 ranks x 16 MiB per phase; with fsync inside the write timing and eviction
# before the reads, both numbers are the storage's, not the page cache's.
DEFAULT_COMMON = ("--transfer", "1M", "--block", "16M", "--segments", "1", "--reps", "3",
                  "--fsync", "--evict")


@dataclass(frozen=True)
class Case:
    """One engine run: a label for the results database, and the engine's options."""

    label: str | None
    engine_args: tuple[str, ...]
    scratch_name: str = "data"  # file name inside the scratch directory, when we make one


DEFAULT_JOB = (
    Case("default:fpp", ("--api", "posix", "--layout", "fpp", *DEFAULT_COMMON), "fpp"),
    Case("default:shared", ("--api", "posix", "--layout", "segmented", *DEFAULT_COMMON),
         "shared"),
)


class Scratch:
    """A private directory in the current directory for a run's test files.

    Made only when the user gave no ``--path``; removed at the end (with whatever a crashed
    engine left in it) unless ``--keep``.
    """

    def __init__(self, where: Path | None = None) -> None:
        base = where if where is not None else Path.cwd()
        try:
            self.dir = Path(tempfile.mkdtemp(prefix=".iolab-bench-", dir=base))
        except OSError as exc:
            raise UsageError(
                f"cannot create test files in {base} ({exc.strerror}); cd to a writable "
                "directory on the file system to test, or give --path DIR/FILE") from None

    def path_for(self, case: Case) -> str:
        return str(self.dir / case.scratch_name)

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def with_path(case: Case, path: str) -> Case:
    return Case(case.label, (*case.engine_args, "--path", path), case.scratch_name)


def user_case(label: str | None, engine_args: Sequence[str]) -> Case:
    return Case(label, tuple(engine_args))
