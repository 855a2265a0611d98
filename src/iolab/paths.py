"""Where iolab's C parts are: the engine binaries and the interposer libraries.

Looked up in this order: an explicit environment variable, the prefix of the running Python
(``./setup`` installs into the venv: ``<venv>/bin``, ``<venv>/lib/iolab``), then ``PATH`` /
the source tree's ``build/default``. On a cluster, a site install sets ``IOLAB_PREFIX``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from iolab.errors import UsageError
from iolab.launch import binary_mpi

_SRC_ROOT = Path(__file__).resolve().parents[2]  # <repo>/src/iolab -> <repo>


def _prefixes() -> list[Path]:
    out = []
    if os.environ.get("IOLAB_PREFIX"):
        out.append(Path(os.environ["IOLAB_PREFIX"]))
    out.append(Path(sys.prefix))
    return out


def engine_binary(mpi: str = "default") -> Path:
    """The ``iolab-bench`` built against ``mpi`` ("default" or "mpich")."""
    name = "iolab-bench" if mpi == "default" else f"iolab-bench-{mpi}"
    env = os.environ.get("IOLAB_BENCH") if mpi == "default" else None
    candidates = [Path(env)] if env else []
    candidates += [p / "bin" / name for p in _prefixes()]
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    build_dir = "default" if mpi == "default" else mpi
    candidates.append(_SRC_ROOT / "build" / build_dir / "engine" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise UsageError(
        f"the benchmark engine '{name}' is not built; run ./setup (or set IOLAB_BENCH to its path)"
    )


def engine_for_mpi(mpi: str) -> Path:
    """The engine of the ``--mpi`` choice (default, openmpi, mpich): "openmpi" is the default
    build when that one is Open MPI's (Debian's); a mismatch is a UsageError rather than a
    wrong launch."""
    engine = engine_binary("mpich" if mpi == "mpich" else "default")
    if mpi == "openmpi" and binary_mpi(engine) not in (None, "openmpi"):
        raise UsageError(f"{engine} is built against {binary_mpi(engine)}, not Open MPI; use "
                         "--mpi default, or rebuild with Open MPI's mpicc")
    return engine


def interposer_library(name: str) -> Path:
    """``libiolab-<name>.so`` (name: "trace", "trace-mpi", "buffer")."""
    fname = f"libiolab-{name}.so"
    env = os.environ.get("IOLAB_LIBDIR")
    candidates = [Path(env) / fname] if env else []
    candidates += [p / "lib" / "iolab" / fname for p in _prefixes()]
    candidates.append(_SRC_ROOT / "build" / "default" / "interpose" / name.split("-")[0] / fname)
    for c in candidates:
        if c.is_file():
            return c
    raise UsageError(f"'{fname}' is not built; run ./setup (or set IOLAB_LIBDIR to its folder)")
