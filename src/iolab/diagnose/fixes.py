"""Fix artifacts: hints files, environment lines, ``lfs`` commands, Slurm lines, snippets.

Every builder returns :class:`Artifact` objects with the actual paths and values of the
job, so that ``--emit-fixes DIR`` writes files a user can source or paste as they are.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping

from iolab.diagnose.rules.base import Artifact
from iolab.diagnose.snippets import SNIPPETS
from iolab.errors import UsageError
from iolab.paths import interposer_library

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def romio_hints(hints: Mapping[str, str], stem: str = "romio_hints") -> list[Artifact]:
    """A ROMIO hints file, the ``ROMIO_HINTS`` export and the Cray ``MPICH_MPIIO_HINTS``."""
    body = "".join(f"{k} {v}\n" for k, v in hints.items())
    cray = ":".join(f"{k}={v}" for k, v in hints.items())
    return [
        Artifact("romio-hints", f"{stem}.txt", body,
                 "ROMIO hints file (MPICH, Open MPI's ROMIO component, Intel MPI)"),
        Artifact("env", f"{stem}.env",
                 f"export ROMIO_HINTS=\"$PWD/{stem}.txt\"\n"
                 "export ROMIO_PRINT_HINTS=1  # check in the job output that they applied\n",
                 "source before mpirun/srun"),
        Artifact("mpich-hints", f"{stem}.cray.env",
                 f"export MPICH_MPIIO_HINTS=\"*:{cray}\"\n"
                 "export MPICH_MPIIO_HINTS_DISPLAY=1  # Cray MPICH prints the hints it used\n",
                 "Cray MPICH"),
    ]


def lfs_setstripe(paths: Iterable[str], count: int, size: int, name: str) -> Artifact:
    """``lfs setstripe`` for the job's own paths; a layout applies to files created after."""
    lines = [
        "# Lustre layouts are fixed when a file is created: run these before the job writes,",
        "# or create a new file with the layout and copy the old one into it.",
    ]
    dirs = sorted({os.path.dirname(p) or "." for p in paths})
    size_s = f"{size // MiB}M" if size % MiB == 0 else str(size)
    for d in dirs[:20]:
        lines.append(f"lfs setstripe -c {count} -S {size_s} {shlex.quote(d)}  # new files in it")
    for p in list(paths)[:50]:
        lines.append(f"lfs setstripe -c {count} -S {size_s} {shlex.quote(p + '.new')} && "
                     f"cp {shlex.quote(p)} {shlex.quote(p + '.new')} && "
                     f"mv {shlex.quote(p + '.new')} {shlex.quote(p)}")
    return Artifact("lfs", name, "\n".join(lines) + "\n", "Lustre striping commands")


def env(lines: Iterable[str], name: str, note: str = "") -> Artifact:
    return Artifact("env", name, "\n".join(lines) + "\n", note)


def slurm(lines: Iterable[str], name: str = "slurm.sbatch") -> Artifact:
    return Artifact("slurm", name, "\n".join(lines) + "\n", "lines for the batch script")


def snippets(topic: str) -> list[Artifact]:
    """The C, Fortran and Python versions of one code change."""
    out = []
    for lang, ext in (("c", "c"), ("fortran", "f90"), ("python", "py")):
        code = SNIPPETS.get((topic, lang))
        if code:
            out.append(Artifact(f"snippet-{lang}", f"{topic}.{ext}", code, f"{lang} snippet"))
    return out


def iolab_buffer(paths: Iterable[str], size: str = "64M", count: int = 4) -> list[Artifact]:
    """iolab's buffering library, IOBUF-style: ``pattern:size=..:count=..``. Read-ahead is
    left to the library's ``prefetch=auto``: on where reads are round trips (FUSE, NFS,
    Lustre...), off on local disks where the kernel's readahead already overlaps them."""
    pats = sorted({_pattern(p) for p in paths})[:8] or ["*"]
    spec = ",".join(f"{p}:size={size}:count={count}" for p in pats)
    q = shlex.quote(spec)  # paths come from the log: quoted for the shell, whatever they hold
    return [
        env([f"export IOBUF_PARAMS={q}  # Cray IOBUF (module load iobuf, relink)",
             f"# or iolab's library, no relinking: iolab buffer --spec {q} -- ./app",
             f"export LD_PRELOAD={_buffer_library()} IOLAB_BUFFER={q}"],
            "buffering.env", "iolab buffer / Cray IOBUF"),
    ]


def _buffer_library() -> str:
    """libiolab-buffer.so's full path, shell-quoted (a bare name loads only from the loader's
    search path)."""
    try:
        return shlex.quote(str(interposer_library("buffer")))
    except UsageError:  # diagnosing where iolab's C parts are not built: say where they go
        return '"$IOLAB_PREFIX/lib/iolab/libiolab-buffer.so"'


def _pattern(path: str) -> str:
    """A glob for one file's name, so that numbered siblings share one buffer entry."""
    base = os.path.basename(path)
    d = os.path.dirname(path)
    stem = base.rstrip("0123456789._-")
    glob = (stem + "*") if stem != base else base
    return f"{d}/{glob}" if d else glob
