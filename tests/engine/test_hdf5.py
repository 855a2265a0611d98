"""The hdf5 backend (parallel HDF5 over MPI-IO): layouts with the MPICH build, chunked and
aligned datasets that verify and really are chunked and aligned in the file, effective hints
read from the MPI file under HDF5, bad options, ENOSPC.

Every API x layout x (1, 2, 4) ranks with the default build lives in test_engine_layouts.py."""

from __future__ import annotations

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
    run_engine,
    run_refused,
)


def args(layout: str, path: Path, *extra: str, api: str = "hdf5") -> list[str]:
    return ["--api", api, "--layout", layout, "--transfer", str(T), "--block", str(B),
            "--segments", str(S), "--path", str(path / "f"), "--quiet", "--group", "2",
            "--verify", *extra]


def need_hdf5(e: Engine) -> Engine:
    if "hdf5" not in e.apis:
        pytest.skip(f"hdf5 is not built into {e.binary.name} (no parallel HDF5 for its MPI)")
    return e


def flavour_engine(request: pytest.FixtureRequest, flavour: str) -> Engine:
    return need_hdf5(request.getfixturevalue("engine" if flavour == "default"
                                             else "mpich_engine"))


def check_ok(r: Result, np: int, ops: int) -> None:
    assert r.rc == 0, r.stderr
    assert doc(r)["status"] == "ok"
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == np * B * S and ph["ops"] == ops
    assert doc(r)["verify"] == {"enabled": True, "errors": 0, "first_bad": None}


@pytest.mark.parametrize("np", [1, 2, 4])
@pytest.mark.parametrize("layout", ["fpp", "segmented", "strided", "serial", "subset"])
def test_mpich_layout_verify(mpich_engine: Engine, scratch: Path, layout: str, np: int):
    """The MPICH build: every layout with collective transfers verifies."""
    e = need_hdf5(mpich_engine)
    r = run_engine(e, np, args(layout, scratch, "--collective"), scratch.parent)
    check_ok(r, np, expected_ops(layout, np))
    assert list(scratch.iterdir()) == []


def data_offset(hdf5_file: Path, pattern: bytes) -> int:
    """Where the dataset's first bytes (rank 0, offset 0) sit in the HDF5 file."""
    at = hdf5_file.read_bytes().find(pattern)
    assert at >= 0, "the dataset's first bytes are not in the file"
    return at


@pytest.fixture
def first_bytes(engine: Engine, scratch: Path, tmp_path: Path) -> bytes:
    """The first 64 bytes rank 0 writes with --verify (a plain posix file of the same run)."""
    d = tmp_path / "posix"
    d.mkdir()
    r = run_engine(engine, 1, args("fpp", d, "--write", "--keep", api="posix"), tmp_path)
    assert r.rc == 0, r.stderr
    return (d / "f.0").read_bytes()[:64]


@pytest.mark.parametrize("align,expect", [(None, None), ("64K", 65536), ("1M", 1048576)])
def test_alignment_places_the_dataset(engine: Engine, scratch: Path, first_bytes: bytes,
                                      align: str | None, expect: int | None):
    """--hdf5.align A: the dataset's data starts at a multiple of A (H5Pset_alignment);
    without it, right after the metadata."""
    need_hdf5(engine)
    extra = ["--hdf5.align", align] if align else []
    r = run_engine(engine, 1, args("fpp", scratch, *extra, "--keep"), scratch.parent)
    check_ok(r, 1, XFERS)
    at = data_offset(scratch / "f.0", first_bytes)
    if expect is None:
        assert 0 < at < 65536 and at % 65536 != 0
    else:
        assert at == expect


@pytest.mark.parametrize("mode", [[], ["--collective"], ["--file-view"],
                                  ["--collective", "--file-view"]])
@pytest.mark.parametrize("chunk", ["0", "4K", "6K"])
def test_chunked_dataset_verifies(engine: Engine, scratch: Path, chunk: str,
                                  mode: list[str]):
    """--hdf5.chunk C: a chunked dataset (its chunk index, a v1 B-tree of raw-data chunks,
    "TREE" node type 1, is in the file; a contiguous one has none). Chunks that do not divide
    the transfers (6K) verify as well."""
    need_hdf5(engine)
    r = run_engine(engine, 4, args("strided", scratch, "--hdf5.chunk", chunk, "--keep",
                                   "--hdf5.align", "4K", *mode), scratch.parent)
    check_ok(r, 4, 4 if "--file-view" in mode else 4 * XFERS)
    raw = (scratch / "f").read_bytes()
    assert (b"TREE\x01" in raw) == (chunk != "0")


def test_chunk_larger_than_the_dataset(engine: Engine, scratch: Path):
    """A chunk larger than the file's dataset is clipped to it (HDF5 refuses bigger chunks
    for a fixed-size dataset)."""
    need_hdf5(engine)
    r = run_engine(engine, 2, args("fpp", scratch, "--hdf5.chunk", "1G"), scratch.parent)
    check_ok(r, 2, 2 * XFERS)


