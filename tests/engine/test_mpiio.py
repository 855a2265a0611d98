"""The mpiio backend with both MPI libraries: every layout verifies with exact bytes and call
counts, per-transfer collective calls and one call through a file view write the same bytes,
hints round-trip (MPICH/ROMIO) or are marked unverifiable (Open MPI/OMPIO), faults are
reported with their errno and never hang.

The table of every API x layout x (1, 2, 4) ranks with the default build lives in
test_engine_layouts.py; here the MPICH build gets the same table for mpiio."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import (
    XFERS,
    B,
    Engine,
    Result,
    S,
    T,
    doc,
    expected_ops,
    interrupt_run,
    run_engine,
    run_refused,
)

LAYOUTS = ["fpp", "segmented", "strided", "serial", "subset"]


def args(layout: str, path: Path, *extra: str, api: str = "mpiio") -> list[str]:
    return ["--api", api, "--layout", layout, "--transfer", str(T), "--block", str(B),
            "--segments", str(S), "--path", str(path / "f"), "--quiet", "--group", "2",
            "--verify", *extra]


def flavour_engine(request: pytest.FixtureRequest, flavour: str) -> Engine:
    e: Engine = request.getfixturevalue("engine" if flavour == "default" else "mpich_engine")
    if "mpiio" not in e.apis:
        pytest.skip(f"mpiio is not built into {e.binary.name}")
    return e


def check_ok(r: Result, np: int, layout: str, ops: int | None = None) -> None:
    assert r.rc == 0, r.stderr
    assert r.doc is not None and r.doc["status"] == "ok"
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == np * B * S
        assert ph["ops"] == (expected_ops(layout, np) if ops is None else ops)
        assert sum(p["bytes"] for p in ph["per_rank"]) == np * B * S
    assert r.doc["verify"] == {"enabled": True, "errors": 0, "first_bad": None}


@pytest.mark.parametrize("np", [1, 2, 4])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_mpich_layout_verify(mpich_engine: Engine, scratch: Path, layout: str, np: int):
    """The MPICH (ROMIO) build: every layout, independent calls, exact bytes and calls."""
    r = run_engine(mpich_engine, np, args(layout, scratch), scratch.parent)
    check_ok(r, np, layout)
    assert doc(r)["environment"]["mpiio_implementation"] == "romio"
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("flavour", ["default", "mpich"])
@pytest.mark.parametrize("layout", ["segmented", "strided"])
def test_per_transfer_collective_and_file_view_write_the_same_file(
        request: pytest.FixtureRequest, scratch: Path, flavour: str, layout: str):
    """IOR's per-transfer collective calls (4 x 8 calls of 4 KiB) and one call per rank through
    a strided view: both verify, and the files they leave are byte for byte the same."""
    e = flavour_engine(request, flavour)
    files = {}
    for mode, ops in (("--collective", 4 * XFERS), ("--file-view", 4)):
        d = scratch / mode.strip("-")
        d.mkdir()
        r = run_engine(e, 4, [*args(layout, d, mode, "--collective", "--keep")], scratch)
        check_ok(r, 4, layout, ops)
        files[mode] = (d / "f").read_bytes()
    assert len(files["--collective"]) == 4 * B * S
    assert files["--collective"] == files["--file-view"]


@pytest.mark.parametrize("flavour", ["default", "mpich"])
@pytest.mark.parametrize("mode", [[], ["--collective"], ["--file-view"],
                                  ["--collective", "--file-view"]])
def test_write_then_read_only_run(request: pytest.FixtureRequest, scratch: Path,
                                  flavour: str, mode: list[str]):
    """A read-only run over the files of an earlier --write --keep run, with another rank's
    data (--reorder), verifies."""
    e = flavour_engine(request, flavour)
    w = run_engine(e, 4, args("strided", scratch, *mode, "--write", "--keep"), scratch.parent)
    assert w.rc == 0, w.stderr
    assert (scratch / "f").stat().st_size == 4 * B * S
    r = run_engine(e, 4, args("strided", scratch, *mode, "--read", "--reorder"),
                   scratch.parent)
    assert r.rc == 0, r.stderr
    (ph,) = r.phases("read")
    assert ph["bytes"] == 4 * B * S and ph["reorder_shift"] == 1
    assert r.doc is not None and r.doc["verify"]["errors"] == 0


def test_romio_hints_round_trip(mpich_engine: Engine, scratch: Path):
    """ROMIO reports its real state: a known hint comes back with its value, an unknown key
    is dropped (ignored), and a value ROMIO corrects (cb_nodes above the number of nodes) is
    flagged as ignored too."""
    r = run_engine(mpich_engine, 2, args("strided", scratch, "--collective",
                                          "--hint", "cb_buffer_size=1048576",
                                          "--hint", "iolab_no_such_hint=1",
                                          "--hint", "cb_nodes=8"), scratch.parent)
    assert r.rc == 0, r.stderr
    h = doc(r)["hints"]
    assert h["verifiable"] is True and h["unverified"] == []
    assert h["requested"] == {"cb_buffer_size": "1048576", "iolab_no_such_hint": "1",
                              "cb_nodes": "8"}
    assert h["effective"]["cb_buffer_size"] == "1048576"
    assert "iolab_no_such_hint" not in h["effective"]
    assert h["effective"]["cb_nodes"] != "8"  # one node: ROMIO uses one aggregator per node
    assert sorted(h["ignored"]) == ["cb_nodes", "iolab_no_such_hint"]
    # the full effective set, as ROMIO_PRINT_HINTS shows it
    assert {"romio_cb_write", "romio_ds_read", "cb_config_list"} <= set(h["effective"])


def test_romio_hints_from_file_and_environment(mpich_engine: Engine, scratch: Path,
                                              tmp_path: Path):
    """ROMIO_HINTS, then --hints-file, then --hint: each applied, later sources win, and
    hints.sources says where each came from."""
    env_file = tmp_path / "romio_hints"
    env_file.write_text("# site defaults\nind_wr_buffer_size 1048576\n"
                        "cb_buffer_size 2097152\n")
    hints_file = tmp_path / "hints"
    hints_file.write_text("romio_cb_write enable\ncb_buffer_size=4194304\n")
    r = run_engine(mpich_engine, 2, args("strided", scratch, "--hints-file", str(hints_file),
                                          "--hint", "romio_ds_read=disable"),
                   scratch.parent, env={"ROMIO_HINTS": str(env_file)})
    assert r.rc == 0, r.stderr
    h = doc(r)["hints"]
    assert h["sources"] == {"ind_wr_buffer_size": "ROMIO_HINTS", "cb_buffer_size": "hints file",
                            "romio_cb_write": "hints file", "romio_ds_read": "command line"}
    assert h["effective"]["ind_wr_buffer_size"] == "1048576"
    assert h["effective"]["cb_buffer_size"] == "4194304"
    assert h["effective"]["romio_cb_write"] == "enable"
    assert h["effective"]["romio_ds_read"] == "disable"
    assert h["ignored"] == [] and h["verifiable"] is True


def test_ompio_hints_unverifiable(engine: Engine, scratch: Path):
    """Open MPI (OMPIO) echoes any key it is given: nothing can be verified."""
    r = run_engine(engine, 2, args("strided", scratch, "--hint", "cb_buffer_size=1048576",
                                   "--hint", "iolab_no_such_hint=1"), scratch.parent)
    assert r.rc == 0, r.stderr
    h = doc(r)["hints"]
    assert doc(r)["environment"]["mpiio_implementation"] == "ompio"
    assert h["verifiable"] is False and h["ignored"] == []
    assert sorted(h["unverified"]) == ["cb_buffer_size", "iolab_no_such_hint"]
    assert h["effective"]["iolab_no_such_hint"] == "1"  # the echo that makes it unverifiable


@pytest.mark.parametrize("flavour", ["default", "mpich"])
def test_one_rank_cannot_open(request: pytest.FixtureRequest, scratch: Path, flavour: str):
    """Rank 1's file is a directory: MPI_File_open fails there only (fpp, MPI_COMM_SELF);
    rank 0 finishes, nobody hangs, the failure names the rank and the file."""
    e = flavour_engine(request, flavour)
    (scratch / "f.1").mkdir()
    r = run_engine(e, 2, args("fpp", scratch), scratch.parent, timeout=60)
    assert r.rc == 1 and r.doc is not None, r.stderr
    assert r.doc["error"]["rank"] == 1 and r.doc["error"]["phase"] == "write"
    assert "MPI_File_open" in r.doc["error"]["message"] and "f.1" in r.doc["error"]["message"]
    assert r.doc["error"]["bytes_done"] == B * S  # rank 0 wrote its whole share
    assert [p.name for p in scratch.iterdir()] == ["f.1"]


@pytest.mark.parametrize("coll", [[], ["--collective"]])
def test_shared_file_open_fails_everywhere(engine: Engine, scratch: Path, coll: list[str]):
    """The shared file's path is a directory: every rank's collective open fails, the run
    fails (not hangs) with the open's message."""
    (scratch / "f").mkdir()
    r = run_engine(engine, 2, args("strided", scratch, *coll), scratch.parent, timeout=60)
    assert r.rc == 1 and r.doc is not None, r.stderr
    assert r.doc["status"] == "failed" and r.doc["error"]["bytes_done"] == 0
    assert "MPI_File_open" in r.doc["error"]["message"]


