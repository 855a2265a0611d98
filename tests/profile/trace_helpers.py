"""Helpers of the tracer tests (imported by name: ``conftest`` is ambiguous when the whole
suite runs, since every test folder has one): the build locations, ``iolab profile`` runs,
record lookup."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from iolab.model.raw import RawJob, RawRecord
from iolab.sources.profile import load

ROOT = Path(__file__).resolve().parents[2]
LIBDIR = ROOT / "build" / "default" / "interpose" / "trace"
PROGS = Path(__file__).resolve().parent / "progs"


_BUILT: dict[tuple[str, ...], Path] = {}


def build_once(key: tuple[str, ...], make: Callable[[], Path]) -> Path:
    """The program make() compiles, compiled once per session for its key (source, flags,
    MPI library): the MPI programs are run by up to six tests each across
    test_profile_mpi_languages, test_profile_darshan35 and test_profile_hdf5, and mpicxx,
    mpif90 and h5pcc took 0.4-1.5 s a call. The tests only run the program (and readelf
    it), so every one of them gets the same binary either way."""
    exe = _BUILT.get(key)
    if exe is None or not exe.is_file():
        exe = _BUILT[key] = make()
    return exe


def profile(
    argv: list[str],
    outdir: Path,
    *,
    np: int | None = None,
    trace: bool = False,
    mpi: str | None = None,
    stdin_text: str | None = None,
    extra_env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[subprocess.CompletedProcess[str], RawJob]:
    """Run ``iolab profile`` on argv; return the run and the loaded profile."""
    cmd = [sys.executable, "-m", "iolab", "profile", "-q", "-o", str(outdir), "--name", "job"]
    if np:
        cmd += ["--np", str(np)]
    if trace:
        cmd.append("--trace")
    if mpi:
        cmd += ["--mpi", mpi]
    env = {**os.environ, "IOLAB_LIBDIR": str(LIBDIR), **(extra_env or {})}
    run = subprocess.run(
        [*cmd, "--", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        input=stdin_text if stdin_text is not None else "",
        cwd=cwd,
    )
    assert run.returncode == 0, run.stderr
    return run, load(outdir / "job.iolab")


def record(job: RawJob, module: str, name: str, rank: int | None = None) -> RawRecord:
    """The one record of module whose path ends with /name (and of rank, if given)."""
    found = [
        r
        for r in job.rows()
        if r.module == module and r.path.endswith("/" + name) and (rank is None or r.rank == rank)
    ]
    assert len(found) == 1, f"{module} {name}: {[(r.path, r.rank) for r in found]}"
    return found[0]


def ints_except_time(rec: RawRecord) -> dict[str, int]:
    """Integer counters, without those that depend on timing (slowest op, fastest rank)."""
    skip = ("_MAX_READ_TIME_SIZE", "_MAX_WRITE_TIME_SIZE", "_FASTEST_RANK", "_SLOWEST_RANK")
    return {k: v for k, v in rec.counters.items() if not any(s in k for s in skip)}