@pytest.mark.parametrize("extra,needle", [
    (["--hdf5.chunk", "4G"], "HDF5 chunks must be below 4 GiB"),
    (["--hdf5.align-threshold", "1M"], "needs --hdf5.align"),
    (["--hdf5.chunk", "x"], "hdf5.chunk"),
])
def test_bad_options(engine: Engine, scratch: Path, extra: list[str], needle: str):
    need_hdf5(engine)
    r = run_refused(engine, 2, args("fpp", scratch, *extra), scratch.parent)
    assert r.rc == 2 and needle in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.doc is None


def test_read_shorter_dataset_fails_cleanly(engine: Engine, scratch: Path):
    """A read-only run whose layout is longer than the dataset written earlier: the file is
    big enough for the core's size check (alignment padding), the dataset is not; the open
    says so, on every rank, without a hang."""
    need_hdf5(engine)
    w = run_engine(engine, 2, args("segmented", scratch, "--hdf5.align", "1M", "--write",
                                   "--keep"), scratch.parent)
    assert w.rc == 0, w.stderr
    a = args("segmented", scratch, "--read")
    a[a.index("--segments") + 1] = "4"
    r = run_engine(engine, 2, a, scratch.parent, timeout=60)
    assert r.rc == 1, r.stderr
    err = doc(r)["error"]
    assert err["phase"] == "read" and err["bytes_done"] == 0
    assert f"has {2 * B * S} bytes but the layout reads {2 * B * 4}" in err["message"]


@pytest.mark.parametrize("flavour", ["default", "mpich"])
def test_effective_hints_come_from_the_mpi_file(request: pytest.FixtureRequest,
                                                scratch: Path, flavour: str):
    """The hints of the MPI file HDF5 opened (not the ones HDF5 was handed): with ROMIO the
    full effective set, an unknown key dropped; with OMPIO, unverifiable."""
    e = flavour_engine(request, flavour)
    r = run_engine(e, 2, args("strided", scratch, "--collective", "--hint",
                              "cb_buffer_size=1048576", "--hint", "iolab_no_such_hint=1"),
                   scratch.parent)
    assert r.rc == 0, r.stderr
    h = doc(r)["hints"]
    assert h["effective"]["cb_buffer_size"] == "1048576"
    if flavour == "mpich":
        assert h["verifiable"] is True and h["ignored"] == ["iolab_no_such_hint"]
        assert "romio_cb_write" in h["effective"]
    else:
        assert h["verifiable"] is False
        assert sorted(h["unverified"]) == ["cb_buffer_size", "iolab_no_such_hint"]


@pytest.mark.parametrize("flavour", ["default", "mpich"])
@pytest.mark.parametrize("layout", ["fpp", "strided"])
def test_file_system_full_before_open(request: pytest.FixtureRequest, scratch: Path,
                                      small_fs: Path, flavour: str, layout: str):
    """Expected: exit 1, errno 28, no crash. Was: the dataset did not fit, the clean-up's
    H5Fclose failed, and HDF5 crashed in MPI_Finalize (SIGSEGV)."""
    e = flavour_engine(request, flavour)
    (small_fs / "filler").write_bytes(b"\1" * (15 * 65536))
    (small_fs / "d").mkdir()
    a = ["--api", "hdf5", "--path", str(small_fs / "d" / "f"), "--layout", layout,
         "--transfer", "64K", "--block", "64K", "--quiet"]
    r = run_engine(e, 2, a, scratch, timeout=60)
    assert r.rc == 1, r.stderr
    assert "Segmentation" not in r.stderr
    err = doc(r)["error"]
    assert err["errno"] == 28 and err["bytes_done"] == 0
    assert list((small_fs / "d").iterdir()) == []


def test_direct_driver_or_a_clear_refusal(engine: Engine, scratch: Path):
    """--hdf5.direct: HDF5's direct driver where this HDF5 has it (then the data verifies),
    else one line saying the build lacks it (Debian's HDF5 does), exit 2, nothing written."""
    need_hdf5(engine)
    r = run_engine(engine, 2, ["--api", "hdf5", "--hdf5.direct", "--layout", "fpp",
                               "--transfer", "4K", "--block", "16K", "--path",
                               str(scratch / "f"), "--quiet", "--verify"], scratch.parent)
    if r.rc == 2:
        assert "was built without its direct driver" in r.stderr, r.stderr
        assert list(scratch.iterdir()) == []
        return
    assert r.rc == 0 and doc(r)["verify"]["errors"] == 0, r.stderr
    r = run_engine(engine, 2, ["--api", "hdf5", "--hdf5.direct", "--layout", "segmented",
                               "--path", str(scratch / "f"), "--quiet"], scratch.parent)
    assert r.rc == 2 and "serial driver" in r.stderr
