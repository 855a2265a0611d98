"""Crashed ranks: a rank killed by a signal still leaves what it recorded (written by the
tracer's signal handler), the profile marks the rank crashed with its signal, and
``iolab profile show`` and ``iolab diagnose`` say the run crashed and what is missing.

Expected / was: a rank that segfaulted left "a profile of 0 processes" (Open MPI's own
SIGSEGV handler replaced the tracer's), and ``iolab diagnose`` said "No problem found by any
rule".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from trace_helpers import LIBDIR, PROGS, record

from iolab.sources.profile import load

KIB4 = 4096


@pytest.fixture(scope="module")
def crasher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("MPI is not installed")
    if not (LIBDIR / "libiolab-trace-mpi.so").is_file():
        pytest.skip("libiolab-trace-mpi.so is not built (run ./setup)")
    exe = tmp_path_factory.mktemp("crash") / "mpi_crash"
    subprocess.run(["mpicc", "-O2", "-o", str(exe), str(PROGS / "mpi_crash.c")], check=True)
    return exe


def _iolab(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IOLAB_LIBDIR": str(LIBDIR)}
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, env=env, timeout=180)


def test_mpi_rank_segfaults_mid_run(crasher: Path, tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    run = _iolab("profile", "-q", "-o", str(tmp_path / "p"), "--name", "job", "--np", "3",
                 "--", str(crasher), str(data), "1", "segv")
    assert run.returncode == 128 + signal.SIGSEGV, run.stderr  # the job's status, unchanged
    job = load(tmp_path / "p" / "job.iolab")
    assert job.metadata["crashed_ranks"] == "1:SIGSEGV"
    assert "rank 1 killed by SIGSEGV" in job.metadata["run_incomplete"]
    # what the crashed rank did before the crash is there, exactly
    own = record(job, "POSIX", "own.1", rank=1)
    assert own.counters["POSIX_BYTES_WRITTEN"] == 8 * KIB4 and own.counters["POSIX_WRITES"] == 8
    shared = record(job, "MPI-IO", "shared.dat")  # reduced by the loader (no MPI_Finalize)
    assert shared.counters["MPIIO_INDEP_WRITES"] == 3 * 2
    assert shared.counters["MPIIO_BYTES_WRITTEN"] == 3 * 2 * KIB4

    show = _iolab("profile", "show", str(tmp_path / "p" / "job.iolab"))
    assert show.returncode == 0 and "RUN INCOMPLETE: the run crashed" in show.stdout
    diag = _iolab("diagnose", str(tmp_path / "p" / "job.iolab"))
    assert diag.returncode == 0, diag.stderr
    text = " ".join(diag.stdout.split())
    assert "the run crashed: rank 1 killed by SIGSEGV" in text
    assert "No problem found" not in text and "did not finish" in text
    # expected: rules left unjudged for the crash's partial records say so / was: "partial:
    # Darshan ran out of record memory" for an iolab profile of a crashed run
    assert "Darshan ran out of record memory" not in text
    assert "partial: the run did not finish" in text
    js = _iolab("diagnose", str(tmp_path / "p" / "job.iolab"), "--json")
    meta = json.loads(js.stdout)["job"]["metadata"]
    assert meta["crashed_ranks"] == "1:SIGSEGV"


@pytest.mark.parametrize("how,sig", [("segv", signal.SIGSEGV), ("abort", signal.SIGABRT),
                                     ("bus", signal.SIGBUS), ("fpe", signal.SIGFPE),
                                     ("term", signal.SIGTERM)])
def test_each_fatal_signal_leaves_the_profile_and_the_status(
    crasher: Path, tmp_path: Path, how: str, sig: signal.Signals
) -> None:
    """One process (MPI singleton): the status is the signal's, as without the tracer."""
    data = tmp_path / "d"
    data.mkdir()
    bare = subprocess.run([str(crasher), str(data), "0", how], capture_output=True, timeout=60)
    assert bare.returncode == -sig
    run = _iolab("profile", "-q", "-o", str(tmp_path / "p"), "--name", "job",
                 "--", str(crasher), str(data), "0", how)
    assert run.returncode == 128 + sig, run.stderr
    job = load(tmp_path / "p" / "job.iolab")
    assert record(job, "POSIX", "own.0").counters["POSIX_BYTES_WRITTEN"] == 8 * KIB4
    assert record(job, "MPI-IO", "shared.dat").counters["MPIIO_INDEP_WRITES"] == 2
    if sig == signal.SIGTERM:
        assert "crashed_ranks" not in job.metadata
        assert "ended by SIGTERM" in job.metadata["run_incomplete"]
    else:
        assert job.metadata["crashed_ranks"] == f"0:{sig.name}"


@pytest.mark.parametrize(
    "mode,status,said,end",
    [("exit", 5, "caught", "_exit"), ("resethand", 128 + signal.SIGSEGV, "once", "SIGSEGV"),
     ("query", 0, "", "exit")],
)
def test_program_handlers_chained_and_dispositions_its_own(
    prog: Callable[[str], Path], tmp_path: Path, mode: str, status: int, said: str, end: str
) -> None:
    """The program's own handler runs (the tracer's stays underneath): a handler that exits
    leaves a normal profile, a one-shot one (as Open MPI's) lets the crash through, marked;
    the dispositions read back are the program's."""
    data = tmp_path / "f.dat"
    run = _iolab("profile", "-q", "-o", str(tmp_path / "p"), "--name", "job",
                 "--", str(prog("sig_chain")), str(data), mode)
    assert run.returncode == status, run.stderr
    assert said in run.stderr and run.stderr.count(said or "\n") <= 1
    job = load(tmp_path / "p" / "job.iolab")
    assert record(job, "POSIX", "f.dat").counters["POSIX_BYTES_WRITTEN"] == KIB4
    assert job.metadata.get("crashed_ranks") == ("0:SIGSEGV" if end == "SIGSEGV" else None)


def test_rank_killed_without_a_chance_is_named_missing(crasher: Path, tmp_path: Path) -> None:
    """SIGKILL runs no handler: the profile says which rank left nothing, from the rank count
    the run asked for, and the ranks the launcher ended."""
    data = tmp_path / "d"
    data.mkdir()
    run = _iolab("profile", "-q", "-o", str(tmp_path / "p"), "--name", "job", "--np", "3",
                 "--", str(crasher), str(data), "1", "kill")
    assert run.returncode != 0
    job = load(tmp_path / "p" / "job.iolab")
    text = job.metadata["run_incomplete"]
    # rank 1 always; the launcher's SIGTERM then SIGKILL 1 s later may also beat a slow
    # (loaded) rank 0 to its profile, and then it is named with rank 1
    missing = re.search(r"ranks? ([\d, ]+) left no profile", text)
    assert missing and "1" in missing.group(1).replace(" ", "").split(","), text
    assert "the run crashed" in text
    assert "crashed_ranks" not in job.metadata  # no rank reported a crash signal itself
    assert not [r for r in job.rows() if r.module == "POSIX" and r.path.endswith("/own.1")]
    if "0" not in missing.group(1).replace(" ", "").split(","):
        assert record(job, "POSIX", "own.0", rank=0).counters["POSIX_BYTES_WRITTEN"] == 8 * KIB4
