"""``iolab triage`` on real Dask: a scheduler and workers started as separate processes
(``dask scheduler``, ``dask worker``), and a LocalCluster of worker processes. The store and
the report are the process pool's, byte for byte; a worker killed mid-run (SIGKILL) loses
nothing; a cluster lost mid-run leaves a store the next run completes."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dask_helpers import env_with_iolab, report, start_cluster, stored_rows, triage
from logfarm import Centre, make_centre

from iolab.triage import store

pytest.importorskip("distributed", reason="dask[distributed] is not installed (pip install -e .)")


@pytest.fixture(scope="module")
def centre(tmp_path_factory: pytest.TempPathFactory) -> Centre:
    """The generated centre plus a copy of one log under another name, found first: whoever
    reads it, the copy is the one stored (the report names its path)."""
    c = make_centre(tmp_path_factory.mktemp("centre") / "logs", scale=2)
    shutil.copy(c.logs[-1], c.root / "a-copy.darshan")
    return c


@pytest.fixture(scope="module")
def by_pool(centre: Centre, tmp_path_factory: pytest.TempPathFactory) -> dict:
    where = tmp_path_factory.mktemp("pool") / "store"
    p = triage(str(centre.root), "--store", str(where), "-j", "1", "-q")
    assert p.returncode == 0, p.stderr
    return {"report": report(where), "rows": stored_rows(where), "store": where}


def _same_as_pool(where: Path, by_pool: dict) -> None:
    json_text, csv_text = report(where)
    assert json_text == by_pool["report"][0]
    assert csv_text == by_pool["report"][1]
    assert stored_rows(where) == by_pool["rows"]


def test_scheduler_and_worker_processes_give_the_pool_s_store_and_report(
        centre: Centre, by_pool: dict, tmp_path: Path) -> None:
    """Expected: --dask ADDRESS (a scheduler and 2 workers, each its own process) stores the
    same rows and prints the same JSON and CSV as -j 1; the copy of a log is the one found
    first, as in the pool."""
    cluster = start_cluster(tmp_path / "cluster", workers=2)
    try:
        where = tmp_path / "store"
        p = triage(str(centre.root), "--store", str(where), "--dask", cluster.address,
                   "--batch", "3")
        assert p.returncode == 0, p.stderr
        assert f"on Dask at {cluster.address}" in p.stderr and "1 copies of stored logs" \
            in p.stderr
        _same_as_pool(where, by_pool)
        doc = json.loads(by_pool["report"][0])
        assert doc["logs"]["read"] == len(centre.logs)
        paths = {r["source_path"] for r in stored_rows(where)["jobs"]}
        assert str(centre.root / "a-copy.darshan") in paths and str(centre.logs[-1]) not in paths
        # a second run on the cluster reads nothing: the store is incremental whoever reads
        p = triage(str(centre.root), "--store", str(where), "--dask",
                   str(cluster.scheduler_file))
        assert p.returncode == 0 and " 0 read, 0 could not be read" in p.stderr, p.stderr
    finally:
        cluster.stop()
    assert all(w.returncode is not None for w in cluster.workers)


def test_dask_local_gives_the_pool_s_store_and_report(
        centre: Centre, by_pool: dict, tmp_path: Path) -> None:
    where = tmp_path / "store"
    p = triage(str(centre.root), "--store", str(where), "--dask-local", "2", "--batch", "5")
    assert p.returncode == 0, p.stderr
    assert "on a local Dask cluster of 2 processes" in p.stderr
    _same_as_pool(where, by_pool)


def _start_clean_run(centre: Centre, where: Path) -> subprocess.Popen[str]:
    """The uninterrupted -j 1 run to compare with, started while the cluster starts (the
    cluster's start-up is mostly waiting; both are done before the run under test begins)."""
    import os

    return subprocess.Popen([sys.executable, "-m", "iolab", "triage", str(centre.root),
                             "--store", str(where), "-j", "1", "-q"],
                            env=env_with_iolab(dict(os.environ)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish_clean_run(proc: subprocess.Popen[str]) -> None:
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err


def _run_until_stored(cmd: list[str], where: Path, batches: int,
                      env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    import os

    proc = subprocess.Popen(cmd, env=env_with_iolab({**os.environ, **(env or {})}),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while len(store.files(where, "jobs")) < batches and proc.poll() is None:
        assert time.monotonic() < deadline, "no batch written in 180 s"
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before the kill: {proc.communicate()[1]}"
    return proc


def test_a_worker_killed_mid_run_loses_nothing(tmp_path: Path) -> None:
    """Expected: a worker SIGKILLed while the run reads leaves the run to finish on the other
    worker (Dask runs the lost tasks again) with the store and report of -j 1."""
    centre = make_centre(tmp_path / "logs", scale=3)
    clean = tmp_path / "clean"
    clean_run = _start_clean_run(centre, clean)
    cluster = start_cluster(tmp_path / "cluster", workers=2)
    try:
        _finish_clean_run(clean_run)
        where = tmp_path / "store"
        proc = _run_until_stored(
            [sys.executable, "-m", "iolab", "triage", str(centre.root), "--store", str(where),
             "--dask", cluster.address, "--batch", "2"], where, batches=1)
        victim = cluster.workers[0]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        assert victim.returncode == -signal.SIGKILL and cluster.workers[1].poll() is None
    finally:
        cluster.stop()
    got = report(where)
    assert got == report(clean)
    assert stored_rows(where) == stored_rows(clean)
    assert json.loads(got[0])["logs"]["stored"] == len(centre.logs) + len(centre.bad)


def test_a_cluster_lost_mid_run_leaves_a_store_the_next_run_completes(tmp_path: Path) -> None:
    """Expected: the scheduler SIGKILLed mid-run: one line saying what is stored, exit 1, no
    traceback; every job stored has its files rows (the batch in hand when the cluster went
    is written whole / was: written without its files rows); the next run (here on the pool)
    reads only the rest and the store and report are the uninterrupted run's."""
    from iolab.triage.dask_reader import TASK_LOGS

    centre = make_centre(tmp_path / "logs", scale=4)  # 43 logs: fewer than 9 tasks
    # A batch one log longer than a task: results come back a task (8 logs) at a time, so
    # when the cluster goes after k < 9 tasks, 8k mod 9 logs are in hand, never 0.
    batch = TASK_LOGS + 1
    clean = tmp_path / "clean"
    clean_run = _start_clean_run(centre, clean)
    cluster = start_cluster(tmp_path / "cluster", workers=1)
    where = tmp_path / "store"
    try:
        _finish_clean_run(clean_run)
        proc = _run_until_stored(
            [sys.executable, "-m", "iolab", "triage", str(centre.root), "--store", str(where),
             "--dask", cluster.address, "--batch", str(batch)], where, batches=1,
            env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"})  # reconnection tried
        assert cluster.scheduler is not None
        cluster.scheduler.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        cluster.stop()
    lines = err.strip().splitlines()
    assert proc.returncode == 1, err
    assert "Traceback" not in err and lines[-1].startswith("iolab triage: reading stopped")
    assert "run the same command again" in lines[-1]
    lost_run, whole = stored_rows(where), stored_rows(clean)
    stored = {j["job_key"] for j in lost_run["jobs"]}
    assert 0 < len(stored) < len(whole["jobs"]) and len(stored) % batch != 0, \
        "the batch in hand when the cluster went was not written"
    assert lost_run["files"] == [f for f in whole["files"] if f["job_key"] in stored]
    assert lost_run["findings"] == [f for f in whole["findings"] if f["job_key"] in stored]
    p = triage(str(centre.root), "--store", str(where), "-j", "1")
    assert p.returncode == 0 and " 0 already stored" not in p.stderr, p.stderr
    assert report(where) == report(clean)
    assert stored_rows(where) == whole


@pytest.mark.parametrize("args,message", [
    (["--dask", "tcp://127.0.0.1:9", "--dask-wait", "3"], "no Dask scheduler answers"),
    (["-j", "2", "--dask-local", "2"], "give one place to read logs"),
    (["--slurm-jobs", "2"], "is an option of --dask-slurm"),
    (["--dask-local", "0"], "must be at least 1"),
    (["--dask-local", "1", "--dask-config", "/no/such.yaml"], "cannot read it"),
])
def test_bad_dask_options_are_one_line_and_create_nothing(
        centre: Centre, tmp_path: Path, args: list[str], message: str) -> None:
    where = tmp_path / "store"
    p = triage(str(centre.logs[0]), "--store", str(where), *args, timeout=120)
    assert p.returncode == 2 and message in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not where.exists()


def test_the_pool_hands_results_back_in_the_order_found(centre: Centre, tmp_path: Path) -> None:
    """Expected: results in the order of the paths given (so the first found of two copies is
    the one stored, as on Dask) / was: in the order they finished, a slow log after quick
    ones."""
    from iolab.triage.scale import PoolReader

    slow = [p for p in centre.logs if "wrf.exe" in p.name][0]  # DXT of 32 ranks: read last
    quick = []
    for n in range(6):
        q = tmp_path / f"empty{n}.darshan"
        q.write_bytes(b"")
        quick.append(str(q))
    paths = [str(slow), *quick]
    got = [r.job["source_path"] for r in PoolReader(2).results(paths, frozenset())]
    assert got == paths
