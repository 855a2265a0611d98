"""Known answers from real MPI programs run here under `iolab profile` (real ranks, real
files): progs/mpi_patterns.c, flush_log.c, h5_fill.c, posix_habits.c.

- ROMIO (MPICH) collective writes that leave every other block empty, with
  ``romio_cb_write enable`` (a ROMIO_HINTS file): two-phase collective buffering reads each
  file domain before writing it. On a new file the reads return 0 bytes; on an existing file
  they read the old data back.
- Open MPI, rank 0 sleeps 2 s before a collective write: the other ranks wait inside
  MPI_File_write_at_all, so their MPI-IO time is waiting, not I/O.
- ROMIO (MPICH) independent writes through a strided file view: data sieving reads each
  extent, fills in the rank's blocks and writes the whole extent back (4 ranks: 4x bytes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.sources.profile import load

ROOT = Path(__file__).resolve().parents[2]
LIBDIR = ROOT / "build" / "default" / "interpose" / "trace"
PROG = Path(__file__).resolve().parent / "progs" / "mpi_patterns.c"
CALLS, PIECE = 64, 64 << 10
MiB = 1 << 20


def _compile(cc: str, out: Path) -> Path:
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    if not (LIBDIR / "libiolab-trace.so").is_file():
        pytest.skip("libiolab-trace.so is not built (run ./setup)")
    subprocess.run([cc, "-O2", "-Wall", "-o", str(out), str(PROG)], check=True)
    return out


def _profile(argv: list[str], outdir: Path, mpi: str | None = None,
             env: dict[str, str] | None = None):
    cmd = [sys.executable, "-m", "iolab", "profile", "-q", "-o", str(outdir), "--name", "job",
           "--np", "4"] + (["--mpi", mpi] if mpi else [])
    run = subprocess.run([*cmd, "--", *argv], capture_output=True, text=True, timeout=180,
                         env={**os.environ, "IOLAB_LIBDIR": str(LIBDIR), **(env or {})})
    assert run.returncode == 0, run.stderr
    return diagnose(build_model([load(outdir / "job.iolab")]), Thresholds())


def _sorted_by_cost(rep) -> bool:
    from iolab.diagnose.rules.base import SEVERITY_RANK

    keys = [(f.rule.overview, SEVERITY_RANK[f.severity], -(f.cost_s or 0.0))
            for f in rep.findings]
    return keys == sorted(keys)


def test_romio_collective_writes_with_holes_read_the_file(tmp_path: Path) -> None:
    exe = _compile("mpicc.mpich", tmp_path / "mpi_patterns")
    hints = tmp_path / "romio_hints"
    hints.write_text("romio_cb_write enable\n")
    data = tmp_path / "holes.dat"
    argv = [str(exe), str(data), "holes", str(CALLS), str(PIECE)]
    env = {"ROMIO_HINTS": str(hints)}
    for attempt, outdir in enumerate((tmp_path / "new", tmp_path / "old")):
        rep = _profile(argv, outdir, mpi="mpich", env=env)
        assert rep.model.job.hints[str(data)]["romio_cb_write"] == "enable"
        f = next(f for f in rep.findings if f.rule.id == "read-modify-write")
        v = f.hit.values
        assert v["mpiio_reads"] == 0 and v["mpiio_writes"] == 4 * CALLS
        # one aggregator (one node), one read of its file domain per collective call
        assert v["posix_reads"] == CALLS
        if attempt == 0:  # a new file: every read is past its end
            assert v["zero_byte_reads"] == CALLS and v["posix_bytes_read"] == 0
        else:  # the same file again: the reads bring the old data back
            assert v["posix_bytes_read"] > 0
        # the slowest rank's share of the reads: bounded by all the ranks' read time
        read_s = float(rep.model.layers.posix.time_s["read"].sum())
        assert f.cost_s is not None and 0 < f.cost_s <= read_s * (1 + 1e-9)
        assert _sorted_by_cost(rep)
        # collective: romio_ds_write does not act there; off Lustre no hint does
        assert not any(a.kind == "romio-hints" for a in f.fix.artifacts)
        assert "romio_ds_write does not act inside collective" in f.fix.text
        # one node: ROMIO's one aggregator did every POSIX write of the balanced MPI-IO file
        one = next(g for g in rep.findings if g.rule.id == "single-posix-writer")
        assert one.hit.values["posix_top_rank_share"] == 1.0
        assert one.hit.values["mpiio_top_rank_share"] == 0.25


def test_late_rank_makes_collective_calls_wait(tmp_path: Path) -> None:
    exe = _compile("mpicc.openmpi", tmp_path / "mpi_patterns")
    rep = _profile([str(exe), str(tmp_path / "late.dat"), "late", "2000", str(1 << 20)],
                   tmp_path / "p")
    first = rep.findings[0]
    assert first.rule.id == "mpiio-time-skew" and first.severity == "high"
    v = first.hit.values
    assert v["mpiio_slowest_s"] >= 1.9 and v["posix_slowest_s"] < 0.5
    assert first.cost_s == pytest.approx(v["mpiio_slowest_s"] - v["posix_slowest_s"], rel=1e-6)
    # one cause per file: the waiting ranks are not also reported as stragglers
    assert not any(f.rule.id == "shared-file-stragglers" for f in rep.findings)
    assert "MPI_Barrier" in first.fix.text


def test_ompio_job_is_told_romio_hints_need_romio(tmp_path: Path) -> None:
    """Expected / was: ROMIO hints for an Open MPI (OMPIO) job say that OMPIO ignores them
    / a hints file handed out as if it applied."""
    exe = _compile("mpicc.openmpi", tmp_path / "mpi_patterns")
    rep = _profile([str(exe), str(tmp_path / "holes.dat"), "holes", str(CALLS), str(PIECE)],
                   tmp_path / "p")
    assert rep.model.job.mpiio_implementation == "OMPIO"
    with_hints = [f for f in rep.findings
                  if any(a.kind == "romio-hints" for a in f.fix.artifacts)]
    assert with_hints
    assert all("OMPI_MCA_io=^ompio" in f.fix.text for f in with_hints)


def test_romio_data_sieving_writes_every_byte_four_times(tmp_path: Path) -> None:
    exe = _compile("mpicc.mpich", tmp_path / "mpi_patterns")
    n, s = 4096, 1024
    rep = _profile([str(exe), str(tmp_path / "sieve.dat"), "sieve", str(n), str(s)],
                   tmp_path / "p", mpi="mpich")
    amp = next(f for f in rep.findings if f.rule.id == "write-amplification")
    v = amp.hit.values
    assert v["mpiio_bytes_written"] == 4 * n * s
    # each rank rewrites the extent from its first to its last block: 4 x its data, less
    # the 3 blocks of the other ranks past its last one
    assert v["posix_bytes_written"] == 4 * (4 * n * s - 3 * s)
    assert v["amplification"] == pytest.approx(4.0, rel=1e-3)
    write_s = float(rep.model.layers.posix.time_s["write"].sum())
    assert amp.cost_s is not None and 0 < amp.cost_s <= write_s
    rmw = next(f for f in rep.findings if f.rule.id == "read-modify-write")
    assert rmw.hit.values["posix_bytes_read"] > 0 and rmw.hit.values["mpiio_reads"] == 0
    assert "independent writes" in rmw.hit.summary
    for f in (amp, rmw):
        assert "romio_ds_write disable" in next(
            a for a in f.fix.artifacts if a.kind == "romio-hints").content


def test_progress_log_flushed_line_by_line(tmp_path: Path) -> None:
    """progs/flush_log.c: 2,000 lines, each fprintf + fflush + fsync(fileno(f)) into a 28 KB
    file. Expected / was: one open, no frequent-open-close / "2001 opens" (Darshan's
    POSIX_OPENS counts each fileno() too). The small file that costs time is found (with
    the threshold lowered to this machine's fast fsync: seconds here, minutes on Lustre)."""
    if shutil.which("cc") is None:
        pytest.skip("cc is not installed")
    if not (LIBDIR / "libiolab-trace.so").is_file():
        pytest.skip("libiolab-trace.so is not built (run ./setup)")
    exe = tmp_path / "flush_log"
    subprocess.run(["cc", "-O2", "-Wall", "-o", str(exe), str(PROG.parent / "flush_log.c")],
                   check=True)
    log = tmp_path / "progress.log"
    outdir = tmp_path / "p"
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-q", "-o", str(outdir),
                          "--name", "job", "--", str(exe), str(log), "2000"],
                         capture_output=True, text=True, timeout=180,
                         env={**os.environ, "IOLAB_LIBDIR": str(LIBDIR)})
    assert run.returncode == 0, run.stderr
    model = build_model([load(outdir / "job.iolab")])
    th = Thresholds()
    th.tiny_file_min_s = 0.05
    rep = diagnose(model, th)
    assert not any(f.rule.id == "frequent-open-close" for f in rep.findings)
    f = next(f for f in rep.findings if f.rule.id == "tiny-file-slow")
    row = f.hit.files[0]
    assert row.path == str(log) and row.values["opens"] == 1
    assert row.values["syncs_flushes"] == 4000 and row.values["bytes"] == log.stat().st_size
    assert f.cost_s == pytest.approx(float(model.layers.posix.slowest_rank_time_s.max()))
    assert "fflush/fsync" in f.fix.text
    # with the default threshold (60 s) a fast disk's 2,000 fsyncs are no finding
    assert not any(g.rule.id == "tiny-file-slow" for g in diagnose(model, Thresholds()).findings)