@pytest.mark.parametrize("mode", [["--collective"], ["--collective", "--file-view"]])
def test_open_mpi_romio_also_echoes(engine: Engine, scratch: Path, mode: list[str]):
    """Open MPI with its ROMIO (OMPI_MCA_io=romio321): reported as romio, verifies, and its
    MPI_File_get_info echoes an unknown key like OMPIO does, so still nothing is verifiable."""
    r = run_engine(engine, 4, args("strided", scratch, *mode, "--hint", "iolab_no_such_hint=1"),
                   scratch.parent, env={"OMPI_MCA_io": "romio321"})
    check_ok(r, 4, "strided", 4 if "--file-view" in mode else None)
    assert doc(r)["environment"]["mpiio_implementation"] == "romio"
    h = doc(r)["hints"]
    assert h["effective"] == {"iolab_no_such_hint": "1"}
    assert h["verifiable"] is False and h["unverified"] == ["iolab_no_such_hint"]


@pytest.mark.parametrize("flavour", ["default", "mpich"])
@pytest.mark.parametrize("api", ["mpiio", "hdf5", "pnetcdf"])
def test_subset_aggregators_share_one_file(request: pytest.FixtureRequest, scratch: Path,
                                           flavour: str, api: str):
    """N:M into one shared file: the aggregators open it over their own communicator and
    write collectively; reads by another rank's group (--reorder) verify."""
    e = flavour_engine(request, flavour)
    if api not in e.apis:
        pytest.skip(f"api {api} is not built into {e.binary.name}")
    r = run_engine(e, 4, args("subset", scratch, "--group-files", "shared", "--collective",
                              "--reorder", api=api), scratch.parent)
    check_ok(r, 4, "subset")
    (ph,) = r.phases("write")
    assert [p["bytes"] for p in ph["per_rank"]] == [2 * B * S, 0, 2 * B * S, 0]
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("flavour", ["default", "mpich"])
@pytest.mark.parametrize("api", ["mpiio", "hdf5", "pnetcdf"])
def test_sigint_mid_collective_run(request: pytest.FixtureRequest, scratch: Path,
                                   tmp_path: Path, flavour: str, api: str):
    """Ctrl-C during collective transfers: every rank leaves its collective calls together
    (zero-byte calls), status interrupted, the shared file removed."""
    e = flavour_engine(request, flavour)
    if api not in e.apis:
        pytest.skip(f"api {api} is not built into {e.binary.name}")
    jpath = tmp_path / "int.json"
    a = ["--api", api, "--layout", "strided", "--transfer", "4K", "--block", "8M", "--reps",
         "1000", "--collective", "--path", str(scratch / "f"), "--quiet", "--json", str(jpath)]
    interrupt_run(e, 2, a, jpath, scratch,
                  lambda: (scratch / "f").exists(), 1.0, flavour)


