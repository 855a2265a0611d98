"""iolab's multi-node paths on two emulated hosts (tests/slurm_twonode.sh): n1 and n2 are two
slurmd in their own UTS namespaces, so MPI, the engine and the tracer see two host names.

Every test runs iolab inside ``salloc -N 2`` (srun places the ranks, as on a cluster) and
checks the placement the engine or the tracer recorded, not only the exit code.
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from stored_runs import stored_runs

from iolab import launch
from iolab.errors import UsageError
from iolab.paths import engine_binary
from iolab.sources.profile import load

pytestmark = pytest.mark.multinode

KIB = 1 << 10
BLOCK = 256 * KIB
MPIS = ("default", "mpich")


@pytest.fixture(params=MPIS)
def mpi(request: pytest.FixtureRequest) -> str:
    engine_for(request.param)
    return str(request.param)


def engine_for(mpi: str) -> Path:
    try:
        return engine_binary(mpi)
    except UsageError as exc:
        pytest.skip(f"no iolab-bench for {mpi}: {exc}")


def in_allocation(env: dict[str, str], cwd: Path, argv: list[str], nodes: int = 2,
                  ppn: int | None = 2) -> subprocess.CompletedProcess[str]:
    """``argv`` inside a new ``salloc -N nodes`` (``--ntasks-per-node ppn``)."""
    alloc = ["salloc", "-N", str(nodes), "-t", "5", "-J", "iolab-multinode"]
    if ppn:
        alloc += ["--ntasks-per-node", str(ppn)]
    p = subprocess.run([*alloc, *argv], env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=150)
    assert p.returncode == 0, f"{shlex.join(argv)}:\n{p.stderr[-3000:]}"
    return p


def bench(env: dict[str, str], tmp_path: Path, mpi: str, *args: str) -> dict[str, Any]:
    """``iolab bench --nodes 2 --ppn 2`` under srun; the one stored run."""
    db = tmp_path / "r.db"
    in_allocation(env, tmp_path, [sys.executable, "-m", "iolab", "bench", "--nodes", "2",
                                  "--ppn", "2", "--mpi", mpi, "--db", str(db), *args])
    (run,) = runs(db)
    return run


def wait_for_job(env: dict[str, str], job_id: str, timeout_s: float = 150) -> str:
    """The batch job's final state (sbatch --wait polls every few seconds; this, every 0.2)."""
    deadline = time.monotonic() + timeout_s
    state = "?"
    while time.monotonic() < deadline:
        show = subprocess.run(["scontrol", "-o", "show", "job", job_id], env=env,
                              capture_output=True, text=True, timeout=30).stdout
        state = next((f.split("=", 1)[1] for f in show.split() if f.startswith("JobState=")),
                     "?")
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return state
        time.sleep(0.2)
    return f"still {state} after {timeout_s:g} s"


def runs(db: Path) -> list[dict[str, Any]]:
    return stored_runs(db)


def phase(run: dict[str, Any], op: str) -> dict[str, Any]:
    (ph,) = [p for p in run["engine_json"]["repetitions"][0]["phases"] if p["op"] == op]
    return ph


def host_of(ph: dict[str, Any]) -> dict[int, str]:
    return {int(p["rank"]): str(p["host"]) for p in ph["per_rank"]}


def test_bench_records_two_hosts_and_two_ranks_per_host(twonode_env: dict[str, str],
                                                        mpi: str, tmp_path: Path) -> None:
    run = bench(twonode_env, tmp_path, mpi, "-a", "posix", "--layout", "segmented", "-t",
                "64k", "-b", "256k", "--verify")
    doc = run["engine_json"]
    assert (run["status"], run["launcher"], run["ranks"], run["nodes"]) == ("ok", "srun", 4, 2)
    cmd = run["launch_command"]
    assert cmd[:3] == ["srun", "-n", "4"]
    assert cmd[cmd.index("-N"):cmd.index("-N") + 4] == ["-N", "2", "--ntasks-per-node", "2"]
    # the PMI of the engine's MPI library (srun --mpi=list): pmi2 for MPICH, pmix for Open MPI
    assert ("--mpi=pmi2" in cmd) == (mpi == "mpich")
    assert ("MPICH" in run["mpi_library"]) == (mpi == "mpich")
    assert doc["environment"]["hosts"] == ["n1", "n2"]
    assert doc["environment"]["ranks_per_host"] == {"n1": 2, "n2": 2}
    # srun's block placement, as each rank saw it; every byte written and read back intact
    assert host_of(phase(run, "write")) == {0: "n1", 1: "n1", 2: "n2", 3: "n2"}
    assert run["write_bytes_total"] == run["read_bytes_total"] == 4 * BLOCK
    assert doc["verify"]["errors"] == 0


