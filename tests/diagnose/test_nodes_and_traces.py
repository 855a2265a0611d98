"""The rank -> node map (iolab profiles, DXT host names) makes the node rules judge per node;
an iolab profile made with ``--np 2 --trace`` gives the map and a trace the rules use.

Expected / was: "one I/O stream per node" was judged per job (one rank moving >= 90% of the
job's bytes), so two nodes each writing through one rank (50% each) passed unnoticed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.model.raw import SHARED_RANK, RawJob, RawRecord

MiB, GiB = 1 << 20, 1 << 30
ROOT = Path(__file__).resolve().parents[2]


def _write(path: str, rank: int, rid: int, nbytes: int) -> RawRecord:
    n = max(nbytes // MiB, 1)
    return RawRecord(module="POSIX", rank=rank, record_id=rid, path=path, counters={
        "POSIX_OPENS": 1, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": nbytes,
        "POSIX_MAX_BYTE_WRITTEN": nbytes - 1, "POSIX_CONSEC_WRITES": n - 1,
        "POSIX_SEQ_WRITES": n - 1, "POSIX_SIZE_WRITE_1M_4M": n}, fcounters={
        "POSIX_F_WRITE_TIME": 1.0})


def _job(records: list[RawRecord], nprocs: int, **kw: Any) -> RawJob:
    return RawJob.build(source="iolab-profile", source_paths=["synthetic"], nprocs=nprocs,
                        start_time=0.0, end_time=100.0, run_time_s=100.0, records=records, **kw)


def _found(raw: RawJob, **model_kw: Any) -> dict[str, Any]:
    rep = diagnose(build_model([raw], **model_kw), Thresholds())
    return {f.rule.id: f for f in rep.findings}


def _two_nodes_one_writer_each() -> tuple[list[RawRecord], dict[int, str]]:
    # 16 ranks on 2 nodes; rank 0 and rank 8 each write 2 GiB, the others 1 MiB each
    recs = [_write(f"/s/out{r}.dat", r, 100 + r, (2 * GiB) if r in (0, 8) else MiB)
            for r in range(16)]
    return recs, {r: ("nodeA" if r < 8 else "nodeB") for r in range(16)}


def test_one_stream_per_node_judged_per_node() -> None:
    recs, hosts = _two_nodes_one_writer_each()
    f = _found(_job(recs, 16, rank_hosts=hosts))["io-stream-per-node"]
    v = f.hit.values
    assert v["judged"] == "per node" and v["nodes"] == 2 and v["single_stream_nodes"] == 2
    assert v["max_ranks_per_node"] == 8
    rows = {e.path: e.values for e in f.hit.files}
    assert rows["nodeA"]["rank"] == 0 and rows["nodeB"]["rank"] == 8
    assert rows["nodeA"]["ranks_doing_io"] == 1 and rows["nodeA"]["ranks_on_node"] == 8
    assert rows["nodeA"]["bytes"] == 2 * GiB + 7 * MiB
    # Without the map nothing is judged per node, and no rank has 90% of the job's bytes.
    got = _found(_job(recs, 16))
    assert "io-stream-per-node" not in got and "single-io-stream" not in got


def test_one_rank_per_node_needs_the_core_count() -> None:
    recs = [_write(f"/s/o{r}.dat", r, 200 + r, 2 * GiB) for r in range(2)]
    hosts = {0: "n1", 1: "n2"}
    assert "io-stream-per-node" not in _found(_job(recs, 2, rank_hosts=hosts))
    f = _found(_job(recs, 2, rank_hosts=hosts), cores_per_node=64)["io-stream-per-node"]
    assert f.hit.values["cores_per_node"] == 64 and f.hit.values["single_stream_nodes"] == 2
    assert "of 64 cores" in f.hit.summary


def test_many_streams_per_node_pass() -> None:
    recs = [_write(f"/s/p{r}.dat", r, 300 + r, 512 * MiB) for r in range(16)]
    hosts = {r: ("nodeA" if r < 8 else "nodeB") for r in range(16)}
    assert "io-stream-per-node" not in _found(_job(recs, 16, rank_hosts=hosts))


def test_aggregators_use_the_nodes_of_the_map() -> None:
    rec = RawRecord(module="MPI-IO", rank=SHARED_RANK, record_id=71, path="/s/c.dat",
                    counters={"MPIIO_COLL_OPENS": 64, "MPIIO_COLL_WRITES": 640,
                              "MPIIO_BYTES_WRITTEN": 640 * 4 * MiB})
    hosts = {r: f"n{r // 32}" for r in range(64)}
    model = build_model([_job([rec], 64, rank_hosts=hosts)])
    assert model.job.nodes == 2  # no --nodes: counted from the map
    f = {x.rule.id: x for x in diagnose(model, Thresholds()).findings}["aggregators-per-node"]
    assert f.hit.values["nodes"] == 2 and f.hit.values["ranks_per_node"] == 32
    # a map of only some ranks does not count the nodes (it would undercount them)
    partial = build_model([_job([rec], 64, rank_hosts={0: "n0", 1: "n0"})])
    assert partial.job.nodes is None


def test_merged_logs_shift_the_map() -> None:
    a = _job([_write("/s/a.dat", 0, 1, MiB)], 2, rank_hosts={0: "x", 1: "y"})
    b = _job([_write("/s/b.dat", 0, 2, MiB)], 2, rank_hosts={0: "z", 1: "z"})
    m = build_model([a, b])
    assert m.job.rank_hosts == {0: "x", 1: "y", 2: "z", 3: "z"} and m.job.nodes == 3


LIBDIR = ROOT / "build" / "default" / "interpose" / "trace"


@pytest.fixture(scope="module")
def mpi_strided(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/profile/progs/mpi_strided.c built with mpicc (the tracer must be built too)."""
    if not (LIBDIR / "libiolab-trace.so").is_file():
        pytest.skip("libiolab-trace.so is not built (run ./setup)")
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc is not installed")
    exe = tmp_path_factory.mktemp("np2") / "mpi_strided"
    subprocess.run(["mpicc", "-O2", "-o", str(exe),
                    str(ROOT / "tests" / "profile" / "progs" / "mpi_strided.c")], check=True)
    return exe


