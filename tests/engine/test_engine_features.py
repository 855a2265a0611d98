"""Reads of another rank's data, eviction and the read-N-times experiment, threads, POSIX
modes, timing arithmetic, repetition statistics, progress lines, the table, --list-options,
and the JSON document checked against the contract in docs/engine-json.md."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import Engine, _env, run_engine

REPO = Path(__file__).resolve().parents[2]
SMALL = ["--transfer", "4K", "--block", "16K", "--segments", "2", "--quiet"]


def args_for(scratch: Path, *extra: str) -> list[str]:
    return ["--path", str(scratch / "f"), *SMALL, *extra]


# --- the JSON contract -------------------------------------------------------------------

MAPS = {"ranks_per_host", "requested", "sources", "effective"}  # keys are data, not schema


def contract_example() -> dict[str, Any]:
    text = (REPO / "docs" / "engine-json.md").read_text()
    block = re.search(r"```jsonc\n(.*?)```", text, re.S)
    assert block, "docs/engine-json.md has no jsonc example"
    body = re.sub(r"//[^\n]*", "", block.group(1))
    body = re.sub(r',\s*"\.\.\.":\s*"\.\.\."', "", body)
    return json.loads(body)


def check_shape(example: Any, actual: Any, path: str = "$") -> None:
    if example is None:
        return  # "null or an object": any value
    if isinstance(example, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for k, v in example.items():
            assert k in actual, f"{path}.{k} missing"
            if k in MAPS:
                assert isinstance(actual[k], dict), f"{path}.{k}: expected an object"
            elif not (k == "hints" and actual[k] == {}):
                check_shape(v, actual[k], f"{path}.{k}")
    elif isinstance(example, list):
        assert isinstance(actual, list), f"{path}: expected a list"
        for i, item in enumerate(actual):
            if example:
                check_shape(example[0], item, f"{path}[{i}]")
    elif isinstance(example, bool):
        assert isinstance(actual, bool), f"{path}: expected a boolean, got {actual!r}"
    elif isinstance(example, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), \
            f"{path}: expected a number, got {actual!r}"
    elif isinstance(example, str):
        assert isinstance(actual, str), f"{path}: expected a string, got {actual!r}"


@pytest.mark.parametrize("api", ["posix", "null", "mpiio", "hdf5"])
def test_json_matches_contract(engine: Engine, scratch: Path, api: str):
    if api not in engine.apis:
        pytest.skip(f"api {api} not built")
    r = run_engine(engine, 2, args_for(scratch, "--api", api, "--reps", "2"), scratch.parent)
    assert r.rc == 0, r.stderr
    assert r.doc is not None
    check_shape(contract_example(), r.doc)
    d = r.doc
    assert d["schema_version"] == 1 and d["tool"]["name"] == "iolab-bench"
    assert d["tool"]["argv"][0].endswith("iolab-bench") and "--reps" in d["tool"]["argv"]
    assert d["config"]["transfer_bytes"] == 4096 and d["config"]["block_bytes"] == 16384
    assert d["config"]["api"] == api and d["config"]["repetitions"] == 2
    env = d["environment"]
    assert env["ranks"] == 2 and sum(env["ranks_per_host"].values()) == 2
    assert env["hosts"] == list(env["ranks_per_host"])
    assert env["mpiio_implementation"] in ("romio", "ompio", "unknown")
    assert env["fs_block_size"] == os.statvfs(scratch).f_bsize
    assert env["logical_block_size"] >= 512
    assert [rep["index"] for rep in d["repetitions"]] == [0, 1]


def test_environment_fs_type(engine: Engine, scratch: Path, small_fs: Path):
    r = run_engine(engine, 1, ["--path", str(small_fs / "f"), "--transfer", "4K", "--block",
                               "4K", "--quiet"], scratch)
    assert r.rc == 0 and r.doc is not None
    env = r.doc["environment"]
    assert env["fs_type"] == "tmpfs" and env["fs_magic"] == "0x1021994"


def test_timing_arithmetic_with_null_delay(engine: Engine, scratch: Path):
    """10 transfers of 2 ms each: the phase cannot take less than 20 ms."""
    r = run_engine(engine, 2, ["--api", "null", "--null.delay-us", "2000", "--transfer", "4K",
                               "--block", "40K", "--quiet"], scratch)
    assert r.rc == 0, r.stderr
    for ph in r.phases():
        assert ph["bytes"] == 2 * 40960 and ph["ops"] == 20
        assert ph["time_s"] >= 0.02
        assert ph["xfer_s"]["min"] >= 0.02
        assert ph["bw_bytes_per_s"] == pytest.approx(ph["bytes"] / ph["time_s"], rel=1e-6)
        assert ph["iops"] == pytest.approx(ph["ops"] / ph["time_s"], rel=1e-6)
        for p in ph["per_rank"]:
            assert p["open_s"] + p["xfer_s"] + p["close_s"] <= ph["time_s"] + 1e-6
            assert p["end_s"] - p["start_s"] <= ph["time_s"] + 1e-6


def test_repetition_statistics(engine: Engine, scratch: Path):
    r = run_engine(engine, 1, ["--api", "null", "--reps", "3", "--transfer", "4K", "--block",
                               "8K", "--quiet"], scratch)
    assert r.rc == 0 and r.doc is not None
    bws = sorted(p["bw_bytes_per_s"] for p in r.phases("write"))
    s = r.doc["summary"]["write"]["bw_bytes_per_s"]
    assert s["n"] == 3 and s["min"] == bws[0] and s["median"] == bws[1] and s["max"] == bws[2]
    assert s["mean"] == pytest.approx(sum(bws) / 3)
    assert s["stddev"] >= 0


@pytest.mark.parametrize("layout,np,shift", [("fpp", 2, 1), ("segmented", 4, 1),
                                             ("strided", 4, 1), ("subset", 4, 2)])
def test_reorder_reads_other_ranks_data(engine: Engine, scratch: Path, layout: str, np: int,
                                        shift: int):
    """One host: shift by 1 rank (subset: by one group); --verify checks the data read is
    the writer's pattern, so a reader reading its own data would fail."""
    r = run_engine(engine, np, args_for(scratch, "--layout", layout, "--group", "2",
                                        "--reorder", "--verify"), scratch.parent)
    assert r.rc == 0, r.stderr
    (rd,) = r.phases("read")
    assert rd["reorder_shift"] == shift
    (wr,) = r.phases("write")
    assert wr["reorder_shift"] == 0
    assert r.doc is not None and r.doc["verify"]["errors"] == 0
    assert r.doc["config"]["reorder_shift_ranks"] == 1


