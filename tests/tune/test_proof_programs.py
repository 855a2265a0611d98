"""The whole loop on real programs of the four shapes of issue 32: ``iolab profile`` the
program, ``iolab diagnose`` its profile, then the proof step (``iolab tune --from-log LOG --
COMMAND``) on the very command, under Open MPI (OMPIO, the default) and MPICH (ROMIO).

The programs are written as users write them (tests/tune/progs): h5_slab.c, an HDF5 kernel
with independent transfers writing a contiguous 1-D dataset, the same writing a strided
hyperslab, its strided read; pnc_checkpoint.f90, a Fortran PnetCDF non-blocking checkpoint
(nf90mpi_iput_var + nf90mpi_wait_all). Each proof is scored by the program's own MiB/s line
(--metric), so mpirun's start-up does not drown the I/O.

What is known by construction and asserted:
- HDF5's independent transfers of a strided selection reach MPI-IO as one call per piece
  (the profile shows it), so no ROMIO hint can merge them: collective buffering acts only
  inside collective calls, data sieving only inside one call of several pieces. diagnose
  proposes none (was: romio_cb_write enable); collective transfers stay an experiment.
- Collective HDF5 metadata made h5_slab slower under MPICH: it is an experiment, never the
  first predicted setting, and the finding says what was measured.
- The PnetCDF checkpoint's collective writes under OMPIO spend their time in OMPIO's
  exchange (MPI-IO far above POSIX): diagnose predicts OMPI_MCA_fcoll=two_phase, which the
  proof step runs on the command (was: no setting at all).
- A log whose fixes are all code changes runs nothing: no empty "fix" is timed against
  the unchanged command.
- Whatever the machine's noise: a fix whose runs were slower than the unchanged command's is
  never labelled proven faster, and one labelled slower did run slower.
"""

from __future__ import annotations

import glob
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from statistics import median
from typing import Any

import pytest

from iolab.tune.fromlog import Prediction
from iolab.tune.proof import plan

PROGS = Path(__file__).resolve().parent / "progs"
METRIC = r"([0-9.]+) MiB/s"  # the programs' own bandwidth line (higher is better)
MPI = {  # name -> (C compiler, launcher and its options, HDF5 flavour folder)
    "openmpi": ("mpicc.openmpi", ["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root"],
                "openmpi"),
    "mpich": ("mpicc.mpich", ["mpirun.mpich"], "mpich"),
}
NP = 4
N, BLOCK = 16384, 8  # doubles a rank, doubles a piece: 2048 pieces of 64 B a rank


def _hdf5_program(mpi: str, out: Path) -> Path:
    cc, launcher, flavour = MPI[mpi]
    inc = Path(f"/usr/include/hdf5/{flavour}")
    lib = Path(f"/usr/lib/x86_64-linux-gnu/hdf5/{flavour}")
    if shutil.which(cc) is None or shutil.which(launcher[0]) is None or not inc.is_dir():
        pytest.skip(f"{cc}, {launcher[0]} or parallel HDF5 for {flavour} is not installed")
    exe = out / f"h5_slab-{mpi}"
    subprocess.run([cc, "-O2", "-Wall", f"-I{inc}", "-o", str(exe), str(PROGS / "h5_slab.c"),
                    f"-L{lib}", "-lhdf5"], check=True, cwd=out)
    return exe


def _pnetcdf_program(out: Path) -> Path:
    mods = glob.glob("/usr/lib/x86_64-linux-gnu/fortran/*/pnetcdf.mod")
    if shutil.which("mpif90.openmpi") is None or not mods:
        pytest.skip("mpif90.openmpi or PnetCDF's Fortran module (libpnetcdf-dev) is missing")
    exe = out / "pnc_checkpoint"
    subprocess.run(["mpif90.openmpi", "-O2", "-Wall", f"-I{Path(mods[0]).parent}", "-o",
                    str(exe), str(PROGS / "pnc_checkpoint.f90"), "-lpnetcdf"], check=True,
                   cwd=out)
    return exe


def _iolab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _profile(tmp: Path, mpi: str, argv: list[str], name: str) -> Path:
    out = _iolab("profile", "-q", "-o", str(tmp / "prof"), "--name", name, "--np", str(NP),
                 "--mpi", mpi, "--", *argv, cwd=tmp)
    assert out.returncode == 0, out.stderr
    return tmp / "prof" / f"{name}.iolab"