def _profile_np2(exe: Path, out: Path, **env: str) -> Path:
    """`iolab profile --np 2 --trace`: 2 ranks, 1000 independent 4 KiB writes each, rank r's
    i-th block at (2i + r) * 4 KiB."""
    run = subprocess.run(
        [sys.executable, "-m", "iolab", "profile", "-q", "-o", str(out), "--name", "job",
         "--np", "2", "--trace", "--", str(exe), str(out.parent / "s.dat"), "1000", "4096",
         "indep"],
        capture_output=True, text=True, env={**os.environ, "IOLAB_LIBDIR": str(LIBDIR), **env},
        timeout=180)
    assert run.returncode == 0, run.stderr
    return out / "job.iolab"


@pytest.fixture(scope="module")
def np2_profile(mpi_strided: Path) -> Path:
    return _profile_np2(mpi_strided, mpi_strided.parent / "p")


def test_profile_np2_gives_the_rank_host_map_and_a_used_trace(np2_profile: Path) -> None:
    from iolab.sources import load_source

    raw = load_source(np2_profile)
    host = socket.gethostname()
    assert raw.rank_hosts == {0: host, 1: host}
    model = build_model([raw])
    assert model.job.nodes == 1 and model.job.rank_hosts == {0: host, 1: host}
    tm = model.metrics.trace
    assert tm is not None and tm.exact["write"]
    w = tm.access["write"]
    # per rank: 999 forward jumps of 4 KiB (the other rank's block): strided, none random
    assert (w.ops, w.strided, w.random, w.consecutive) == (2000, 1998, 0, 0)
    assert tm.sizes["write"].common == [(4096, 2000)]
    (busy,) = [b for b in tm.busy if model.files.paths[b.file_index].endswith("/s.dat")]
    assert busy.module == "DXT_MPIIO" and busy.ranks == 2 and busy.covered
    segs = [s for s in raw.segments() if s.module == "DXT_MPIIO" and s.path.endswith("/s.dat")]
    by_rank = {r: sum(s.end_s - s.start_s for s in segs if s.rank == r) for r in (0, 1)}
    assert busy.slowest_s == pytest.approx(max(by_rank.values()))
    assert busy.fastest_s == pytest.approx(min(by_rank.values()))
    assert tm.timeline.max_concurrency in (1, 2) and tm.timeline.n_phases >= 1


def test_profile_np2_diagnose_command(np2_profile: Path) -> None:
    import json

    run = subprocess.run([sys.executable, "-m", "iolab", "diagnose", "--json", "-",
                          str(np2_profile)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["job"]["nodes"] == 1
    assert doc["job"]["ranks_per_host"] == {socket.gethostname(): 2}
    assert doc["summary"]["timeline"]["operations_by_module"]["DXT_MPIIO"] >= 2000
    ids = {(f["rule_id"], f["direction"]) for f in doc["findings"]}
    assert ("mpiio-independent", "write") in ids and ("random-access", "write") not in ids


def test_profile_with_a_cut_trace_is_partial(mpi_strided: Path) -> None:
    from iolab.diagnose.report import to_dict
    from iolab.sources import load_source

    job = _profile_np2(mpi_strided, mpi_strided.parent / "cut", IOLAB_TRACE_SEGMENTS="300")
    rep = diagnose(build_model([load_source(job)]), Thresholds())
    tm = rep.model.metrics.trace
    assert tm is not None and not tm.complete and not tm.exact["write"]
    assert any("incomplete in the profile" in r for r in tm.partial_reasons)
    assert any("POSIX writes of the counters are not in the trace" in r
               for r in tm.partial_reasons)
    tl = to_dict(rep)["summary"]["timeline"]
    assert tl["complete"] is False and tl["operations"] <= 2 * 300
    small = next(f for f in rep.findings if f.rule.id == "small-requests")
    assert small.hit.values["sizes_from"] == "counters"


def test_one_rank_writing_for_a_job_of_two_nodes_is_the_jobs_lone_stream() -> None:
    """Expected: rank 0 writing all of a 16-rank, 2-node job's bytes is the job's lone
    stream (single-io-stream, waste: all 15 other ranks wait), not "1 of 2 nodes does its I/O
    through one process" (was: the per-node experiment, from 1 GiB only)."""
    hosts = {r: ("nodeA" if r < 8 else "nodeB") for r in range(16)}
    recs = [_write("/s/all.dat", 0, 400, 64 * MiB)]
    got = _found(_job(recs, 16, rank_hosts=hosts))
    assert "io-stream-per-node" not in got
    f = got["single-io-stream"]
    assert f.hit.values["rank"] == 0 and f.hit.values["judged"] == "per job"
    assert f.cost_s == pytest.approx(1.0 * (1 - 1 / 16))  # _write: 1 s of writes
