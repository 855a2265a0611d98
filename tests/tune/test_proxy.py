"""The proxy of ``iolab tune --from-log`` at the program's layer (issue #32 item 2): HDF5 /
PnetCDF call sizes and selections from the library's own records, collective, independent or
non-blocking as recorded, a read proxy that writes its input first; every log of the corpora
gets a proxy or a one-line reason, and a sample of the proxies runs for real."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import corpus
import pytest

from iolab.bench.subrun import check_args
from iolab.model.job import build_model
from iolab.sources import load_source
from iolab.tune.proxy import Proxy, build_proxy, proxy_or_reason

HERE = Path(__file__).resolve().parent
D35 = HERE.parent / "diagnose" / "darshan35"  # Darshan 3.5 logs of real programs (README)
GEN = corpus.GENERATED_DIR
ALL_LOGS = corpus.REAL_LOGS + corpus.GENERATED_LOGS + sorted(D35.glob("*.darshan"))


def proxy(path: Path, **kw: int) -> Proxy:
    return build_proxy(build_model([load_source(path)]), **kw)


@pytest.mark.skipif(not (corpus.REAL_LOGS or corpus.GENERATED_LOGS),
                    reason=corpus.REAL_MISSING)
def test_every_corpus_log_gets_a_proxy_or_a_reason() -> None:
    """expected: each log of the corpora a proxy bench accepts, or one line saying why not /
    was: a traceback or a proxy nobody checked."""
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    reasons = {}
    for path in ALL_LOGS:
        model = build_model([load_source(path)])
        got = proxy_or_reason(model, 4, 1 << 20)
        if isinstance(got, str):
            assert got and "\n" not in got, path
            moved = model.layers.posix.bytes + model.layers.mpiio.bytes + model.layers.stdio.bytes
            assert not (moved[model.files.is_app()] > 0).any(), (path, got)
            reasons[path.name] = got
            continue
        check_args(got.workload.argv())  # bench's own parsers and the engine's accept it
        assert got.description and got.target in ("write", "read"), path
        assert got.api in ("hdf5", "pnetcdf", "mpiio", "posix")
    assert len(reasons) < len(ALL_LOGS) / 10, reasons


@pytest.mark.parametrize("log, call", [
    (GEN / "hdf5_4ranks_collective_hyperslab.darshan", 8 << 20),  # H5D: 32 calls of 8 MiB
    (D35 / "h5nofill-openmpi.darshan", 4 << 20),
])
def test_hdf5_proxy_has_the_programs_call_size(log: Path, call: int) -> None:
    """expected: an HDF5 proxy whose transfer is the H5Dwrite size (H5D records), collective
    as H5D_USE_MPIIO_COLLECTIVE says / was: the MPI-IO or POSIX request size."""
    if not log.exists():
        pytest.skip(corpus.GENERATED_MISSING)
    p = proxy(log, max_rank_bytes=1 << 20)
    assert p.api == "hdf5" and int(p.workload.engine["transfer"]) == call
    assert "collective" in p.workload.engine and "file-view" not in p.workload.engine
    assert any("H5D_WRITES" in line for line in p.description)


def test_pnetcdf_nonblocking_proxy_from_the_variable_records() -> None:
    """expected: the PnetCDF iput program's proxy: 2048-byte calls (256 doubles, from
    PNETCDF_VAR), non-blocking, completed collectively (PNETCDF_FILE_COLL_WAITS) / was an
    MPI-IO size and blocking calls."""
    p = proxy(D35 / "pnciput-openmpi.darshan")
    assert p.api == "pnetcdf" and p.workload.engine["transfer"] == "2048"
    assert "pnetcdf.nonblocking" in p.workload.engine and "collective" in p.workload.engine
    blocking = proxy(D35 / "pncput-openmpi.darshan")
    assert "pnetcdf.nonblocking" not in blocking.workload.engine


def test_pnetcdf_box_becomes_a_subarray_proxy() -> None:
    """expected: a 256x1024 vara box per call gives the subarray layout with that box per
    rank / was a 1-D transfer of the MPI-IO size."""
    log = GEN / "pnetcdf_4ranks_coll_and_indep_vara.darshan"
    if not log.exists():
        pytest.skip(corpus.GENERATED_MISSING)
    p = proxy(log)
    assert p.workload.engine["layout"] == "subarray"
    assert p.workload.engine["grid"] == "1024x1024" and p.workload.engine["pgrid"] == "4x1"


def test_read_log_gets_a_read_proxy_that_writes_its_input() -> None:
    """expected: a read-dominated log's proxy runs the write phase first (no -r alone), evicts
    and is scored on its reads / was '-r' alone: a read of a file nobody wrote."""
    p = proxy(D35 / "rank0read-mpich.darshan", max_rank_bytes=1 << 20)
    assert p.target == "read"
    engine = p.workload.engine
    assert "read" not in engine and "write" not in engine and "evict" in engine


def _run(args: list[str], cwd: Path) -> dict:  # type: ignore[type-arg]
    out = subprocess.run([sys.executable, "-m", "iolab", "bench", *args, "--db",
                          str(cwd / "r.db"), "--json"], cwd=cwd, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, (args, out.stderr[-2000:])
    return json.loads(out.stdout)


@pytest.mark.parametrize("log", [
    D35 / "pnciput-openmpi.darshan",  # PnetCDF non-blocking, collective waits
    D35 / "h5nofill-openmpi.darshan",  # HDF5 collective, contiguous
    D35 / "rank0read-mpich.darshan",  # a read proxy
    D35 / "smallindep-mpich.darshan",  # MPI-IO independent
    GEN / "pnetcdf_4ranks_coll_and_indep_vara.darshan",  # subarray
])
def test_sample_proxies_run_for_real(log: Path, tmp_path: Path) -> None:
    """expected: the proxy's options run on the engine (tiny sizes, 2 ranks) and measure the
    phase the tune scores / was a proxy whose options nobody ran (a read proxy failed)."""
    if not log.exists():
        pytest.skip(corpus.GENERATED_MISSING)
    p = proxy(log, max_ranks=2, max_rank_bytes=64 << 10)
    doc = _run(p.workload.argv(), tmp_path)
    rows = {row["op"]: row for row in doc["summary"]}
    assert rows[p.target]["status"] == "ok" and rows[p.target]["bw_median_bytes_per_s"] > 0
    assert doc["runs"][0]["engine"]["config"]["api"] == p.api


def test_tune_from_a_read_log_runs(tmp_path: Path) -> None:
    """expected: `iolab tune --from-log` on a read-dominated log tunes the read of a file its
    proxy wrote first / was every trial failing (the proxy read a file nobody wrote)."""
    out = subprocess.run(
        [sys.executable, "-m", "iolab", "tune", "--db", str(tmp_path / "r.db"), "--from-log",
         str(D35 / "rank0read-mpich.darshan"), "--proxy-ranks", "2", "--proxy-bytes", "256k",
         "--trials", "2", "--confirm", "1", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout)
    assert doc["objective"]["target"] == "read"
    assert "a read proxy" in out.stderr
    trials = doc.get("trials") or []
    assert trials and all(t.get("status") == "ok" for t in trials), trials


def test_strided_hdf5_program_round_trips_to_its_own_pattern(tmp_path: Path) -> None:
    """expected: the proxy of a profiled program writing one strided H5Dwrite of 4096 pieces
    of 64 B per rank is that same workload (strided hyperslab, 64-byte pieces, 256 KiB per
    call) / was 64-byte independent transfers (the POSIX request size) with no selection."""
    bench = Path(sys.executable).parent / "iolab-bench"
    if not bench.exists():
        pytest.skip("the C engine is not built (./setup)")
    out = subprocess.run(
        [sys.executable, "-m", "iolab", "profile", "-o", str(tmp_path / "prof"), "--np", "4",
         "-q", "--", str(bench), "--api", "hdf5", "--layout", "strided", "--file-view",
         "--transfer", "64", "--block", "262144", "--write"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (log,) = (tmp_path / "prof").glob("*.iolab")
    p = proxy(log)
    assert p.api == "hdf5" and "file-view" in p.workload.engine and not p.workload.collective
    assert p.workload.engine["layout"] == "strided"
    assert p.workload.engine["transfer"] == "64" and p.workload.engine["block"] == "262144"
    assert any("strided selection of 4096 pieces of 64 B" in d for d in p.description)
