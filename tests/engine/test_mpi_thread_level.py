"""The MPI thread level the engine asks for, seen through the work of its MPI-IO transfers
(callgrind call counts, not timing).

The engine asked every run for MPI_THREAD_FUNNELED; Open MPI then locks a mutex around every
MPI-IO call (OPAL_THREAD_LOCK in mca_io_ompio_file_write_at), two atomic operations and ~75
instructions per transfer that IOR, which asks for MPI_THREAD_SINGLE, does not pay. It was
the only difference found between the two tools on bench/engine_vs_ior's "MPI-IO strided 4K
indep" row (same system calls, same sizes and offsets; issue 29). Only a run with worker
threads (--threads > 1) needs FUNNELED now.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from engine_helpers import Engine, _env, run_engine, run_refused

TRANSFERS = 256  # per rank
TRANSFER = 4096


def _strided_args(path: Path, *extra: str) -> list[str]:
    return ["--api", "mpiio", "--layout", "strided", "--transfer", str(TRANSFER), "--block",
            str(TRANSFERS * TRANSFER), "--segments", "1", "--path", str(path / "f"), "--quiet",
            "--fsync", "--write", *extra]


def _calls_in_loop(profile: Path, callee: str) -> int:
    """Calls of functions whose name holds callee made inside iolab_worker_loop (the run was
    collected with --toggle-collect=iolab_worker_loop), summed over every caller."""
    out = subprocess.run(["callgrind_annotate", "--tree=calling", "--inclusive=yes",
                          str(profile)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return sum(int(m[1].replace(",", ""))
               for m in re.finditer(r"^\s*[\d,]+ .*?>\s+\S*" + re.escape(callee)
                                    + r"\S* \(([\d,]+)x\)", out.stdout, re.M))


def test_mpiio_transfers_take_no_mpi_mutex(engine: Engine, scratch: Path) -> None:
    """expected no mutex locked inside the MPI-IO transfer loop (MPI_THREAD_SINGLE, as IOR) /
    was one pthread_mutex_lock per MPI_File_write_at (MPI_THREAD_FUNNELED made Open MPI take
    its lock on every call)."""
    if "mpiio" not in engine.apis:
        pytest.skip(f"mpiio is not built into {engine.binary.name}")
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        pytest.skip("valgrind is not installed (it counts the calls of the transfer loop)")
    argv = engine.argv(2, [*_strided_args(scratch), "--json", str(scratch / "r.json")])
    i = argv.index(str(engine.binary))
    argv[i:i] = ["valgrind", "-q", "--tool=callgrind", "--toggle-collect=iolab_worker_loop",
                 f"--callgrind-out-file={scratch}/callgrind.%p"]
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    profiles = sorted(scratch.glob("callgrind.*"))
    assert len(profiles) == 2, profiles
    for profile in profiles:
        # the loop was seen: every transfer's write call is in the profile
        assert _calls_in_loop(profile, "PMPI_File_write_at") == TRANSFERS, profile
        assert _calls_in_loop(profile, "pthread_mutex_lock") < TRANSFERS // 4, profile


def test_worker_threads_still_run(engine: Engine, scratch: Path) -> None:
    """expected a run with --threads 2 (the one that asks for MPI_THREAD_FUNNELED) to write
    and read back every byte / guards the thread level chosen before MPI_Init."""
    args = ["--api", "posix", "--layout", "fpp", "--transfer", "4096", "--block", "65536",
            "--segments", "1", "--threads", "2", "--path", str(scratch / "f"), "--quiet",
            "--verify"]
    r = run_engine(engine, 2, args, scratch)
    assert r.rc == 0, r.why()
    assert r.doc is not None and r.doc["status"] == "ok"
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == 2 * 65536


def test_bad_option_is_reported_once(engine: Engine, scratch: Path) -> None:
    """expected one error line for an unknown option, exit 2 / guards the options read once
    before MPI_Init to choose the thread level (that reading must stay silent)."""
    r = run_refused(engine, 1, [*_strided_args(scratch), "--no-such-option", "1"], scratch)
    assert r.rc == 2, r.why()
    assert r.stderr.count("no-such-option") == 1, r.stderr
