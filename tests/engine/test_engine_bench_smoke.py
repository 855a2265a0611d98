"""The comparison scripts in bench/ run end to end with tiny sizes (smoke tests, not
measurements): engine_vs_ior, btio, metadata_vs_mdtest, queue_vs_fio."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import Engine, _env, run_engine

REPO = Path(__file__).resolve().parents[2]


def test_engine_vs_ior_smoke(engine: Engine, tmp_path: Path):
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nother sections stay\n")
    env = {**_env(), "IOLAB_BENCH": str(engine.binary)}
    env.pop("IOR", None)
    p = subprocess.run([sys.executable, str(REPO / "bench" / "engine_vs_ior"), "--rounds", "1",
                        "--mib-per-rank", "0.0625", "--only", "POSIX fpp buffered",
                        "--dir", str(tmp_path / "scratch"), "--output", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "other sections stay" in text
    assert text.count("<!-- engine_vs_ior:begin -->") == 1
    rows = [ln for ln in text.splitlines() if ln.startswith("| POSIX fpp buffered")]
    assert len(rows) == 6  # 3 transfer sizes x write/read
    for row in rows:
        iolab = row.split("|")[3].strip()
        assert iolab != "–" and float(iolab.split()[0]) > 0, row
    # its own scratch files are gone; --dir itself stays (it may hold the user's files)
    assert (tmp_path / "scratch").is_dir() and not any((tmp_path / "scratch").iterdir())
    assert os.environ.get("IOR") is None or "IOR" in text


def run_script(name: str, engine: Engine, tmp_path: Path, *args: str,
               drop_env: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess, str]:
    """bench/<name> at tiny sizes into a docs file of its own; returns the run and the file."""
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nother sections stay\n")
    env = {**_env(), "IOLAB_BENCH": str(engine.binary)}
    for k in drop_env:
        env.pop(k, None)
    p = subprocess.run([sys.executable, str(REPO / "bench" / name), *args, "--rounds", "1",
                        "--dir", str(tmp_path / "scratch"), "--output", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "expected duration about" in p.stderr
    text = out.read_text()
    assert "other sections stay" in text and text.count(f"<!-- {name}:begin -->") == 1
    assert not any((tmp_path / "scratch").iterdir())
    return p, text


def first_cell(row: str, column: int) -> float | None:
    cell = row.split("|")[column].strip()
    return None if cell == "–" else float(cell.split()[0])


def test_btio_smoke(engine: Engine, tmp_path: Path):
    _, text = run_script("btio", engine, tmp_path, "--grid", "8x8x8", "--steps", "1")
    rows = {ln.split("|")[1].strip(): ln for ln in text.splitlines()
            if ln.startswith(("| MPI ", "| PnetCDF "))}
    assert len(rows) == 4
    for method, row in rows.items():
        if method.startswith("PnetCDF") and "pnetcdf" not in engine.apis:
            continue
        for column in (2, 3):  # default, CSC hints
            value = first_cell(row, column)
            assert value is not None and value > 0, row


def test_metadata_vs_mdtest_smoke(engine: Engine, tmp_path: Path):
    _, text = run_script("metadata_vs_mdtest", engine, tmp_path, "--files", "20",
                         "--settle", "0", drop_env=("MDTEST",))
    assert "synced and idle 0 s before each run" in text
    assert "| preset | phase | iolab-bench | mdtest | ratio | 95% CI | verdict |" in text
    rows = [ln for ln in text.splitlines() if ln.startswith(("| easy", "| hard"))]
    assert [r.split("|")[2].strip() for r in rows] == ["create", "stat", "open_read",
                                                       "remove"] * 2
    for row in rows:
        value = first_cell(row, 3)
        assert value is not None and value > 0, row
        assert len(row.split("|")) == 9, row  # 7 cells


def benchtools():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import benchtools as bt
    finally:
        sys.path.remove(str(REPO / "bench"))
    return bt


@pytest.mark.parametrize("num,den,verdict", [
    # iolab twice as fast in every round, give or take 5%: faster
    ([2.0, 2.1, 1.9, 2.05, 1.95, 2.0], [1.0] * 6, "faster"),
    ([0.5, 0.52, 0.49, 0.5, 0.51, 0.48], [1.0] * 6, "slower"),
    # the rounds disagree (+-10% around equal): the interval holds 1
    ([1.1, 0.9, 1.1, 0.9, 1.1, 0.9], [1.0] * 6, "same within noise"),
    # a drift that moves both tools alike is no noise for a paired interval
    ([1.1, 2.2, 3.3, 4.4, 5.5, 6.6], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "faster"),
    ([1.0, 1.0, 1.0, 1.0], [1.0] * 4, "too few rounds"),
])
def test_ratio_interval_and_verdict(num: list[float], den: list[float], verdict: str):
    bt = benchtools()
    cells = bt.ratio_cells([{"x": v} for v in num], [{"x": v} for v in den], "x")
    ratio, ci, said = (c.strip() for c in cells.split("|"))
    assert said == verdict, cells
    if verdict == "too few rounds":
        assert ci == "–"
        return
    low, high = (float(x) for x in ci.split("–"))
    assert low <= float(ratio) <= high, cells


def test_ratio_pairs_rounds():
    """A round where one tool failed leaves both tools' values of that round out of the
    ratio (mdtest's outlier of round 0 has no iolab run beside it)."""
    bt = benchtools()
    io = [None] + [{"x": 1.0}] * 5
    md = [{"x": 100.0}] + [{"x": 1.0}] * 5
    assert bt.ratio_cells(io, md, "x") == "1.00 | 1.00–1.00 | same within noise"
    assert bt.values(md, "x") == [100.0] + [1.0] * 5


def test_queue_vs_fio_smoke(engine: Engine, tmp_path: Path):
    """Each iolab engine beside fio's same engine; the default's column names the engine
    --posix.aio auto took for the operation."""
    probe = run_engine(engine, 1, ["--posix.queue-depth", "2", "--transfer", "4K", "--block",
                                   "8K", "--path", str(tmp_path / "probe")], tmp_path)
    if probe.rc != 0 and "needs liburing" in probe.stderr + probe.why():
        pytest.skip("iolab-bench was built without liburing or libaio (--posix.queue-depth)")
    built = [e for e in ("io_uring", "libaio")
             if run_engine(engine, 1, ["--posix.queue-depth", "2", "--posix.aio", e,
                                       "--transfer", "4K", "--block", "8K", "--path",
                                       str(tmp_path / "probe")], tmp_path).rc == 0]
    # --settle 0: the idle second before each of the 8 runs is for a measurement's quality
    _, text = run_script("queue_vs_fio", engine, tmp_path, "--size-mib", "2", "--settle", "0")
    assert "synced and idle 0 s before each run" in text
    assert "| op | engine | iolab-bench | fio | ratio | 95% CI | verdict |" in text
    rows = {tuple(c.strip() for c in ln.split("|")[1:3]): ln for ln in text.splitlines()
            if ln.startswith(("| write", "| read"))}
    for op in ("write", "read"):
        for e in ("io_uring", "libaio"):
            value = first_cell(rows[(op, e)], 3)
            assert (value is not None and value > 0) == (e in built), rows[(op, e)]
    if set(built) == {"io_uring", "libaio"} and shutil.which("fio"):
        default = {op: label for op, label in rows if label.startswith("default")}
        assert default["write"].startswith("default (libaio) / better fio"), default
        assert default["read"].startswith("default (io_uring) / better fio"), default
        assert len(rows) == 6


# mdtest 4.0's output with -P --print-all-procs (2 ranks x 300 files, the rate tables cut)
MDTEST_OUTPUT = """\
SUMMARY rate: (of 1 iterations)
   Operation                     Max            Min           Mean        Std Dev
   ---------                     ---            ---           ----        -------
   File creation               11307.332      11307.332      11307.332          0.000
   File stat                  580794.461     580794.461     580794.461          0.000
   File read                  205619.936     205619.936     205619.936          0.000
   File removal               116686.716     116686.716     116686.716          0.000
   Tree creation               18893.261      18893.261      18893.261          0.000

Per process result (time):
iteration: 0
Test File creation 5.304098e-02,4.988694e-02
Test File stat 9.818077e-04,1.009941e-03
Test File read 2.902985e-03,2.899885e-03
Test File removal 5.132914e-03,5.084991e-03
Test Tree creation 0.000000e+00,0.000000e+00

SUMMARY time: (of 1 iterations)
   Operation                     Max            Min           Mean        Std Dev
   ---------                     ---            ---           ----        -------
   File creation                   0.053          0.053          0.053          0.000
   File stat                       0.001          0.001          0.001          0.000
"""


def test_mdtest_timed_as_iolab_times_a_phase():
    """mdtest's rate in bench/metadata_vs_mdtest: all ranks' files / the slowest rank's time
    before the closing barrier (its per-process times), beside its own summary rate; the
    SUMMARY time table (seconds) is never read as a rate."""
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec, spec_from_loader

    sys.path.insert(0, str(REPO / "bench"))
    try:
        loader = SourceFileLoader("metadata_vs_mdtest", str(REPO / "bench" / "metadata_vs_mdtest"))
        spec = spec_from_loader(loader.name, loader)
        assert spec is not None
        mod = module_from_spec(spec)
        loader.exec_module(mod)
    finally:
        sys.path.remove(str(REPO / "bench"))
    found = mod.parse_mdtest(MDTEST_OUTPUT, 300)
    assert found["create"] == pytest.approx(600 / 5.304098e-02)
    assert found["stat"] == pytest.approx(600 / 1.009941e-03)
    assert found["open_read"] == pytest.approx(600 / 2.902985e-03)
    assert found["own_create"] == 11307.332 and found["own_remove"] == 116686.716
    assert found["stat"] > found["own_stat"]  # the closing barrier is not in it