BIG = (2 << 30) + 4096


def _free_memory() -> int:
    with open("/proc/meminfo") as f:
        kib = next(int(ln.split()[1]) for ln in f if ln.startswith("MemAvailable:"))
    return kib * 1024


@pytest.fixture
def big_scratch(scratch: Path) -> Iterator[Path]:
    """A folder for one BIG-byte file: in /dev/shm when it and the memory can hold the file
    beside the engine's BIG-byte buffer, else ``scratch``. Both are the library's plain
    Unix file system driver (ROMIO's and OMPIO's ufs), so the call tested is the same; the
    Open MPI run took 11-14 s on the disk (page cache, block allocation and writeback of
    2 GiB), 6.5-8 s in /dev/shm."""
    shm = Path("/dev/shm")
    if (shm.is_dir() and os.access(shm, os.W_OK)
            and shutil.disk_usage(shm).free > BIG + (1 << 30)
            and _free_memory() > 2 * BIG + (2 << 30)):
        where = Path(tempfile.mkdtemp(prefix="iolab-2gib.", dir=shm))
        try:
            yield where
        finally:
            shutil.rmtree(where, ignore_errors=True)
    else:
        yield scratch


@pytest.mark.parametrize("flavour", ["default", "mpich"])
def test_one_transfer_over_2_gib(request: pytest.FixtureRequest, big_scratch: Path,
                                 flavour: str):
    """One MPI_File_write_at/read_at of 2 GiB + 4 KiB: an int count cannot say it, so the
    backend describes it with a derived type; every byte lands and verifies, in one call."""
    e = flavour_engine(request, flavour)
    big = BIG
    r = run_engine(e, 1, ["--api", "mpiio", "--transfer", str(big), "--block", str(big),
                          "--path", str(big_scratch / "f"), "--quiet", "--verify"],
                   big_scratch, timeout=600)
    assert r.rc == 0, r.stderr
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == big and ph["ops"] == 1
    assert doc(r)["verify"] == {"enabled": True, "errors": 0, "first_bad": None}


