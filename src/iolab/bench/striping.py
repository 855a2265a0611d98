"""``iolab bench --stripe-count N --stripe-size S``: Lustre striping of the test files.

A Lustre file's layout is fixed when the file is created, so the files are given theirs
before the engine runs: ``lfs setstripe`` on iolab's private test directory (every file made
in it inherits the layout), or on the test file(s) of ``-o/--path`` (created empty; the
engine opens them without changing the layout). MPI-IO backends also get the
``striping_factor`` / ``striping_unit`` hints, which ROMIO applies to files it creates. The
layout actually obtained (Lustre clips a count to its OSTs) is read back with ``lfs
getstripe`` and stored with the run (``environment.striping``). Elsewhere these options are
one line, exit 2. The command lines and the parsing here are pure functions.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab import units
from iolab.errors import UsageError
from iolab.settings import apply as settings_apply
from iolab.settings import catalogue
from iolab.units import LUSTRE_STRIPE_UNIT


@dataclass(frozen=True)
class Striping:
    count: int  # -1: every OST, as lfs takes it
    size_bytes: int

    def hints(self) -> list[str]:
        """ROMIO's hints for the same layout (applied when ROMIO creates the file)."""
        factor = [f"striping_factor={self.count}"] if self.count > 0 else []
        return [*factor, f"striping_unit={self.size_bytes}"]


def parse_size(text: str) -> int:
    """``--stripe-size 1M`` -> bytes; a multiple of 64 KiB, or a one-line UsageError."""
    try:
        size = units.parse_size(text)
    except ValueError:
        raise UsageError(f"--stripe-size {text!r}: give bytes with an optional K, M or G "
                         "(e.g. 1M)") from None
    if size <= 0 or size % LUSTRE_STRIPE_UNIT:
        raise UsageError(f"--stripe-size {text}: Lustre stripe sizes are multiples of 64 KiB "
                         f"(e.g. 64K, 1M, 4M); {size} bytes is not")
    return size


def from_options(count: int | None, size: str | None) -> Striping | None:
    """The striping asked for, or None; --stripe-count alone keeps 1 MiB (Lustre's default)."""
    if count is None and size is None:
        return None
    if count is not None and (count == 0 or count < -1):
        raise UsageError(f"--stripe-count {count}: give 1 or more OSTs, or -1 for all of them")
    return Striping(count if count is not None else 1,
                    parse_size(size) if size is not None else _default_stripe_size())


def _default_stripe_size() -> int:
    """Lustre's default stripe size (the catalogue's lfs.stripe_size row)."""
    row = catalogue.setting("lfs.stripe_size")
    return int(catalogue.default(row) or 0) if row else 1 << 20


def setstripe_command(target: str, s: Striping) -> list[str]:
    return settings_apply.lfs_setstripe(target, s.count, s.size_bytes)


def getstripe_command(target: str, directory: bool = False) -> list[str]:
    return ["lfs", "getstripe", *(["-d"] if directory else []), "-y", target]


_FIELD = re.compile(r"(\w+):\s+(\S+)")


def parse_getstripe(text: str) -> dict[str, Any]:
    """``lfs getstripe -y`` (or a directory's one-line default) -> {stripe_count,
    stripe_size_bytes, pattern, stripe_offset, osts}; a composite layout's first component
    is the one kept."""
    keys = {"lmm_stripe_count": "stripe_count", "lmm_stripe_size": "stripe_size_bytes",
            "lmm_stripe_offset": "stripe_offset", "lmm_pattern": "pattern",
            "stripe_count": "stripe_count", "stripe_size": "stripe_size_bytes",
            "stripe_offset": "stripe_offset", "pattern": "pattern"}
    out: dict[str, Any] = {}
    osts: list[int] = []
    for m in _FIELD.finditer(text):
        key, value = m.group(1), m.group(2)
        number = int(value) if value.lstrip("-").isdigit() else None
        if key == "l_ost_idx" and number is not None:
            osts.append(number)
        elif key in keys and keys[key] not in out:
            out[keys[key]] = value if number is None else number
    if osts:
        out["osts"] = osts
    return out


def fs_type(path: str | os.PathLike[str], mountinfo: str | None = None) -> str | None:
    """The file system type of the mount holding ``path`` (/proc/self/mountinfo)."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    where = os.path.realpath(path)
    best, best_type = "", None
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        mount = fields[4].replace("\\040", " ")
        fstype = line.split(" - ", 1)[1].split()[0]
        inside = where == mount or where.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, best_type = mount, fstype
    return best_type


def check_lustre(directory: str | os.PathLike[str],
                 environ: Mapping[str, str] | None = None) -> None:
    """One line unless the test files' directory is on Lustre and ``lfs`` is here."""
    env = os.environ if environ is None else environ
    kind = fs_type(directory) or "unknown"
    if kind != "lustre":
        raise UsageError(f"--stripe-count/--stripe-size need Lustre: {directory} is on {kind}; "
                         "point -o/--path at a Lustre file system, or leave them out")
    if shutil.which("lfs", path=env.get("PATH")) is None:
        raise UsageError("--stripe-count/--stripe-size need the 'lfs' command (Lustre's "
                         "client tools); install them or 'module load' them")


def targets(path: str, layout: str | None, ranks: int, group_files: str | None = None,
            unique_dir: bool = False) -> list[str]:
    """The test files of ``-o/--path`` to create striped (the engine's names: PATH for one
    shared file, PATH.N per rank for fpp). Layouts whose files live in other directories
    (--unique-dir) or one per aggregator are a UsageError: stripe their directory yourself."""
    if layout in (None, "fpp"):
        if unique_dir:
            raise UsageError("--stripe-count/--stripe-size with --unique-dir: give each rank's "
                             "directory its layout with 'lfs setstripe -c N -S SIZE DIR' "
                             "instead")
        return [f"{path}.{r}" for r in range(ranks)]
    if layout == "subset" and group_files != "shared":
        raise UsageError("--stripe-count/--stripe-size with one file per aggregator: set "
                         "the layout on the test directory with 'lfs setstripe' instead, or "
                         "use --group-files shared")
    return [path]


def apply(s: Striping, files: Sequence[str], directory: str | None,
          environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Set the layout (on ``directory``, else on each file, created empty) and read back
    what was obtained; returns the record stored as ``environment.striping``."""
    env = dict(os.environ if environ is None else environ)
    where = [directory] if directory else list(files)
    obtained = []
    for target in where:
        for cmd in (setstripe_command(target, s),
                    getstripe_command(target, directory=bool(directory))):
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60,
                               check=False)
            if p.returncode != 0:
                msg = (p.stderr.strip().splitlines() or ["no message"])[-1]
                raise UsageError(f"{' '.join(cmd)} failed: {msg}")
        obtained.append({"path": target, **parse_getstripe(p.stdout)})
    return {"stripe_count": s.count, "stripe_size_bytes": s.size_bytes, "obtained": obtained}