@pytest.mark.parametrize("api,layout", [("posix", "fpp"), ("posix", "subset"),
                                        ("mpiio", "strided"), ("hdf5", "segmented")])
def test_evict_and_read_three_times(engine: Engine, scratch: Path, api: str, layout: str):
    if api not in engine.apis:
        pytest.skip(f"api {api} not built")
    r = run_engine(engine, 2, args_for(scratch, "--api", api, "--layout", layout, "--evict",
                                       "--read-times", "3", "--verify"), scratch.parent)
    assert r.rc == 0, r.stderr
    reads = r.phases("read")
    assert [p["pass"] for p in reads] == [0, 1, 2]
    first, *later = reads
    assert first["eviction"]["attempted"] and first["eviction"]["verified"]
    assert first["eviction"]["method"] == "posix_fadvise"
    assert first["cache"] == "cold" and first["eviction"]["resident_fraction"] == 0
    for p in later:  # the first pass brought the files into the page cache
        assert p["cache"] == "warm" and not p["eviction"]["attempted"]
    assert r.doc is not None and len(r.doc["summary"]["read_passes"]) == 3


def test_reads_without_evict_are_warm(engine: Engine, scratch: Path):
    r = run_engine(engine, 2, args_for(scratch), scratch.parent)
    (rd,) = r.phases("read")
    assert rd["cache"] == "warm" and rd["eviction"]["attempted"] is False
    (wr,) = r.phases("write")
    assert wr["cache"] == "n/a" and wr["eviction"] is None


