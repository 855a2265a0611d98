"""The measured-run model (iolab.runs.engine_doc) over real engine documents: a data run, a
metadata run, a failed run and an interrupted one, each made here by iolab-bench under
mpirun; then the same documents as older engines wrote them (the keys added since removed,
as docs/engine-json.md's history lists them) and damaged stored rows."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from iolab.errors import UsageError
from iolab.pages import prep_bench, prep_run
from iolab.paths import engine_binary
from iolab.results import db, render
from iolab.runs.engine_doc import MeasuredRun, from_json


def _engine() -> Path:
    try:
        binary = engine_binary("default")
    except UsageError as e:
        pytest.skip(f"iolab-bench is not built (run ./setup): {e}")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is missing")
    return binary


def _env() -> dict[str, str]:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("ROMIO_HINTS", None)
    env.update(OMPI_MCA_btl="self,vader", OMPI_MCA_pml="ob1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    return env


def _argv(np: int, args: list[str], out: Path) -> list[str]:
    return ["mpirun", "-q", "--oversubscribe", "-np", str(np), str(_engine()), *args,
            "--quiet", "--json", str(out)]


def run_engine(tmp: Path, np: int, args: list[str]) -> tuple[int, dict[str, Any]]:
    out = tmp / "run.json"
    proc = subprocess.run(_argv(np, args, out), capture_output=True, text=True, timeout=120,
                          env=_env())
    assert out.exists(), proc.stderr
    return proc.returncode, json.loads(out.read_text())


def phases_of(doc: dict[str, Any], op: str) -> list[dict[str, Any]]:
    return [ph for rep in doc["repetitions"] for ph in rep["phases"] if ph["op"] == op]


@pytest.fixture(scope="module")
def null_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("null")
    rc, doc = run_engine(tmp, 2, ["--api", "null", "--path", str(tmp / "f"), "--transfer", "4K",
                                  "--block", "16K", "--reps", "2"])
    assert rc == 0
    return doc


def test_a_data_run_reads_as_the_engine_wrote_it(null_doc: dict[str, Any]) -> None:
    run = from_json(null_doc)
    assert run.status == "ok" and run.error is None and run.kind == "io"
    assert run.ops() == [("write", 0), ("read", 0)]
    for op in ("write", "read"):
        raw = phases_of(null_doc, op)
        assert run.rates(op) == [ph["bw_bytes_per_s"] for ph in raw]
        assert [ph.bytes for ph in run.phases(op)] == [ph["bytes"] for ph in raw]
        assert [ph.repetition for ph in run.phases(op)] == [0, 1]
        stats = run.op_summary(op).bw_bytes_per_s
        assert stats.median == null_doc["summary"][op]["bw_bytes_per_s"]["median"]
        assert stats.n == 2
    first = next(run.phases("write"))
    assert [r.rank for r in first.per_rank] == [0, 1]
    assert sum(r.bytes or 0 for r in first.per_rank) == first.bytes == 2 * 16384
    assert all(r.end_s is not None and r.start_s is not None for r in first.per_rank)
    assert first.xfer_s.max == null_doc["repetitions"][0]["phases"][0]["xfer_s"]["max"]
    env = run.environment
    assert env.ranks == 2 and env.hosts and sum(env.ranks_per_host.values()) == 2
    assert len(env.placement) == 2
    assert run.tool.argv and run.tool.argv[0].endswith("iolab-bench")
    assert run.hints.requested == {} and run.hints.not_applied == ()
    assert run.verify.enabled is False and run.verify.errors == 0


def test_a_metadata_run_is_its_own_kind(tmp_path: Path) -> None:
    rc, doc = run_engine(tmp_path, 2, ["--metadata", "easy", "--md-files", "5",
                                       "--path", str(tmp_path / "m"), "--reps", "1"])
    assert rc == 0
    run = from_json(doc)
    assert run.kind == "metadata" and run.metadata_preset == "easy"
    assert run.metadata_plan["files_per_rank"] == 5
    assert [op for op, _ in run.ops()] == ["create", "stat", "open_read", "remove"]
    for op in ("create", "stat", "open_read", "remove"):
        assert run.rates(op, key="iops") == [ph["iops"] for ph in phases_of(doc, op)]
        assert [ph.ops for ph in run.phases(op)] == [10]  # 5 files x 2 ranks
        assert run.op_summary(op).iops.median == doc["summary"][op]["iops"]["median"]
    assert run.rates("create") == [ph["bw_bytes_per_s"] for ph in phases_of(doc, "create")]


def test_a_failed_run_keeps_its_error_and_the_phase_it_cut(tmp_path: Path) -> None:
    (tmp_path / "f.1").mkdir()  # rank 1 cannot open its file
    rc, doc = run_engine(tmp_path, 2, ["--api", "posix", "--path", str(tmp_path / "f"),
                                       "--transfer", "4K", "--block", "16K"])
    assert rc == 1
    run = from_json(doc)
    assert run.status == "failed" and run.error is not None
    assert (run.error.phase, run.error.rank, run.error.errno) == ("write", 1, 21)
    assert run.error.bytes_done == 16384 and "f.1" in (run.error.message or "")
    assert list(run.phases("read")) == []
    assert db.key_columns(doc)["error"] == run.error.message


def test_an_interrupted_run_has_the_phases_that_finished(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    args = ["--api", "null", "--null.delay-us", "200000", "--path", str(tmp_path / "f"),
            "--transfer", "4K", "--block", "64K", "--reps", "3"]
    proc = subprocess.Popen(_argv(2, args, out), env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        time.sleep(4)  # 16 transfers of 0.2 s: the first write phase ends at ~3.2 s
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    doc = json.loads(out.read_text())
    run = from_json(doc)
    assert run.status == "interrupted"
    done = [ph for rep in doc["repetitions"] for ph in rep["phases"]]
    assert len(list(run.phases())) == len(done) < 6  # 3 repetitions x (write + read)
    assert [ph.op for ph in run.phases()] == [ph["op"] for ph in done]


# Keys the engine added after the first stored documents (git log -p docs/engine-json.md):
# tool.argv; hints.unverified; summary.read_passes and each statistic's n; the phases'
# reorder_shift, stonewall, queue and per-rank start/end; the environment's fs_path,
# page_size and placement; the config's metadata_plan, array and group/reorder keys.
def as_an_older_engine_wrote(doc: dict[str, Any]) -> dict[str, Any]:
    old = copy.deepcopy(doc)
    old["tool"].pop("argv")
    old["hints"].pop("unverified", None)
    old["summary"].pop("read_passes")
    for by_op in old["summary"].values():
        for stats in by_op.values():
            stats.pop("n")
    for rep in old["repetitions"]:
        for ph in rep["phases"]:
            for key in ("reorder_shift", "stonewall", "queue"):
                ph.pop(key)
            for r in ph["per_rank"]:
                r.pop("start_s")
                r.pop("end_s")
    for key in ("fs_path", "page_size", "placement"):
        old["environment"].pop(key)
    for key in ("metadata_plan", "array", "group_effective", "reorder_shift_ranks",
                "ranks_by_host"):
        old["config"].pop(key, None)
    return old


def test_an_older_document_reads_with_none_for_what_it_lacks(null_doc: dict[str, Any]) -> None:
    new, old = from_json(null_doc), from_json(as_an_older_engine_wrote(null_doc))
    assert old.tool.argv is None and old.hints.unverified == ()
    assert old.op_summary("write").bw_bytes_per_s.n is None and old.read_passes == ()
    assert old.environment.placement == () and old.environment.fs_path is None
    assert all(r.start_s is None and r.end_s is None for ph in old.phases() for r in ph.per_rank)
    # what it has reads the same as in the newer document
    assert old.ops() == new.ops()
    assert old.rates("write") == new.rates("write") and old.rates("read") == new.rates("read")
    assert old.op_summary("read").bw_bytes_per_s.median == \
        new.op_summary("read").bw_bytes_per_s.median
    # and every reader built on the model takes it: the results tables and the HTML prep
    row = {"id": 1, "status": "ok", **db.key_columns(as_an_older_engine_wrote(null_doc)),
           "engine_json": as_an_older_engine_wrote(null_doc)}
    assert render.render(render.summary_report([row]), "csv") == render.render(
        render.summary_report([{**row, "engine_json": null_doc}]), "csv")
    assert prep_bench.summary_rows(row["engine_json"]) == prep_bench.summary_rows(null_doc)


@pytest.mark.parametrize("doc", [None, "not json", [], {}, {"repetitions": "x"},
                                 {"repetitions": [None, {"phases": [None, 3]}]},
                                 {"summary": {"write": 3, "read_passes": "x"}, "hints": [],
                                  "environment": {"hosts": "h", "ranks": "2"}, "error": "e",
                                  "verify": None, "tool": {"argv": "x"}}])
def test_a_damaged_document_reads_as_missing_never_raises(doc: Any) -> None:
    run = from_json(doc)
    assert isinstance(run, MeasuredRun)
    assert run.ops() == [] and run.summary == {} and run.error is None
    assert run.environment.hosts is None and run.environment.ranks is None
    assert run.tool.argv is None and run.hints.effective == {}


def test_a_stored_document_without_environment_is_shown() -> None:
    """expected: `results show` and the HTML headline of a stored run whose document has
    "environment": null (a damaged or hand-stored row) name the library generically / was:
    AttributeError ('NoneType' object has no attribute 'get') from both."""
    doc = {"status": "ok", "environment": None, "config": {"api": "mpiio"},
           "hints": {"requested": {"cb_nodes": "1"}, "verifiable": False},
           "repetitions": [None, {"index": 1, "phases": [None]}]}
    text = render.render(render.run_report({"id": 3, "status": "ok", "engine_json": doc}),
                         "text")
    assert "hints cannot be verified: the MPI-IO library only echoes" in text
    assert prep_run.headline({"status": "ok"}, doc).startswith("status ok, ? rank(s)")


def test_per_rank_entries_are_read_only_when_asked(null_doc: dict[str, Any]) -> None:
    """expected: reading a many-rank document builds no per-rank values until a reader asks
    for them / was (before this branch merged): every RankShare built on each read, so
    `results show` of a 4096-rank, 10-repetition run took 28 s instead of 0.02 s."""
    doc = copy.deepcopy(null_doc)
    for rep in doc["repetitions"]:
        for ph in rep["phases"]:
            ph["per_rank"] = [dict(ph["per_rank"][0], rank=i) for i in range(4096)]
    run = from_json(doc)
    first = next(run.phases())
    assert "per_rank" not in vars(first)  # not read yet
    assert [r.rank for r in first.per_rank] == list(range(4096))
    assert first.per_rank is first.per_rank  # read once
