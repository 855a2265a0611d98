"""Every API x layout with 1, 2 and 4 ranks, with --verify: the bytes and call counts the
layout implies, no verify errors, every scratch file removed at the end."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import XFERS, B, Engine, S, T, expected_ops, run_engine

APIS = ["null", "posix", "mpiio", "hdf5", "pnetcdf"]
LAYOUTS = ["fpp", "segmented", "strided", "serial", "subset"]


def need_api(engine: Engine, api: str) -> None:
    if api not in engine.apis:
        pytest.skip(f"api {api} is not built into {engine.binary.name} (built: {engine.apis})")


def base_args(api: str, layout: str, path: Path) -> list[str]:
    args = ["--api", api, "--layout", layout, "--transfer", str(T), "--block", str(B),
            "--segments", str(S), "--path", str(path / "f"), "--quiet", "--group", "2"]
    return args + ([] if api == "null" else ["--verify"])


@pytest.mark.parametrize("np", [1, 2, 4])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("api", APIS)
def test_api_layout_verify(engine: Engine, scratch: Path, api: str, layout: str, np: int):
    need_api(engine, api)
    r = run_engine(engine, np, base_args(api, layout, scratch), scratch.parent)
    assert r.rc == 0, r.why()
    assert r.doc is not None and r.doc["status"] == "ok"
    total = np * B * S
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == total
        assert ph["ops"] == expected_ops(layout, np)
        assert sum(p["bytes"] for p in ph["per_rank"]) == total
        assert len(ph["per_rank"]) == np
        assert ph["time_s"] > 0 and ph["bw_bytes_per_s"] > 0
    assert r.doc["verify"] == {"enabled": api != "null", "errors": 0, "first_bad": None}
    assert list(scratch.iterdir()) == [], "scratch files left behind"


@pytest.mark.parametrize("mode", ["collective", "file-view", "collective+file-view"])
@pytest.mark.parametrize("layout", ["segmented", "strided"])
@pytest.mark.parametrize("api", ["null", "mpiio", "hdf5", "pnetcdf"])
def test_collective_and_file_view(engine: Engine, scratch: Path, api: str, layout: str,
                                  mode: str):
    need_api(engine, api)
    flags = ["--" + m for m in mode.split("+")]
    r = run_engine(engine, 4, base_args(api, layout, scratch) + flags, scratch.parent)
    if r.rc == 2 and "needs an api with" in r.stderr:
        pytest.skip(f"api {api} lacks {mode}: {r.stderr.strip()}")
    assert r.rc == 0, r.why()
    for op in ("write", "read"):
        (ph,) = r.phases(op)
        assert ph["bytes"] == 4 * B * S
        # a file view moves each rank's whole data with one call
        assert ph["ops"] == (4 if "file-view" in mode else 4 * XFERS)
    assert r.doc is not None and r.doc["verify"]["errors"] == 0
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("group_files", ["aggregator", "shared"])
def test_subset_files(engine: Engine, scratch: Path, group_files: str):
    """N:M: 4 ranks in groups of 2 write 2 aggregator files, or one shared file."""
    args = base_args("posix", "subset", scratch) + ["--group-files", group_files, "--keep",
                                                     "--write"]
    r = run_engine(engine, 4, args, scratch.parent)
    assert r.rc == 0, r.why()
    files = sorted(p.name for p in scratch.iterdir())
    if group_files == "aggregator":
        assert files == ["f.a0", "f.a1"]
        assert all((scratch / f).stat().st_size == 2 * B * S for f in files)
    else:
        assert files == ["f"] and (scratch / "f").stat().st_size == 4 * B * S
    (ph,) = r.phases("write")
    # only aggregators (ranks 0 and 2) touch the file system
    assert [p["bytes"] for p in ph["per_rank"]] == [2 * B * S, 0, 2 * B * S, 0]