def test_bench_in_a_two_node_batch_job_takes_the_allocations_ranks(
        twonode_env: dict[str, str], tmp_path: Path) -> None:
    """No --np, --nodes or --ppn: sbatch's -N 2 --ntasks-per-node 2 decide (SLURM_NTASKS);
    MPICH, whose ranks need srun --mpi=pmi2 under the cluster's PMIx default."""
    mpi = "mpich"
    engine_for(mpi)
    db = tmp_path / "r.db"
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -N 2 --ntasks-per-node 2 -t 5 -J iolab-mn\n"
                      + shlex.join([sys.executable, "-m", "iolab", "bench", "--mpi", mpi,
                                    "-a", "null", "-t", "64k", "-b", "256k", "--db", str(db)])
                      + "\n")
    out = tmp_path / "job.out"
    p = subprocess.run(launch.sbatch_command(str(script), wait=False, output=str(out)),
                       env=twonode_env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, check=True)
    state = wait_for_job(twonode_env, p.stdout.strip().split(";")[0])
    assert state == "COMPLETED", (state, out.read_text() if out.exists() else "")
    (run,) = runs(db)
    assert (run["status"], run["ranks"], run["nodes"], run["host"]) == ("ok", 4, 2, "n1")
    assert run["engine_json"]["environment"]["ranks_per_host"] == {"n1": 2, "n2": 2}


def test_reorder_reads_data_written_on_the_other_host(twonode_env: dict[str, str], mpi: str,
                                                       tmp_path: Path) -> None:
    """-C: the shift is the ranks per host, so every reader reads another host's writer."""
    run = bench(twonode_env, tmp_path, mpi, "-a", "posix", "-t", "64k", "-b", "256k",
                "--reorder", "--verify")
    doc = run["engine_json"]
    assert run["status"] == "ok" and doc["verify"]["errors"] == 0
    assert doc["config"]["reorder_shift_ranks"] == 2
    writer_host = host_of(phase(run, "write"))
    read = phase(run, "read")
    assert read["reorder_shift"] == 2 and read["bytes"] == 4 * BLOCK
    for reader, host in host_of(read).items():
        writer = (reader + read["reorder_shift"]) % 4
        assert host != writer_host[writer], (reader, writer, writer_host)
    assert set(writer_host.values()) == {"n1", "n2"}


@pytest.mark.parametrize("distribution", ["block", "cyclic"])
def test_subset_with_group_0_has_one_aggregator_per_host(twonode_env: dict[str, str],
                                                         mpi: str, distribution: str,
                                                         tmp_path: Path) -> None:
    """Expected: each host's ranks form one group, whatever the placement; was (cyclic, ranks
    n1 n2 n1 n2): groups {0, 1} and {2, 3}, both aggregators on n1, each gathering across
    hosts, and -C's reader on the same host as the writer."""
    run = bench(twonode_env, tmp_path, mpi, f"--launcher-args=--distribution={distribution}",
                "-a", "posix", "--layout", "subset", "--group", "0", "-t", "64k", "-b",
                "256k", "--reorder", "--verify")
    doc = run["engine_json"]
    assert run["status"] == "ok" and doc["verify"]["errors"] == 0
    assert doc["config"]["group_effective"] == 2 and doc["config"]["files"] == 2
    assert doc["config"]["ranks_by_host"] == (distribution == "cyclic")
    writers = host_of(phase(run, "write"))
    for op in ("write", "read"):
        ph = phase(run, op)
        hosts = host_of(ph)
        aggregators = [p["rank"] for p in ph["per_rank"] if p["ops"] > 0]
        assert sorted(hosts[a] for a in aggregators) == ["n1", "n2"], ph["per_rank"]
        # each aggregator moves its own host's two ranks' data (groups are hosts)
        assert {p["rank"]: p["bytes"] for p in ph["per_rank"] if p["ops"] > 0} == \
            dict.fromkeys(aggregators, 2 * BLOCK)
        assert sorted(hosts[a] for a in range(4)) == ["n1", "n1", "n2", "n2"]
        for a in aggregators:  # the group of aggregator a: ranks a .. a + 1
            assert hosts[a] == hosts[a + 1]
    read = phase(run, "read")  # -C: an aggregator reads the other host's group file
    for a in (p["rank"] for p in read["per_rank"] if p["ops"] > 0):
        assert writers[(a + read["reorder_shift"]) % 4] != host_of(read)[a]