@pytest.mark.parametrize("mode", ["fill", "nofill"])
def test_hdf5_fill_values_written_before_the_data(tmp_path: Path, mode: str) -> None:
    """progs/h5_fill.c under iolab profile (Open MPI's parallel HDF5, 4 ranks, 4 MiB each):
    with a fill value written at allocation the file receives 32 MiB for 16 MiB of data; the
    model links the H5D record ('<file>:/data') to the file, so fill-mode compares that
    file's own dataset bytes with its POSIX bytes. H5D_FILL_TIME_NEVER: no finding."""
    inc = Path("/usr/include/hdf5/openmpi")
    lib = Path("/usr/lib/x86_64-linux-gnu/hdf5/openmpi")
    if shutil.which("mpicc.openmpi") is None or not inc.is_dir():
        pytest.skip("parallel HDF5 for Open MPI is not installed")
    if not (LIBDIR / "libiolab-trace-hdf5.so").is_file():
        pytest.skip("libiolab-trace-hdf5.so is not built (run ./setup)")
    exe = tmp_path / "h5_fill"
    subprocess.run(["mpicc.openmpi", "-O2", f"-I{inc}", "-o", str(exe),
                    str(PROG.parent / "h5_fill.c"), f"-L{lib}", "-lhdf5"], check=True)
    data = tmp_path / "fill.h5"
    rep = _profile([str(exe), str(data), str(1 << 19), mode], tmp_path / "p")
    L = rep.model.layers
    i = rep.model.files.paths.index(str(data))
    assert L.library[i] == "HDF5" and L.library_bytes_written[i] == 16 * MiB
    fill = [f for f in rep.findings if f.rule.id == "fill-mode"]
    if mode == "fill":
        assert L.posix.bytes_written[i] >= 32 * MiB
        assert fill and fill[0].hit.files[0].values["data_bytes"] == 16 * MiB
        assert "of datasets" in fill[0].hit.summary
        assert "H5Pset_fill_time" in fill[0].fix.text
    else:
        assert L.posix.bytes_written[i] < 17 * MiB and not fill


