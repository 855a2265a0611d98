"""--hdf5.coll-metadata: H5Pset_all_coll_metadata_ops + H5Pset_coll_metadata_write.

What changes is seen at the MPI-IO layer below HDF5, counted by iolab's own tracer: without
the option rank 0 writes the file's metadata with independent calls; with it the metadata
goes out in collective writes by every rank, and the data and the bytes stay the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import Engine, run_engine

from iolab.sources.profile import load

ROOT = Path(__file__).resolve().parents[2]
TRACER_DIR = ROOT / "build" / "default" / "interpose" / "trace"
BLOCK, XFER = 1 << 20, 64 << 10


def mpiio_counters(engine: Engine, tmp_path: Path, *extra: str) -> dict[str, int]:
    out = tmp_path / ("coll" if extra else "indep")
    data = tmp_path / "x.h5"
    cmd = [sys.executable, "-m", "iolab", "profile", "-q", "-o", str(out), "--name", "job",
           "--np", "2", "--", str(engine.binary), "--api", "hdf5", "--layout", "segmented",
           "--transfer", str(XFER), "--block", str(BLOCK), "--write", "--quiet", "--json",
           os.devnull, "--path", str(data), *extra]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                         env={**os.environ, "IOLAB_LIBDIR": str(TRACER_DIR)})
    assert run.returncode == 0, run.stderr
    (rec,) = [r for r in load(out / "job.iolab").rows()
              if r.module == "MPI-IO" and r.path == str(data)]
    return dict(rec.counters)


def test_collective_metadata_writes_reach_mpi_io_as_collective_calls(
        engine: Engine, tmp_path: Path) -> None:
    if "hdf5" not in engine.apis:
        pytest.skip(f"hdf5 is not built into {engine.binary.name}")
    if not (TRACER_DIR / "libiolab-trace.so").is_file():
        pytest.skip("the tracer is not built (./setup builds build/default)")
    data_calls = 2 * BLOCK // XFER
    plain = mpiio_counters(engine, tmp_path)
    coll = mpiio_counters(engine, tmp_path, "--hdf5.coll-metadata")
    assert plain["MPIIO_COLL_WRITES"] == 0
    assert plain["MPIIO_INDEP_WRITES"] > data_calls  # the data, then rank 0's metadata
    assert coll["MPIIO_COLL_WRITES"] >= 2  # at least one collective metadata write a rank
    assert coll["MPIIO_INDEP_WRITES"] == data_calls  # the data only
    assert coll["MPIIO_BYTES_WRITTEN"] == plain["MPIIO_BYTES_WRITTEN"]


def test_collective_metadata_needs_the_mpi_io_driver(engine: Engine, tmp_path: Path) -> None:
    if "hdf5" not in engine.apis:
        pytest.skip(f"hdf5 is not built into {engine.binary.name}")
    r = run_engine(engine, 1, ["--api", "hdf5", "--hdf5.direct", "--hdf5.coll-metadata",
                               "--layout", "fpp", "--write", "--quiet", "--path",
                               str(tmp_path / "d.h5")], tmp_path)
    assert r.rc == 2  # bad input: one line, exit 2
    assert "--hdf5.coll-metadata needs HDF5's MPI-IO driver" in r.stderr