@pytest.mark.parametrize("flavour", ["default", "mpich"])
@pytest.mark.parametrize("api,extra,what", [
    ("hdf5", ["--transfer", "2G", "--block", "2G"], "(--transfer)"),
    ("hdf5", ["--transfer", "1G", "--block", "3G", "--file-view"], "with --file-view"),
    ("pnetcdf", ["--transfer", "2G", "--block", "2G"], "(--transfer)"),
])
def test_calls_the_library_cannot_make_are_bad_input(request: pytest.FixtureRequest,
                                                     scratch: Path, flavour: str, api: str,
                                                     extra: list[str], what: str):
    """HDF5 1.10 and PnetCDF 1.12 fail a single call of 2 GiB or more with a bare EIO: the
    engine says so before the run (one line, exit 2, nothing allocated or written)."""
    e = flavour_engine(request, flavour)
    if api not in e.apis:
        pytest.skip(f"api {api} is not built into {e.binary.name}")
    r = run_refused(e, 2, ["--api", api, *extra, "--path", str(scratch / "f"), "--quiet"],
                    scratch.parent)
    assert r.rc == 2 and r.doc is None, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"api {api}: one call would move" in line and what in line, line
    assert "use a smaller --transfer" in line
    assert list(scratch.iterdir()) == []