def test_late_rank_before_the_close_is_waiting_not_a_slow_close(tmp_path: Path) -> None:
    """progs/mpi_patterns.c lateclose (Open MPI): rank 0 sleeps 2 s before the collective
    MPI_File_close. The other ranks' 2 s inside the close are waiting for it: reported once,
    as MPI-IO waiting with the close named, not also as a slow close (a flush)."""
    exe = _compile("mpicc.openmpi", tmp_path / "mpi_patterns")
    rep = _profile([str(exe), str(tmp_path / "lc.dat"), "lateclose", "2000", str(1 << 20)],
                   tmp_path / "p")
    first = rep.findings[0]
    assert first.rule.id == "mpiio-time-skew"
    assert first.hit.values["mpiio_close_s"] >= 1.9
    assert "in MPI_File_close" in first.hit.summary
    assert not any(f.rule.id == "slow-close" for f in rep.findings)


def test_everyday_habits_under_iolab_profile(tmp_path: Path) -> None:
    """progs/posix_habits.c (MPICH, 4 ranks) under iolab profile, the same habits as the
    Darshan 3.5 logs of darshan35/: open-append-close logging (frequent-open-close, nothing
    for a buffer to merge), uneven per-rank files (per-rank-imbalance, the busiest rank
    above the mean), a namelist every rank reads (small-shared-input)."""
    if shutil.which("mpicc.mpich") is None:
        pytest.skip("mpicc.mpich is not installed")
    if not (LIBDIR / "libiolab-trace.so").is_file():
        pytest.skip("libiolab-trace.so is not built (run ./setup)")
    exe = tmp_path / "posix_habits"
    subprocess.run(["mpicc.mpich", "-O2", "-Wall", "-o", str(exe),
                    str(PROG.parent / "posix_habits.c")], check=True)
    data = tmp_path / "d"
    data.mkdir()
    rep = _profile([str(exe), str(data), "logreopen", "2000", "0"], tmp_path / "reopen",
                   mpi="mpich")
    f = next(f for f in rep.findings if f.rule.id == "frequent-open-close")
    assert f.hit.values["opens"] == 4 * 2000 and f.hit.values["max_opens_per_rank"] == 2000
    assert not any(g.rule.id == "small-serial-io" for g in rep.findings)
    assert _sorted_by_cost(rep)

    rep = _profile([str(exe), str(data), "perrank", "4", str(MiB)], tmp_path / "perrank",
                   mpi="mpich")
    f = next(f for f in rep.findings if f.rule.id == "per-rank-imbalance")
    v = f.hit.values
    assert (v["max_rank"], v["max_bytes"], v["min_rank"], v["min_bytes"]) == (
        3, 16 * MiB, 0, 4 * MiB)
    L = rep.model.layers
    per_rank = [float(L.posix.time_total_s[rep.model.files.paths.index(str(data / f"part.{r}"))])
                for r in range(4)]
    assert f.cost_s == pytest.approx(max(per_rank) - sum(per_rank) / 4, abs=1e-6)

    (data / "config.nml").write_text(" param = 1.5\n" * 100)
    rep = _profile([str(exe), str(data), "config", "64", "1024"], tmp_path / "config",
                   mpi="mpich")
    f = next(f for f in rep.findings if f.rule.id == "small-shared-input")
    assert f.hit.values["max_ranks"] == 4
    assert f.hit.values["bytes_read"] == 4 * (data / "config.nml").stat().st_size
