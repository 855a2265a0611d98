"""A log of many files is diagnosed in time proportional to its files (centres run diagnose
on thousands of logs a day; a 65,536-rank job writes a file per rank).

Expected / was: 16 times the files cost at most ~16 times the CPU / was ~45 times (the lfs
fix scanned every file for every crowded directory: 4 million dirname calls on 64,000 files
in 64 directories, 9.8 s for the whole diagnosis)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model import files
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO.parent / "shared" / "darshan-generated" / "posix_write_1M_x_64B.darshan"


def _generated(tmp_path: Path, nfiles: int, monkeypatch: pytest.MonkeyPatch) -> Path:
    """bench/diagnose_vs_drishti's log: ``nfiles`` POSIX records, 1,000 files a directory."""
    if not TEMPLATE.is_file():
        pytest.skip(f"the shared corpus is absent ({TEMPLATE}): no template log")
    monkeypatch.syspath_prepend(str(REPO / "bench"))  # the script imports from bench/
    from diagnose_vs_drishti import generate_log

    return generate_log(tmp_path / f"g{nfiles}.darshan", nfiles)


def _cpu_seconds(log: Path) -> tuple[float, int]:
    """CPU seconds of model and diagnosis (the log read before: a forked child reads it),
    the best of two (a loaded machine only adds), and the findings' count."""
    raw = load_darshan_log(log)
    best, found = float("inf"), 0
    for _ in range(2):
        t = time.process_time()
        rep = diagnose(build_model([raw]), Thresholds())
        best, found = min(best, time.process_time() - t), len(rep.findings)
    return best, found


@pytest.mark.usefixtures("darshan_available")
def test_sixteen_times_the_files_cost_at_most_about_sixteen_times_the_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """expected: CPU ratio 64,000 : 4,000 files below 28 (linear: 16, less with the fixed
    costs) / was ~45 (quadratic in files x directories)."""
    small, n_small = _cpu_seconds(_generated(tmp_path, 4_000, monkeypatch))
    large, n_large = _cpu_seconds(_generated(tmp_path, 64_000, monkeypatch))
    assert n_small > 0 and n_large > 0  # the files' findings, both times
    assert large / small < 28, f"{small:.2f} s for 4,000 files, {large:.2f} s for 64,000"


# One name for each alternative of the two patterns, and names of neither.
NAMES = [
    "/tmp/ompi.host.1000/x", "/tmp/openmpi-sessions-1@h/x", "/tmp/pmix-123/x",
    "/scratch/out.dat.locktest.3", "/dev/shm/seg", "/tmp/vader_segment.h.0",
    "/tmp/x_cid-12-3.sm", "/tmp/sm_segment.h", "/dev/psm2_x", "/tmp/ucx_x", "/tmp/hwloc.xml",
    "/tmp/cray_x", "/home/u/.mpich/x", "/tmp/mpich_x", "/var/spool/slurm/d/job",
    "/proc/self/maps", "/sys/x", "/etc/hosts", "/dev/null", "/run/x", "/usr/lib/libc.so",
    "/lib64/libm.so.6", "/opt/cray/lib/libmpi.so.12", "/home/u/lib.so", "/x/lib.so.1.2",
    "/env/site-packages/a.py", "/env/dist-packages/b", "/a/__pycache__/c", "/a/b.pyc",
    "/a/lib/python3.11/x", "<STDOUT>", "/scratch/run/out/file_000001.dat",
    "/lus/a/checkpoint.h5", "/gpfs/x/ompi_not.dat", "/scratch/so/pyfile", "data.sol",
    "/scratch/a.locktest.x", "/scratch/x_cid-1.sma", "relative/file", "",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_quick_test_of_a_name_keeps_every_category(name: str) -> None:
    """expected: categorize (a literal test before the patterns) agrees with the patterns
    alone on each of their alternatives / guards the words list against a new pattern."""
    if name.startswith("<") and name.endswith(">"):
        want = files.STREAM
    elif files._RUNTIME_RE.search(name):
        want = files.RUNTIME
    elif files._SYSTEM_RE.search(name):
        want = files.SYSTEM
    else:
        want = files.APP
    assert files.categorize(name) == want