def _diagnose(tmp: Path, log: Path, *extra: str) -> dict[str, Any]:
    out = _iolab("diagnose", str(log), "--json", *extra, cwd=tmp)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _prove(tmp: Path, log: Path, mpi: str, argv: list[str]) -> dict[str, Any]:
    out = _iolab("tune", "--db", str(tmp / "r.db"), "--from-log", str(log), "--metric", METRIC,
                 "--json", "--", *MPI[mpi][1], "-np", str(NP), *argv, cwd=tmp)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _labels_follow_the_runs(doc: dict[str, Any]) -> None:
    """The promise on any machine: proven faster only with runs better than the unchanged
    command's (higher MiB/s here), slower only with runs worse."""
    base = median(doc["baseline"]["values"])
    for f in doc["fixes"]:
        assert f["values"], f
        if f["verdict"] == "faster":
            assert median(f["values"]) > base and f["ci_low"] > 1, f
        if f["verdict"] == "slower":
            assert median(f["values"]) < base and f["ci_high"] < 1, f


def _code_changes_stay_predictions(doc: dict[str, Any], knobs: set[str]) -> None:
    unproven = {u["knob"]: u["reason"] for u in doc["not_proven"]}
    assert knobs <= set(unproven), unproven
    assert all("code change" in unproven[k] for k in knobs)
    assert not any(knobs & set(f["params"]) for f in doc["fixes"])


def _one_call_per_piece(report: dict[str, Any], direction: str) -> None:
    """HDF5's independent strided transfers reach MPI-IO piece by piece (the construction
    the hint verdicts rest on): at least one MPI-IO call per 64 B piece of every rank."""
    cb = next(f for f in report["findings"] if f["rule_id"] == "collective-buffering")
    assert cb["direction"] == direction
    assert cb["evidence"][f"mpiio_small_{direction}s"] >= NP * N // BLOCK, cb["evidence"]
    assert cb["evidence"]["mpiio_avg_bytes"] < 2 * 8 * BLOCK, cb["evidence"]  # + metadata


def _stored(tmp: Path, tune_id: int) -> tuple[str, int]:
    with sqlite3.connect(tmp / "r.db") as db:
        status = db.execute("SELECT status FROM tunes WHERE id = ?", (tune_id,)).fetchone()[0]
        runs = db.execute("SELECT COUNT(*) FROM trials WHERE tune_id = ?",
                          (tune_id,)).fetchone()[0]
    return status, runs


def _collective_only_settings(report: dict[str, Any]) -> list[tuple[str, str]]:
    from iolab.settings.catalogue import setting

    return [(f["rule_id"], s["setting"]) for f in report["findings"]
            for s in f["fix"]["settings"]
            if (row := setting(s["setting"])) is not None and row.collective_only]


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_independent_strided_hdf5_gets_no_collective_buffering_hint(
        mpi: str, tmp_path: Path) -> None:
    """expected: HDF5's independent strided transfers (one MPI-IO call per 64 B piece) get
    no romio_cb_write / cb_* / fcoll setting, and the text says why no hint merges the
    pieces; collective transfers stay an experiment / was: romio_cb_write enable in a hints
    file, which acts only inside collective calls (the proof measured nothing but the
    ROMIO switch under OMPIO, noise under MPICH)."""
    exe = _hdf5_program(mpi, tmp_path)
    argv = [str(exe), "strided-write", str(tmp_path / "s.h5"), str(N), str(BLOCK)]
    report = _diagnose(tmp_path, _profile(tmp_path, mpi, argv, "sw"))
    _one_call_per_piece(report, "write")
    assert _collective_only_settings(report) == []
    small = next(f for f in report["findings"] if f["rule_id"] == "small-requests")
    assert "one contiguous piece, so no hint merges them" in small["fix"]["text"]
    assert any(c["change"] == "collective transfers" and c["experiment"]
               for c in small["fix"]["code_changes"])


