"""The job model: file categories, merging logs, a job rebuilt row by row, same metrics."""

from __future__ import annotations

import dataclasses

import corpus
import numpy as np
import pytest

from iolab.model.files import APP, RUNTIME, STREAM, SYSTEM, categorize
from iolab.model.job import build_model
from iolab.model.raw import RawJob

GENERATED = corpus.GENERATED_DIR
darshan = pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
from iolab.sources.darshan import load_darshan_log  # noqa: E402


@pytest.mark.parametrize("path,cat", [
    ("/tmp/ompi.vm.0/pid.25050/1/shared_indep.dat_cid-0-25054.sm", RUNTIME),
    ("/tmp/dtests/shared_indep.dat.locktest.3", RUNTIME),
    ("/dev/shm/vader_segment.vm.1", RUNTIME),
    ("<STDOUT>", STREAM),
    ("/proc/self/maps", SYSTEM),
    ("/usr/lib/x86_64-linux-gnu/libm.so.6", SYSTEM),
    ("/home/u/venv/lib/python3.11/site-packages/numpy/__init__.py", SYSTEM),
    ("/scratch/run/output_0001.h5", APP),
    ("/tmp/dtests/shared_indep.dat", APP),
])
def test_categories(path: str, cat: int) -> None:
    assert categorize(path) == cat


def _rebuilt_from_rows(raw: RawJob) -> RawJob:
    """The same job rebuilt record by record (:meth:`RawJob.build`, the row-by-row builder
    of tests and of the profile loader) from its rows (:meth:`RawJob.rows`)."""
    fields = {f.name: getattr(raw, f.name) for f in dataclasses.fields(raw)
              if f.name not in ("tables", "trace_table")}
    return RawJob.build(records=raw.rows(), **fields)


@corpus.needs_generated_logs
@pytest.mark.parametrize("name", ["mpiio_4ranks_strided4K_indep.darshan",
                                  "posix_mixed_rw_random_reads.darshan",
                                  "pnetcdf_4ranks_coll_and_indep_vara.darshan"])
def test_rows_rebuilt_into_tables_give_the_same_metrics(name: str) -> None:
    raw = load_darshan_log(GENERATED / name)
    a = build_model([raw]).metrics
    b = build_model([_rebuilt_from_rows(raw)]).metrics
    for f in dataclasses.fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if isinstance(va, np.ndarray):
            np.testing.assert_allclose(va, vb)
        else:
            assert va == vb, f.name


@corpus.needs_generated_logs
def test_merge_renumbers_ranks_and_spans_reduced_records() -> None:
    a = load_darshan_log(GENERATED / "mpiio_4ranks_strided4K_indep.darshan")
    b = load_darshan_log(GENERATED / "mpiio_4ranks_strided4K_coll.darshan")
    m = build_model([a, b])
    assert m.job.nprocs == 8 and m.job.n_logs == 2
    px = m.mods["POSIX"]
    assert set(px.ranks[px.ranks >= 0].tolist()) == set(range(8))
    shared = px.ranks < 0
    assert sorted(set(px.span_lo[shared].tolist())) == [0, 4]
    assert set(px.span_n[shared].tolist()) == {4}
    assert m.metrics.rank_io_time_s.shape == (8,)
    # two shared files of 256 MiB each (shared_indep.dat, shared_coll.dat)
    app = [p for p, c in zip(m.files.paths, m.files.category) if c == APP]
    assert len(app) == 2 and m.metrics.bytes_by_dir["write"] == 2 * 268435456


@corpus.needs_generated_logs
def test_exact_1mib_requests_are_not_small() -> None:
    m = build_model([load_darshan_log(GENERATED / "posix_write_1GiB_x_1MiB.darshan")]).metrics
    h = m.ifaces["POSIX"].hist
    assert h["write"][4] == 1024 and h["write_exact_1mib"] == [1024]


@corpus.needs_generated_logs
def test_random_estimate_from_backward_jumps() -> None:
    a = build_model([load_darshan_log(GENERATED / "posix_mixed_rw_random_reads.darshan")])
    r = a.metrics.access["read"]
    assert (r.ops, r.seq, r.consec, r.backward, r.random_est) == (12000, 7039, 0, 4960, 9920)


@corpus.needs_real_logs
@corpus.needs_generated_logs
def test_rereads_of_the_same_offset_are_not_random() -> None:
    """Expected / was: 0 random of 1,000,000 reads of byte 0 / 1,000,000 random (every read
    after the first counted as a backward jump)."""
    log = corpus.REAL_LOGS_DIR / "partial_data_dxt" / "partial_data_dxt.darshan"
    r = build_model([load_darshan_log(log)]).metrics.access["read"]
    assert (r.ops, r.seq, r.consec) == (1_000_000, 0, 0)
    assert r.random_est == 0 and r.rereads == 1_000_000


def test_profile_rank_hosts_number_ranks_like_the_loader() -> None:
    from iolab.sources.profile import to_raw_job
    from iolab.sources.profile_format import Part, ProfileData

    def rank_hosts(headers: list[dict[str, object]]) -> dict[int, str]:
        return to_raw_job(ProfileData({}, [Part(h) for h in headers], [])).rank_hosts

    mpi = [{"mpi": True, "rank": 1, "nprocs": 2, "host": "b"},
           {"mpi": True, "rank": 0, "nprocs": 2, "host": "a"}]
    assert rank_hosts(mpi) == {0: "a", 1: "b"}
    # non-MPI processes (fork/exec): ranks by start time, then pid
    forked = [{"start_unix": 5.0, "pid": 9, "host": "h2"}, {"start_unix": 1.0, "pid": 7,
                                                             "host": "h1"},
              {"start_unix": 5.0, "pid": 3, "host": "h3"}, {"start_unix": 0.5, "pid": 1}]
    assert rank_hosts(forked) == {1: "h1", 2: "h3", 3: "h2"}


def test_categorize_all_is_categorize_on_every_name() -> None:
    """expected categorize_all(names) == [categorize(n) for n in names], a name at a time;
    was one regex call per name (a 64,000-file log: 0.3 s of CPU), now each word looked for
    once over the joined names: names with words at their ends, several words, newlines,
    streams, empty names and names no word touches must all come out as before."""
    from iolab.model.files import categorize_all

    words = ["/ompi.", ".so", ".so.1", ".py", "/usr/", "<", ">", "\n", "/dev/shm/", "x",
             "/lib", "_cid-1-2.sm", ".locktest.3", "/opt/", "/", "/proc/", "-packages/",
             "/var/spool/slurm", "dat"]
    rng = np.random.default_rng(27)
    names = ["", "<STDOUT>", "/a/b.dat", "x\n/ompi.y", "/tmp/f.py\n", "<x"]
    names += ["".join(rng.choice(words, size=rng.integers(0, 6))) for _ in range(4000)]
    assert categorize_all(names) == [categorize(n) for n in names]
    # the joined names hold no word at all: every name the application's but streams
    plain = [f"/scratch/run/d{i:03d}/file_{i:06d}.dat" for i in range(500)] + ["<STDIN>"]
    assert categorize_all(plain) == [categorize(n) for n in plain]
    assert categorize_all([]) == []