@pytest.mark.parametrize(("cb_config_list", "cb_nodes", "aggregators"),
                         [("*:1", 2, 1), ("*:2", 4, 2)])
def test_romio_cb_config_list_sets_aggregators_per_host(
        twonode_env: dict[str, str], tmp_path: Path, cb_config_list: str, cb_nodes: int,
        aggregators: int) -> None:
    """ROMIO puts cb_config_list's count of aggregators on each host (read back)."""
    engine_for("mpich")
    run = bench(twonode_env, tmp_path, "mpich", "-a", "mpiio", "--layout", "segmented",
                "--collective", "--hint", f"cb_config_list={cb_config_list}", "-t", "64k",
                "-b", "256k", "--verify")
    doc = run["engine_json"]
    assert run["status"] == "ok" and doc["verify"]["errors"] == 0
    hints = doc["hints"]
    assert hints["verifiable"] and hints["ignored"] == []
    assert hints["effective"]["cb_config_list"] == cb_config_list
    assert hints["effective"]["cb_nodes"] == str(cb_nodes)
    listed = [int(r) for r in hints["effective"]["romio_aggregator_list"].split()]
    hosts = host_of(phase(run, "write"))
    assert {h: sum(hosts[r] == h for r in listed) for h in ("n1", "n2")} == \
        {"n1": aggregators, "n2": aggregators}


def test_engine_that_ran_fewer_ranks_than_launched_is_a_failed_run(
        twonode_env: dict[str, str], tmp_path: Path) -> None:
    """Expected: a failed run saying why; was: MPICH under srun's PMIx ran four one-rank jobs,
    stored as an ok run of 1 rank."""
    engine_for("mpich")
    db = tmp_path / "r.db"
    p = subprocess.run(["salloc", "-N", "2", "--ntasks-per-node", "2", "-t", "5",
                        sys.executable, "-m", "iolab", "bench", "--nodes", "2", "--ppn", "2",
                        "--mpi", "mpich", "--launcher-args=--mpi=pmix", "-a", "null", "-t",
                        "64k", "-b", "256k", "--db", str(db)],
                       env=twonode_env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=150)
    assert p.returncode == 1, p.stderr
    (run,) = runs(db)
    assert run["status"] == "failed"
    # the four one-rank jobs print four documents at once: one of them whole, or none
    assert ("4 separate one-rank jobs ran, not one 4-rank job" in run["error"]
            or "the engine printed no result" in run["error"]), run["error"]


