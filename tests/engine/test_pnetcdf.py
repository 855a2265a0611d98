"""The pnetcdf backend: CDF-5 files that verify in independent and collective data mode, with
varn for --file-view, fill mode, PnetCDF's own hints among the effective ones, ENOSPC, and the
MPICH build that leaves it out (Debian has no PnetCDF for MPICH).

Every API x layout x (1, 2, 4) ranks with the default build lives in test_engine_layouts.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import XFERS, B, Engine, S, T, doc, run_engine


def args(layout: str, path: Path, *extra: str) -> list[str]:
    return ["--api", "pnetcdf", "--layout", layout, "--transfer", str(T), "--block", str(B),
            "--segments", str(S), "--path", str(path / "f"), "--quiet", "--group", "2",
            "--verify", *extra]


@pytest.fixture
def nc_engine(engine: Engine) -> Engine:
    if "pnetcdf" not in engine.apis:
        pytest.skip(f"pnetcdf is not built into {engine.binary.name} (libpnetcdf-dev)")
    return engine


@pytest.mark.parametrize("mode", [[], ["--collective"], ["--file-view"],
                                  ["--collective", "--file-view"]])
@pytest.mark.parametrize("layout", ["fpp", "segmented", "strided"])
def test_file_is_cdf5_and_verifies(nc_engine: Engine, scratch: Path, layout: str,
                                   mode: list[str]):
    """3 ranks (not a power of two), every data mode; the file is CDF-5 ("CDF\\x05") and
    holds the variable's bytes after its header."""
    r = run_engine(nc_engine, 3, args(layout, scratch, "--keep", *mode), scratch.parent)
    assert r.rc == 0, r.stderr
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == 3 * B * S
        assert ph["ops"] == (3 if "--file-view" in mode else 3 * XFERS)
    assert doc(r)["verify"]["errors"] == 0
    files = sorted(scratch.iterdir())
    assert len(files) == (3 if layout == "fpp" else 1)
    for f in files:
        raw = f.read_bytes()
        assert raw[:4] == b"CDF\x05"
        per_file = B * S if layout == "fpp" else 3 * B * S
        assert per_file < len(raw) <= per_file + 4096  # data + a small header


@pytest.mark.parametrize("fill", [False, True])
def test_fill_mode(nc_engine: Engine, scratch: Path, fill: bool):
    """--pnetcdf.fill writes fill values at define time (ncmpi_set_fill NC_FILL); the data
    written afterwards still verifies. The option lands in the config."""
    extra = ["--pnetcdf.fill"] if fill else []
    r = run_engine(nc_engine, 2, args("strided", scratch, "--collective", *extra),
                   scratch.parent)
    assert r.rc == 0, r.stderr
    assert doc(r)["config"]["pnetcdf_fill"] is fill
    assert doc(r)["verify"]["errors"] == 0


@pytest.mark.parametrize("mode", [[], ["--collective"], ["--file-view"],
                                  ["--collective", "--file-view"]])
def test_nonblocking_verifies_with_hints(nc_engine: Engine, scratch: Path, mode: list[str]):
    """--pnetcdf.nonblocking (ncmpi_iput/iget_vara, _varn with --file-view, then
    ncmpi_wait_all in collective data mode, ncmpi_wait in independent): the data verifies,
    the file is the same CDF-5 file as the blocking calls write, and the hints reach the
    file (PnetCDF's own nc_header_align_size moves the data to 8192)."""
    r = run_engine(nc_engine, 3, args("strided", scratch, "--keep", "--pnetcdf.nonblocking",
                                      "--hint", "nc_header_align_size=8192", *mode),
                   scratch.parent)
    assert r.rc == 0, r.stderr
    d = doc(r)
    assert d["config"]["pnetcdf_nonblocking"] is True and d["verify"]["errors"] == 0
    assert d["hints"]["effective"]["nc_header_align_size"] == "8192"
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == 3 * B * S
    raw = (scratch / "f").read_bytes()
    assert raw[:4] == b"CDF\x05" and len(raw) == 8192 + 3 * B * S
    nonblocking_file = raw
    (scratch / "f").unlink()
    r = run_engine(nc_engine, 3, args("strided", scratch, "--keep", "--hint",
                                      "nc_header_align_size=8192", *mode), scratch.parent)
    assert r.rc == 0, r.stderr
    assert (scratch / "f").read_bytes() == nonblocking_file


def test_read_only_run_with_reorder(nc_engine: Engine, scratch: Path):
    w = run_engine(nc_engine, 4, args("segmented", scratch, "--write", "--keep"),
                   scratch.parent)
    assert w.rc == 0, w.stderr
    r = run_engine(nc_engine, 4, args("segmented", scratch, "--read", "--reorder",
                                      "--collective"), scratch.parent)
    assert r.rc == 0, r.stderr
    (ph,) = r.phases("read")
    assert ph["bytes"] == 4 * B * S and ph["reorder_shift"] == 1
    assert doc(r)["verify"]["errors"] == 0


def test_hints_include_pnetcdf_own(nc_engine: Engine, scratch: Path):
    """ncmpi_inq_file_info: the MPI-IO hints plus PnetCDF's (nc_header_align_size ...); under
    Open MPI nothing is verifiable."""
    r = run_engine(nc_engine, 2, args("strided", scratch, "--hint", "cb_buffer_size=1048576",
                                      "--hint", "nc_header_align_size=4096"), scratch.parent)
    assert r.rc == 0, r.stderr
    h = doc(r)["hints"]
    assert h["effective"]["cb_buffer_size"] == "1048576"
    assert h["effective"]["nc_header_align_size"] == "4096"
    assert {"nc_var_align_size", "nc_ibuf_size"} <= set(h["effective"])
    assert h["verifiable"] is False
    assert sorted(h["unverified"]) == ["cb_buffer_size", "nc_header_align_size"]


def test_left_out_of_the_mpich_build(mpich_engine: Engine, scratch: Path):
    """Debian builds PnetCDF for Open MPI only: the MPICH engine leaves it out and says so."""
    if "pnetcdf" in mpich_engine.apis:
        pytest.skip("this MPICH build has PnetCDF")
    r = run_engine(mpich_engine, 1, args("fpp", scratch), scratch.parent)
    assert r.rc == 2 and "api 'pnetcdf' is not built" in r.stderr, r.stderr