@pytest.mark.parametrize("layout", ["fpp", "segmented", "strided"])
def test_threads(engine: Engine, scratch: Path, layout: str):
    r = run_engine(engine, 2, args_for(scratch, "--layout", layout, "--threads", "3",
                                       "--verify"), scratch.parent)
    assert r.rc == 0, r.stderr
    for ph in r.phases():
        assert ph["bytes"] == 2 * 16384 * 2 and ph["ops"] == 2 * 8
    assert r.doc is not None and r.doc["verify"]["errors"] == 0


@pytest.mark.parametrize("mode", ["buffered", "sync", "fsync", "direct"])
def test_posix_modes(engine: Engine, scratch: Path, mode: str):
    r = run_engine(engine, 2, args_for(scratch, "--posix.mode", mode, "--verify",
                                       "--layout", "segmented"), scratch.parent)
    if mode == "direct" and r.rc == 2 and "refuses O_DIRECT" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.rc == 0, r.stderr
    assert r.doc is not None and r.doc["config"]["posix_mode"] == mode
    assert r.doc["verify"]["errors"] == 0
    for ph in r.phases():
        assert ph["bytes"] == 2 * 16384 * 2


def test_fsync_option_times_the_flush(engine: Engine, scratch: Path):
    r = run_engine(engine, 1, args_for(scratch, "--fsync", "--write"), scratch.parent)
    assert r.rc == 0 and r.doc is not None and r.doc["config"]["fsync"] is True
    (wr,) = r.phases("write")
    assert wr["close_s"]["max"] > 0


def test_progress_lines(engine: Engine, scratch: Path):
    r = run_engine(engine, 2, ["--api", "null", "--reps", "2", "--read-times", "2",
                               "--progress", "--transfer", "4K", "--block", "8K", "--quiet"],
                   scratch)
    assert r.rc == 0
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("progress ")]
    assert lines == ["progress 0 write 0 1/6", "progress 0 read 0 2/6", "progress 0 read 1 3/6",
                     "progress 1 write 0 4/6", "progress 1 read 0 5/6", "progress 1 read 1 6/6"]


def test_table_and_json_destinations(engine: Engine, scratch: Path):
    argv = engine.argv(2, ["--api", "null", "--transfer", "4K", "--block", "8K",
                           "--path", str(scratch / "f")])
    p = subprocess.run(argv, capture_output=True, text=True, env=_env(), timeout=60)
    assert p.returncode == 0
    doc = json.loads(p.stdout)  # without --json: stdout is the JSON document alone
    assert doc["status"] == "ok"
    assert "bw(MiB/s)" in p.stderr and "summary" in p.stderr  # the table went to stderr
    r = run_engine(engine, 2, ["--api", "null", "--transfer", "4K", "--block", "8K"], scratch,
                   json_out=True)
    # with --json PATH (and no --quiet) the table is on stdout
    r2 = subprocess.run(engine.argv(2, ["--api", "null", "--transfer", "4K", "--block", "8K",
                                        "--json", str(scratch / "r.json")]),
                        capture_output=True, text=True, env=_env(), timeout=60)
    assert re.search(r"^write\s+0\s+0\s+[\d.]+", r2.stdout, re.M), r2.stdout
    assert re.search(r"^read\s+0\s+0\s+[\d.]+", r2.stdout, re.M)
    assert r.doc is not None and json.loads((scratch / "r.json").read_text())["status"] == "ok"


REQUIRED_OPTIONS = [
    "api", "layout", "transfer", "block", "segments", "write", "read", "reps", "path",
    "collective", "file-view", "hint", "hints-file", "threads", "reorder", "read-times", "evict",
    "verify", "keep", "group", "group-files", "json", "quiet", "progress", "list-options",
    "posix.mode", "null.delay-us", "workload", "grid", "pgrid", "elem", "steps", "random",
    "fsync-per-write", "stonewall", "unique-dir",
]


