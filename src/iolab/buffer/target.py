"""The ``-o/--stats`` file of ``iolab buffer``: never a file of the program's.

The statistics replace what ``-o`` names, so the name is refused before the program starts
when it is a file the wrapped command names (``./app out.dat`` with ``-o out.dat``: the
program's output, or ``cat in.bin`` with ``-o in.bin``: its input), the file its stdout or
stderr already goes to, or an existing file that is not a statistics file of an earlier
``iolab buffer`` run (whose first line the library writes: ``iolab-buffer statistics``).
After the run, a file the program created or changed under that name is kept and the
statistics go to stderr instead (a program may write a path its command line never names).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.errors import UsageError

STATS_HEAD = b"iolab-buffer statistics (pid "


def _candidates(word: str) -> list[str]:
    """The paths an argv word may name: itself, and the value of ``--opt=VALUE``."""
    out = [word] if word else []
    if "=" in word:
        value = word.split("=", 1)[1]
        if value:
            out.append(value)
    return out


def _same(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except (OSError, RuntimeError):
        return False


def is_stats_file(path: Path) -> bool:
    """A statistics file an earlier ``iolab buffer -o`` wrote (the library's first line)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(STATS_HEAD)) == STATS_HEAD
    except OSError:
        return False


def _stream_target(target: Path) -> str | None:
    """"stdout" or "stderr" when that stream of this process (the program inherits it) is
    already the target file (``iolab buffer -o out.txt -- ./app > out.txt``)."""
    try:
        st = target.stat()
    except OSError:
        return None
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            s = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(s.st_mode) and (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
            return name
    return None


def check(stats: str, argv: Sequence[str]) -> None:
    """UsageError (one line, before anything runs) when writing the statistics to ``stats``
    could overwrite a file of the program's or of the user's."""
    target = Path(stats)
    fix = f"give -o a new name (e.g. -o {target.name}.iobuf) or leave -o out for stderr"
    for word in argv:
        for cand in _candidates(word):
            if _same(Path(cand), target):
                raise UsageError(f"-o {stats}: the program's command line names this file "
                                 f"({word}); the statistics would overwrite it: {fix}")
    stream = _stream_target(target)
    if stream is not None:
        raise UsageError(f"-o {stats}: the program's {stream} already goes to this file; "
                         f"the statistics would overwrite it: {fix}")
    if target.is_file() and not is_stats_file(target):
        raise UsageError(f"-o {stats}: the file exists and is not an iolab buffer statistics "
                         f"file; iolab never overwrites it: {fix}, or remove it first")


@dataclass(frozen=True)
class Seen:
    """What was at the target before the run: (device, inode, size, mtime) or None."""

    state: tuple[int, int, int, int] | None

    @classmethod
    def of(cls, path: Path) -> Seen:
        try:
            st = path.stat()
        except OSError:
            return cls(None)
        return cls((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))

    def changed(self, path: Path) -> bool:
        """The program created, replaced or wrote the file during the run."""
        return Seen.of(path).state != self.state
