"""The MPICH build (iolab-bench-mpich under mpirun.mpich): layouts with --verify, and MPI-IO
hints, which ROMIO reports for real (Open MPI only echoes them: checked too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from engine_helpers import B, Engine, S, T, _env, run_engine


def need(engine: Engine, api: str) -> None:
    if api not in engine.apis:
        pytest.skip(f"api {api} is not built into {engine.binary.name} (built: {engine.apis})")


def args(scratch: Path, api: str, layout: str, *extra: str) -> list[str]:
    return ["--api", api, "--layout", layout, "--transfer", str(T), "--block", str(B),
            "--segments", str(S), "--group", "2", "--path", str(scratch / "f"), "--quiet",
            *extra]


@pytest.mark.parametrize("np", [4])
@pytest.mark.parametrize("layout", ["fpp", "segmented", "strided", "serial", "subset"])
@pytest.mark.parametrize("api", ["posix", "mpiio", "hdf5"])
def test_mpich_layouts_verify(mpich_engine: Engine, scratch: Path, api: str, layout: str,
                              np: int):
    need(mpich_engine, api)
    r = run_engine(mpich_engine, np, args(scratch, api, layout, "--verify"), scratch.parent)
    assert r.rc == 0, r.stderr
    assert r.doc is not None and r.doc["verify"]["errors"] == 0
    assert "MPICH" in r.doc["environment"]["mpi_library"]
    assert r.doc["environment"]["mpiio_implementation"] == "romio"
    for ph in r.phases():
        assert ph["bytes"] == np * B * S
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("layout", ["segmented", "strided"])
@pytest.mark.parametrize("flags", [["--collective"], ["--collective", "--file-view"],
                                   ["--file-view"]])
def test_mpich_mpiio_collective(mpich_engine: Engine, scratch: Path, layout: str,
                                flags: list[str]):
    need(mpich_engine, "mpiio")
    r = run_engine(mpich_engine, 4, args(scratch, "mpiio", layout, "--verify", *flags),
                   scratch.parent)
    assert r.rc == 0, r.stderr
    assert r.doc is not None and r.doc["verify"]["errors"] == 0
    (wr,) = r.phases("write")
    assert wr["ops"] == (4 if "--file-view" in flags else 4 * B * S // T)


def test_mpich_hints_round_trip_and_ignored(mpich_engine: Engine, scratch: Path):
    """ROMIO reports cb_buffer_size as set, and drops a key it does not know."""
    need(mpich_engine, "mpiio")
    r = run_engine(mpich_engine, 2, args(scratch, "mpiio", "strided", "--collective",
                                         "--hint", "cb_buffer_size=1048576",
                                         "--hint", "iolab_no_such_hint=7"), scratch.parent)
    assert r.rc == 0, r.stderr
    assert r.doc is not None
    h = r.doc["hints"]
    assert h["verifiable"] is True
    assert h["requested"] == {"cb_buffer_size": "1048576", "iolab_no_such_hint": "7"}
    assert h["sources"]["cb_buffer_size"] == "command line"
    assert h["effective"]["cb_buffer_size"] == "1048576"
    assert "iolab_no_such_hint" not in h["effective"]
    assert h["ignored"] == ["iolab_no_such_hint"]
    # ROMIO reports hints nobody asked for: the real state of the library
    assert {"cb_nodes", "romio_cb_write"} <= set(h["effective"])


def test_mpich_hints_in_table(mpich_engine: Engine, scratch: Path):
    need(mpich_engine, "mpiio")
    a = [x for x in args(scratch, "mpiio", "strided", "--hint", "cb_buffer_size=1048576",
                         "--hint", "iolab_no_such_hint=7") if x != "--quiet"]
    p = subprocess.run(mpich_engine.argv(2, [*a, "--json", str(scratch.parent / "t.json")]),
                       capture_output=True, text=True, env=_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    assert "hint cb_buffer_size=1048576 (command line): in effect" in p.stdout
    assert "hint iolab_no_such_hint=7 (command line): IGNORED by the library" in p.stdout


def test_mpich_hint_sources(mpich_engine: Engine, scratch: Path, tmp_path: Path):
    """ROMIO_HINTS < --hints-file < --hint; each key says where it came from."""
    need(mpich_engine, "mpiio")
    env_file = tmp_path / "romio-hints"
    env_file.write_text("cb_buffer_size 2097152\nromio_cb_write enable\n")
    hints_file = tmp_path / "hints"
    hints_file.write_text("# comment\ncb_buffer_size 4194304\ncb_nodes 1\n")
    r = run_engine(mpich_engine, 2,
                   args(scratch, "mpiio", "segmented", "--hints-file", str(hints_file),
                        "--hint", "cb_nodes=1"),
                   scratch.parent, env={"ROMIO_HINTS": str(env_file)})
    assert r.rc == 0, r.stderr
    assert r.doc is not None
    h = r.doc["hints"]
    assert h["requested"] == {"cb_buffer_size": "4194304", "romio_cb_write": "enable",
                              "cb_nodes": "1"}
    assert h["sources"] == {"cb_buffer_size": "hints file", "romio_cb_write": "ROMIO_HINTS",
                            "cb_nodes": "command line"}
    assert h["effective"]["cb_buffer_size"] == "4194304"
    assert h["effective"]["romio_cb_write"] == "enable"
    assert h["ignored"] == []


@pytest.mark.parametrize("io,impl", [(None, "ompio"), ("romio321", "romio")])
def test_openmpi_hints_not_verifiable(engine: Engine, scratch: Path, io: str | None,
                                      impl: str):
    """Open MPI echoes any key (unknown ones too), with OMPIO and with its ROMIO
    (`--mca io romio321`): say "cannot verify", never "applied"; name the implementation."""
    need(engine, "mpiio")
    r = run_engine(engine, 2, args(scratch, "mpiio", "strided", "--verify", "--hint",
                                   "cb_buffer_size=1048576", "--hint", "iolab_no_such_hint=7"),
                   scratch.parent, env={"OMPI_MCA_io": io} if io else None)
    assert r.rc == 0, r.stderr
    assert r.doc is not None and r.doc["verify"]["errors"] == 0
    h = r.doc["hints"]
    assert r.doc["environment"]["mpiio_implementation"] == impl
    assert h["verifiable"] is False and h["ignored"] == []
    assert sorted(h["unverified"]) == ["cb_buffer_size", "iolab_no_such_hint"]


@pytest.mark.parametrize("bad,needle", [
    (["--hint", "cb_nodes"], "expected key=value"),
    (["--hints-file", "/nonexistent/hints"], "cannot read hints file"),
])
def test_mpich_bad_hints(mpich_engine: Engine, scratch: Path, bad: list[str], needle: str):
    need(mpich_engine, "mpiio")
    r = run_engine(mpich_engine, 2, args(scratch, "mpiio", "fpp", *bad), scratch.parent)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.rc == 2 and len(lines) == 1 and needle in lines[0], r.stderr