def test_collective_metadata_is_an_experiment_not_the_top_fix(tmp_path: Path) -> None:
    """expected: on h5_slab (MPICH, the shapes where H5Pset_coll_metadata_write made the
    program 0.26x-0.39x), hdf5-metadata-alignment is an experiment that says what was
    measured (the H5F/H5D metadata time, the MPI-IO open/close in it) and its collective
    metadata is never the first predicted setting / was: a waste finding owning the H5F
    time (mostly MPI_File_open/close), first in the report, hdf5.coll-metadata the top fix."""
    exe = _hdf5_program("mpich", tmp_path)
    for shape in (["contig-write", str(tmp_path / "c.h5"), str(N)],
                  ["strided-write", str(tmp_path / "s.h5"), str(N), str(BLOCK)]):
        log = _profile(tmp_path, "mpich", [str(exe), *shape], shape[0])
        report = _diagnose(tmp_path, log)
        meta = next(f for f in report["findings"] if f["rule_id"] == "hdf5-metadata-alignment")
        assert meta["kind"] == "experiment" and meta["cost_s"] is None, meta
        ev = meta["evidence"]
        assert ev["cost_from"] == "H5F/H5D metadata time"
        assert 0 < ev["mpiio_open_close_time_s"] <= ev["hdf5_metadata_time_s"] + 1e-6
        assert "in MPI-IO's open and close" in meta["summary"]
        assert all(c["experiment"] for c in meta["fix"]["code_changes"]
                   if c["knob"] == "hdf5.coll-metadata")
        top = report["summary"]["top_fix_savings"]
        assert not top or top[0]["rule_id"] != "hdf5-metadata-alignment", top
        from iolab.diagnose.config import Thresholds
        from iolab.diagnose.report import diagnose
        from iolab.model.job import build_model
        from iolab.sources import load_source
        from iolab.tune.fromlog import predictions
        preds = predictions(diagnose(build_model([load_source(str(log))]), Thresholds()))
        # a waste finding's setting always comes before the experiment's
        waste = {f["rule_id"] for f in report["findings"] if f["kind"] == "waste"}
        knobs = [p.knob for p in preds]
        assert "hdf5.coll-metadata" in knobs and meta["severity"] != "high"
        assert all(knobs.index("hdf5.coll-metadata") > i
                   for i, p in enumerate(preds) if p.rule in waste), preds


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_hdf5_contiguous_write_with_only_code_fixes_times_no_empty_fix(
        mpi: str, tmp_path: Path) -> None:
    """expected: a log whose every predicted setting is a code change runs nothing and lists
    them as predictions / was: an empty "every predicted setting together" candidate, the
    unchanged command timed against itself 4 times and given a verdict."""
    exe = _hdf5_program(mpi, tmp_path)
    argv = [str(exe), "contig-write", str(tmp_path / "c.h5"), str(N)]
    log = _profile(tmp_path, mpi, argv, "cw")
    assert any(f["rule_id"] == "hdf5-metadata-alignment"
               for f in _diagnose(tmp_path, log)["findings"])
    doc = _prove(tmp_path, log, mpi, argv)
    assert doc["fixes"] == [] and doc["baseline"]["values"] == []
    _code_changes_stay_predictions(doc, {"hdf5.coll-metadata"})
    assert _stored(tmp_path, doc["id"]) == ("done", 0)


def test_pnetcdf_checkpoint_under_ompio_gets_fcoll_two_phase_not_slower(
        tmp_path: Path) -> None:
    """expected: the Fortran PnetCDF checkpoint under OMPIO (3072 pieces of 128 B a rank in
    each wait_all's collective write; MPI-IO ~0.3 s a rank over 3 ms of POSIX: OMPIO's
    exchange) gets mpiio-time-skew with OMPI_MCA_fcoll=two_phase, which the proof step runs
    on the command and never labels slower / was: an information finding only, nothing to
    prove."""
    exe = _pnetcdf_program(tmp_path)
    argv = [str(exe), str(tmp_path / "ckpt.nc"), "16", "1024", "4"]
    log = _profile(tmp_path, "openmpi", argv, "nb")
    report = _diagnose(tmp_path, log)
    skew = next(f for f in report["findings"] if f["rule_id"] == "mpiio-time-skew")
    assert {(s["setting"], s["value"], s["library"]) for s in skew["fix"]["settings"]} >= {
        ("fcoll", "two_phase", "ompio")}
    assert skew["evidence"]["mpiio_slowest_s"] > 10 * skew["evidence"]["posix_slowest_s"]
    doc = _prove(tmp_path, log, "openmpi", argv)
    fcoll = next(f for f in doc["fixes"] if f["params"] == {"ompio.fcoll": "two_phase"})
    assert fcoll["verdict"] in ("faster", "no-effect"), fcoll
    _labels_follow_the_runs(doc)


def test_plan_without_a_usable_setting_has_no_candidate() -> None:
    """expected: no candidate when every prediction is a code change, or there is none /
    was: one candidate with no setting ("every predicted setting together", params {})."""
    code = [Prediction("hdf5-metadata-alignment", "t", "hdf5.coll-metadata", "true")]
    for impl in ("ompio", "romio", None):
        assert plan([], impl, ["mpirun", "./app"], None) == ([], [])
        cands, unproven = plan(code, impl, ["mpirun", "./app"], None)
        assert cands == [] and [u.knob for u in unproven] == ["hdf5.coll-metadata"]
