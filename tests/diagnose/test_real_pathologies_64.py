"""Production I/O pathologies from real MPI programs at 64 ranks (oversubscribed), run under
`iolab profile --darshan` and diagnosed from the Darshan log it writes: progs/pathologies.c
(gather, openclose, unaligned, holes), compiled here. Each run stays small (a 64-rank start is most
of its time); the test skips when 64 ranks cannot start here.

Expected / was: each pathology named with its fix (was: untested at 64 ranks; the lone
writer, rank 0 gathering and writing everything, was told as nothing but the job's
overview)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from one_host_mpi import one_host_open_mpi  # noqa: F401 (autouse: 64 ranks start without probing)

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import Report, diagnose
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
PROG = Path(__file__).resolve().parent / "progs" / "pathologies.c"
RANKS = 64


def _trace_libdir() -> Path:
    root = Path(__file__).resolve().parents[2]
    for d in (root / "build" / "default" / "interpose" / "trace",
              Path(sys.prefix) / "lib" / "iolab"):
        if (d / "libiolab-trace.so").is_file():
            return d
    pytest.skip("libiolab-trace.so is not built (run ./setup)")


@pytest.fixture(scope="module")
def pathologies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """progs/pathologies.c compiled once for the module (each test runs its own mode)."""
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("mpicc/mpirun are not installed")
    exe = tmp_path_factory.mktemp("prog") / "pathologies"
    subprocess.run(["mpicc", "-O2", "-Wall", "-o", str(exe), str(PROG)], check=True)
    return exe


def _run(exe: Path, tmp_path: Path, mode: str, n: int, size: int,
         env: dict[str, str] | None = None) -> Report:
    out = tmp_path / "prof"
    cmd = [sys.executable, "-m", "iolab", "profile", "--darshan", "-q", "-o", str(out),
           "--name", "job", "--np", str(RANKS), "--", str(exe), str(tmp_path / f"{mode}.dat"),
           mode, str(n), str(size)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "IOLAB_LIBDIR": str(_trace_libdir()),
                              **(env or {})})
    if run.returncode != 0 and ("slots" in run.stderr or "not enough" in run.stderr):
        pytest.skip(f"{RANKS} ranks cannot start here: {run.stderr.strip()[:200]}")
    assert run.returncode == 0, run.stderr
    return diagnose(build_model([load_darshan_log(out / "job.darshan")]), Thresholds())


def _problems(rep: Report) -> list:
    return [f for f in rep.findings if not f.rule.overview]


def test_open_close_per_write_is_found_with_its_fix(pathologies: Path, tmp_path: Path) -> None:
    """Each of 64 ranks opens the shared file, writes 4 KiB at its own offset and closes it,
    32 times: 2,048 opens and closes."""
    rep = _run(pathologies, tmp_path, "openclose", 32, 4096)
    f = next(f for f in _problems(rep) if f.rule.id == "frequent-open-close")
    assert f.hit.values  # the counts that show it
    assert "Open each file once" in f.fix.text
    # the 4 KiB writes are the other half of the storm, in the same findings
    small = next(f for f in _problems(rep) if f.key == "small-requests/write")
    assert small.hit.cost_s is not None and small.hit.cost_s > 0


def test_small_unaligned_independent_shared_writes(pathologies: Path, tmp_path: Path) -> None:
    """64 ranks, 64 independent MPI_File_write_at of 1000 bytes each, interleaved into one
    shared file: the cause is small independent requests no aggregation touches; the fix
    makes them collective (one aggregator per region)."""
    rep = _run(pathologies, tmp_path, "unaligned", 64, 1000)
    keys = [f.key for f in _problems(rep)]
    assert "small-requests/write" in keys and "mpiio-independent/write" in keys
    cb = next(f for f in _problems(rep) if f.key == "collective-buffering/write")
    assert "independent calls" in cb.fix.text
    exp = next(f for f in _problems(rep) if f.key == "mpiio-independent/write")
    assert exp.rule.experiment and exp.cost_s is None and exp.estimate_range_s is not None
    assert "collective" in exp.fix.text.lower()
    # waste comes before the experiment that would remove the same seconds
    assert keys.index("small-requests/write") < keys.index("mpiio-independent/write")
    # expected: no straggler: the ranks' MPI-IO time gap is waiting in MPI the POSIX calls
    # (milliseconds) do not cover; was: shared-file-stragglers first, "waited on the file system"
    assert "shared-file-stragglers" not in keys


def test_rank0_gathers_and_writes_everything(pathologies: Path, tmp_path: Path) -> None:
    """Rank 0 gathers 64 KiB from every rank, 8 times, and writes each 4 MiB step alone with
    POSIX write(): the first finding is the lone writer, its cost the job's (every other rank
    waits), with parallel writes as the fix.

    Expected: single-io-stream first, a mechanism owning rank 0's write time; was: nothing but
    the job's overview (a lone stream was judged only from 1 GiB of traffic, and then as an
    experiment owning no time)."""
    rep = _run(pathologies, tmp_path, "gather", 8, 65536)
    first = _problems(rep)[0]
    assert first.rule.id == "single-io-stream" and not first.rule.experiment
    v = first.hit.values
    assert v["rank"] == 0 and v["share"] == 1.0 and v["nprocs"] == RANKS
    assert v["bytes_written"] == 8 * RANKS * 65536 and v["bytes_read"] == 0
    rank0 = float(rep.model.metrics.rank_io_time_s[0])
    assert rank0 > 0 and float(rep.model.metrics.rank_io_time_s[1:].max()) == 0.0
    # the job waits for rank 0: its I/O time is the job's, less an even share of it
    assert first.cost_s == pytest.approx(rank0 * (1 - 1 / RANKS), rel=1e-6)
    assert v["waiting_rank_s"] == pytest.approx(rank0 * (RANKS - 1), rel=1e-3)
    assert f"{RANKS - 1} other ranks" in first.hit.summary
    assert "MPI_File_write_at_all" in first.fix.text and "stripe" in first.fix.text
    assert "lone_writer.c" in {a.name for a in first.fix.artifacts}


def test_collective_writes_with_holes_at_64_ranks(pathologies: Path, tmp_path: Path) -> None:
    """Each of 64 ranks makes 2 collective writes of 64 KiB, every other block left empty,
    through ROMIO (Open MPI's romio321, romio_cb_write enable, a 1 MiB collective buffer: 8
    rounds a call): the one aggregator reads each round's file domain first, 16 reads, every
    one past the end of the new file (0 bytes, microseconds from the page cache), while the
    64 oversubscribed ranks spend seconds synchronising in the exchange.

    Expected: the exchange first when it is worth reporting (mpiio-time-skew, every rank
    alike: no late rank), costing
    the MPI-IO time beyond the POSIX time, and read-modify-write found with its 16 zero-byte
    reads, costing what those reads took, after it; was: left out (MPICH's busy-polling ranks
    took 83 s at 64 calls; Open MPI's ranks yield when oversubscribed: ~13 s here)."""
    hints = tmp_path / "romio_hints"
    hints.write_text("romio_cb_write enable\ncb_buffer_size 1048576\n")
    rep = _run(pathologies, tmp_path, "holes", 2, 65536,
               env={"OMPI_MCA_io": "romio321", "ROMIO_HINTS": str(hints)})
    problems = _problems(rep)
    rmw = next(f for f in problems if f.rule.id == "read-modify-write")
    v = rmw.hit.values
    assert rmw.hit.files[0].values["mode"] == "collective" and v["mpiio_writes"] == 2 * RANKS
    assert v["posix_reads"] == 16 and v["zero_byte_reads"] == 16 and v["posix_bytes_read"] == 0
    assert "romio_ds_write does not act inside collective" in rmw.fix.text
    L = rep.model.layers
    i = rep.model.files.paths.index(str(tmp_path / "holes.dat"))
    reads_s = float(L.posix.time_s["read"][i])
    assert rmw.cost_s is not None and 0 < rmw.cost_s <= reads_s * (1 + 1e-9)
    # the seconds are the exchange's: when it is worth reporting (exchange_share of the run:
    # seconds on a loaded machine, a tenth of a second on an idle one), it comes first, as
    # itself, not as a late rank; when it is not, nothing stands for it
    exchange = float(L.mpiio.slowest_rank_time_s[i] - L.posix.slowest_rank_time_s[i])
    skew = [f for f in problems if f.rule.id == "mpiio-time-skew"]
    if exchange >= Thresholds().exchange_share * rep.model.metrics.run_time_s:
        first = problems[0]
        assert first.rule.id == "mpiio-time-skew" and first.hit.data["together"]
        assert first.cost_s == pytest.approx(exchange, rel=1e-6)
        assert first.cost_s > 100 * rmw.cost_s
        assert problems.index(rmw) > 0
    else:
        assert not skew, (exchange, rep.model.metrics.run_time_s)
    assert not any(f.rule.id == "shared-file-stragglers" for f in problems)  # no late rank