def test_list_options(engine: Engine):
    p = subprocess.run(engine.argv(1, ["--list-options"]), capture_output=True, text=True,
                       env=_env(), timeout=60)
    assert p.returncode == 0
    table = json.loads(p.stdout)
    names = [o["name"] for o in table]
    assert len(names) == len(set(names))
    for n in REQUIRED_OPTIONS:
        assert n in names, n
    for o in table:
        assert set(o) >= {"name", "type", "default", "unit", "choices", "help"} and o["help"]
    by = {o["name"]: o for o in table}
    assert by["layout"]["choices"] == ["fpp", "segmented", "strided", "serial", "subset",
                                       "subarray"]
    assert by["workload"]["choices"] == ["layout", "btio"]
    assert by["posix.mode"]["choices"] == ["buffered", "sync", "fsync", "direct"]
    assert by["api"]["choices"] == engine.apis and "posix" in engine.apis
    assert by["transfer"]["unit"] == "bytes" and by["transfer"]["type"] == "size"


NO_MPI_INIT_C = r"""
#include <unistd.h>
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{ (void)argc; (void)argv; (void)required; (void)provided; _exit(99); }
int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; _exit(99); }
"""


@pytest.mark.parametrize("flag", ["--list-options", "--help", "--version"])
def test_info_flags_print_without_starting_mpi(engine: Engine, tmp_path: Path, flag: str):
    """`iolab bench` reads the option table on every call: it must not pay an MPI start.
    A preloaded MPI_Init that exits 99 proves the engine never calls it for these flags,
    while a real run still does (exit 99)."""
    src, lib = tmp_path / "noinit.c", tmp_path / "libnoinit.so"
    src.write_text(NO_MPI_INIT_C)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    env = {**_env(), "LD_PRELOAD": str(lib)}
    p = subprocess.run([str(engine.binary), flag], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 0 and p.stdout.strip(), p.stderr
    run = subprocess.run([str(engine.binary), "--api", "null"], capture_output=True, env=env,
                         timeout=60)
    assert run.returncode == 99  # the shim does intercept MPI_Init when a run needs MPI
    # bad input next to an info flag is still one line and exit 2, also without MPI
    bad = subprocess.run([str(engine.binary), flag, "--bogus"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--bogus" in bad.stderr


def test_info_flags_print_once_under_a_launcher(engine: Engine):
    p = subprocess.run(engine.argv(3, ["--version"]), capture_output=True, text=True,
                       env=_env(), timeout=60)
    assert p.returncode == 0 and p.stdout.count("iolab-bench ") == 1, p.stdout


def test_docs_option_table_is_generated(engine: Engine):
    """docs/engine.md's option table is generated from --list-options (never hand-kept)."""
    gen = REPO / "engine" / "tools" / "gen_option_docs.py"
    p = subprocess.run(engine.argv(1, ["--list-options"]), capture_output=True, text=True,
                       env=_env(), timeout=60)
    out = subprocess.run(["python3", str(gen), "--check", str(REPO / "docs" / "engine.md")],
                         input=p.stdout, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_options_from_environment(engine: Engine, scratch: Path):
    """IOLAB_BENCH_<NAME> sets an option (Slurm scripts); the command line wins over it."""
    env = {"IOLAB_BENCH_TRANSFER": "8K", "IOLAB_BENCH_SEGMENTS": "3",
           "IOLAB_BENCH_POSIX_MODE": "sync"}
    r = run_engine(engine, 2, ["--api", "null", "--block", "16K", "--segments", "2",
                               "--quiet"], scratch, env=env)
    assert r.rc == 0 and r.doc is not None, r.stderr
    c = r.doc["config"]
    assert (c["transfer_bytes"], c["segments"], c["posix_mode"]) == (8192, 2, "sync")
    (wr,) = r.phases("write")
    assert wr["ops"] == 2 * 2 * 2  # 16K / 8K x 2 segments x 2 ranks
    bad = run_engine(engine, 2, ["--api", "null"], scratch, env={"IOLAB_BENCH_REPS": "many"})
    assert bad.rc == 2 and "IOLAB_BENCH_REPS" in bad.stderr
