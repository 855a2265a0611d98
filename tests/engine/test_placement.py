"""Where each rank ran, recorded in the result: its CPU set (sched_getaffinity), memory
policy (get_mempolicy) and the CPU it was on with that CPU's frequency at the start and the
end of the run, checked against bindings made for real (mpirun --bind-to, taskset, numactl
--membind) under Open MPI and MPICH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import Engine, _env, doc, run_engine


def cpus_of(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out |= set(range(int(lo), int(hi or lo) + 1))
    return out


def placed(engine: Engine, np_: int, scratch: Path, launcher_flags: list[str],
           wrapper: list[str]) -> list[dict[str, Any]]:
    argv = engine.argv(np_, ["--api", "null", "--quiet", "--json", str(scratch / "r.json")])
    i = argv.index(str(engine.binary))
    argv[i:i] = wrapper
    argv[1:1] = launcher_flags
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=90)
    assert p.returncode == 0, p.stderr
    rows: list[dict[str, Any]] = json.loads((scratch / "r.json").read_text())[
        "environment"]["placement"]
    assert [r["rank"] for r in rows] == list(range(np_))
    for r in rows:
        assert r["ncpus"] == len(cpus_of(r["cpus"]))
        assert r["cpu_start"] in cpus_of(r["cpus"]) and r["cpu_end"] in cpus_of(r["cpus"])
        assert r["cpu_mhz_start"] is None or r["cpu_mhz_start"] > 0
    return rows


def test_bound_to_a_core_each(engine: Engine, scratch: Path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    rows = placed(engine, 2, scratch, ["--bind-to", "core"], [])
    assert [r["ncpus"] for r in rows] == [1, 1]
    assert rows[0]["cpus"] != rows[1]["cpus"]
    assert {r["mempolicy"] for r in rows} == {"default"}


def test_unbound_sees_every_cpu(engine: Engine, scratch: Path):
    rows = placed(engine, 2, scratch, ["--bind-to", "none"], [])
    assert {r["ncpus"] for r in rows} == {len(os.sched_getaffinity(0))}


def test_taskset_and_membind(engine: Engine, scratch: Path):
    rows = placed(engine, 1, scratch, ["--bind-to", "none"], ["taskset", "-c", "0"])
    assert rows[0]["cpus"] == "0" and rows[0]["cpu_start"] == 0
    if shutil.which("numactl") is None:
        pytest.skip("numactl is not installed")
    rows = placed(engine, 1, scratch, [], ["numactl", "--membind=0"])
    assert rows[0]["mempolicy"] == "bind"


def test_mpich_binding(mpich_engine: Engine, scratch: Path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    rows = placed(mpich_engine, 2, scratch, ["-bind-to", "core"], [])
    assert [r["ncpus"] for r in rows] == [1, 1] and rows[0]["cpus"] != rows[1]["cpus"]


def test_every_run_records_it(engine: Engine, scratch: Path):
    r = run_engine(engine, 3, ["--api", "null", "--quiet"], scratch.parent)
    assert r.rc == 0, r.stderr
    assert len(doc(r)["environment"]["placement"]) == 3