def test_profile_of_a_two_node_job_reduces_shared_files_and_diagnose_counts_nodes(
        twonode_env: dict[str, str], mpi: str, tmp_path: Path) -> None:
    shared = tmp_path / "shared.dat"
    in_allocation(twonode_env, tmp_path, [
        sys.executable, "-m", "iolab", "profile", "--np", "4", "--mpi", mpi, "--name", "job",
        "-o", str(tmp_path), "--", str(engine_for(mpi)), "--api", "mpiio", "--layout",
        "segmented", "--collective", "--transfer", "64k", "--block", "256k", "--path",
        str(shared), "--quiet"])
    job = load(tmp_path / "job.iolab")
    assert job.nprocs == 4 and job.nodes == 2 and job.hosts == ["n1", "n2"]
    assert job.rank_hosts == {0: "n1", 1: "n1", 2: "n2", 3: "n2"}
    recs = [r for r in job.rows() if r.path == str(shared)]
    # one record per module for the file all four ranks opened, over both hosts
    assert sorted((r.module, r.rank) for r in recs) == [("MPI-IO", -1), ("POSIX", -1)]
    (mpiio,) = [r for r in recs if r.module == "MPI-IO"]
    assert mpiio.counters["MPIIO_BYTES_WRITTEN"] == 4 * BLOCK
    assert mpiio.counters["MPIIO_COLL_WRITES"] == 4 * (BLOCK // (64 * KIB))  # 4 calls a rank
    (posix,) = [r for r in recs if r.module == "POSIX"]
    assert posix.counters["POSIX_BYTES_WRITTEN"] == 4 * BLOCK
    # io-bound judged whatever the timing, for its Slurm line
    d = subprocess.run([sys.executable, "-m", "iolab", "diagnose", "--json", "-",
                        "--set", "io_bound_warn=0", "--set", "min_run_time_s=0",
                        "--emit-fixes", str(tmp_path / "fixes"), str(tmp_path / "job.iolab")],
                       capture_output=True, text=True, timeout=120)
    assert d.returncode == 0, d.stderr
    report = json.loads(d.stdout)
    assert report["job"]["nodes"] == 2 and report["job"]["nprocs"] == 4
    assert report["job"]["ranks_per_host"] == {"n1": 2, "n2": 2}
    # Expected: a node's cores shared by its 2 ranks; was: by all 4 ranks of the job
    script = (tmp_path / "fixes" / "io-bound" / "slurm.sbatch").read_text()
    for line in ("#SBATCH --ntasks=4", "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=2",
                 "PER_NODE=2", "CPUS_PER_TASK=$(( CPUS / PER_NODE ))"):
        assert line in script.splitlines(), script
    assert script.splitlines()[-1].startswith('srun -n "$NTASKS" -c "$CPUS_PER_TASK" '), script


def test_tune_trials_inside_salloc_run_across_both_hosts(twonode_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    engine_for("default")
    db = tmp_path / "t.db"
    p = in_allocation(twonode_env, tmp_path, [
        sys.executable, "-m", "iolab", "tune", "--db", str(db), "--knob", "transfer=64k,1m",
        "--trials", "3", "--confirm", "2", "--", "iolab", "bench", "-a", "null",
        "--null.delay-us", "300", "-t", "64k", "-b", "1m", "-w"], ppn=None)
    assert "Tune 1: done" in p.stdout, p.stderr
    stored = runs(db)
    assert len(stored) == 3 + 2 * 2  # search trials, then interleaved confirmation
    for run in stored:
        assert (run["status"], run["launcher"], run["ranks"], run["nodes"]) == \
            ("ok", "srun", 2, 2)
        assert run["engine_json"]["environment"]["ranks_per_host"] == {"n1": 1, "n2": 1}
    conn = sqlite3.connect(str(db))
    try:
        linked = {r[0] for r in conn.execute("SELECT run_id FROM trials")}
    finally:
        conn.close()
    assert linked == {r["id"] for r in stored}


def test_diagnosed_aggregator_fix_applied_as_written_doubles_aggregators_per_node(
        twonode_env: dict[str, str], tmp_path: Path) -> None:
    """A 2-node MPICH job with 4 ranks per node and ROMIO's default of one aggregator per
    node: diagnose says so and emits a hints file; the same workload run with that file has
    two aggregators on each node (read back from ROMIO)."""
    engine = engine_for("mpich")
    workload = ["--api", "mpiio", "--layout", "strided", "--collective", "--transfer", "64k",
                "--block", "64k"]
    in_allocation(twonode_env, tmp_path, [
        sys.executable, "-m", "iolab", "profile", "--np", "8", "--mpi", "mpich", "--name",
        "job", "-o", str(tmp_path), "--", str(engine), *workload, "--path",
        str(tmp_path / "s.dat"), "--quiet"], ppn=4)
    fixes = tmp_path / "fixes"
    d = subprocess.run([sys.executable, "-m", "iolab", "diagnose", "--json", "-",
                        "--emit-fixes", str(fixes), str(tmp_path / "job.iolab")],
                       capture_output=True, text=True, timeout=120)
    assert d.returncode == 0, d.stderr
    (found,) = [f for f in json.loads(d.stdout)["findings"]
                if f["rule_id"] == "aggregators-per-node"]
    assert found["evidence"]["nodes"] == 2 and found["evidence"]["cb_nodes"] == 2
    hints_file = fixes / "aggregators-per-node" / "romio_hints_aggregators.txt"
    hint_lines = [ln.split() for ln in hints_file.read_text().splitlines()
                  if ln.strip() and not ln.startswith("#")]  # comments say whose file it is
    assert hint_lines == [["cb_config_list", "*:2"], ["cb_nodes", "4"]]
    db = tmp_path / "r.db"
    in_allocation(twonode_env, tmp_path, [
        sys.executable, "-m", "iolab", "bench", "--nodes", "2", "--ppn", "4", "--mpi", "mpich",
        "--db", str(db), *workload, "--hints-file", str(hints_file)], ppn=4)
    (run,) = runs(db)
    hints = run["engine_json"]["hints"]
    assert run["status"] == "ok" and hints["ignored"] == []
    assert hints["effective"]["cb_nodes"] == "4"
    hosts = host_of(phase(run, "write"))
    listed = [int(r) for r in hints["effective"]["romio_aggregator_list"].split()]
    assert sorted(hosts[r] for r in listed) == ["n1", "n1", "n2", "n2"]


def test_tune_ranks_per_node_places_each_trial_as_its_value_says(
        twonode_env: dict[str, str], tmp_path: Path) -> None:
    """slurm.ranks_per_node is only worth tuning across nodes: each trial inside a 2-node
    allocation must run that many ranks on each host (2 nodes x 1 or x 2), as srun placed
    them, and the trial's stored run must say so."""
    engine_for("default")
    db = tmp_path / "t.db"
    p = in_allocation(twonode_env, tmp_path, [
        sys.executable, "-m", "iolab", "tune", "--db", str(db),
        "--knob", "slurm.ranks_per_node=1,2", "--trials", "2", "--confirm", "2", "--",
        "iolab", "bench", "-a", "null", "--null.delay-us", "300", "-t", "64k", "-b", "1m",
        "-w"], ppn=2)
    assert "Tune 1: done" in p.stdout, p.stderr
    by_id = {r["id"]: r for r in runs(db)}
    conn = sqlite3.connect(str(db))
    try:
        trials = conn.execute("SELECT params, run_id, status FROM trials").fetchall()
        errors = conn.execute("SELECT error FROM trials WHERE status != 'ok'").fetchall()
        (space,), = conn.execute("SELECT space FROM tunes").fetchall()
    finally:
        conn.close()
    # the baseline runs the allocation's 2 a node (read back): only 1 is left to measure
    assert json.loads(space) == {"slurm.ranks_per_node": ["1"]}, space
    seen = set()
    for params, run_id, status in trials:
        assert status == "ok", (params, errors, p.stderr[-2000:])
        per_node = json.loads(params).get("slurm.ranks_per_node", "(default)")
        run = by_id[run_id]
        hosts = run["engine_json"]["environment"]["ranks_per_host"]
        if per_node == "(default)":  # the baseline: the allocation's own 2 per node
            per_node = "2"
        assert hosts == {"n1": int(per_node), "n2": int(per_node)}, (params, hosts)
        assert (run["ranks"], run["nodes"]) == (2 * int(per_node), 2)
        seen.add(per_node)
    assert seen == {"1", "2"}


def test_tune_ranks_per_node_reaches_the_users_own_srun(twonode_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    """A command objective: the user's srun line inside the allocation gets the trial's ranks
    per node (srun's inherited task count would otherwise override it and every trial would
    run the allocation's 2 a node). The metric is the number of tasks of the srun step."""
    db = tmp_path / "t.db"
    p = in_allocation(twonode_env, tmp_path, [
        sys.executable, "-m", "iolab", "tune", "--db", str(db),
        "--knob", "slurm.ranks_per_node=1,2", "--trials", "2", "--confirm", "0",
        "--metric", r"tasks: (\d+)", "--maximize", "--",
        "srun", "bash", "-c", "echo tasks: $SLURM_STEP_NUM_TASKS on $(hostname)"], ppn=2)
    assert "Tune 1: done" in p.stdout, p.stderr
    conn = sqlite3.connect(str(db))
    try:
        trials = conn.execute("SELECT params, value, status FROM trials").fetchall()
    finally:
        conn.close()
    got = {json.loads(params).get("slurm.ranks_per_node"): value
           for params, value, status in trials if status == "ok"}
    # the step's tasks on the 2 nodes: "(default)" is the allocation's 2 a node, so "2" is
    # dropped from the space and the one trial measures "1" (was: by the seed's pick)
    assert got == {"(default)": 4, "1": 2}, trials


def test_io500_quick_runs_every_phase_across_both_hosts(twonode_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    """Expected: ``iolab io500 --quick --nodes 2 --ppn 1`` inside ``salloc -N 2`` launches each
    IOR and mdtest phase with srun over both hosts (each stored run records n1 and n2, one
    rank a host) and writes IO500's result files."""
    db = tmp_path / "r.db"
    in_allocation(twonode_env, tmp_path, [sys.executable, "-m", "iolab", "io500", "--quick",
                                          "--nodes", "2", "--ppn", "1", "--timestamp", "t",
                                          "--db", str(db)], ppn=1)
    stored = runs(db)
    # every phase but find and the timestamp (ior-rnd4K-easy-read included, as IO500 runs it)
    assert len(stored) == 12, [r["label"] for r in stored]
    for run in stored:
        env = run["engine_json"]["environment"]
        assert env["hosts"] == ["n1", "n2"] and env["ranks_per_host"] == {"n1": 1, "n2": 1}, \
            (run["label"], env)
    result = (tmp_path / "io500-quick" / "results" / "t" / "result.txt").read_text()
    assert "[SCORE ]" in (tmp_path / "io500-quick" / "results" / "t" /
                          "result_summary.txt").read_text()
    assert "ERROR INVALID stonewall-time 2s != 300s" in result
    # find over the run's ranks, launched like the phases: one walker a host, something found
    assert int(re.search(r"^found\s+= (\d+)", result, re.M)[1]) > 0  # type: ignore[index]
