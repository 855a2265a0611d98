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
  (the profile shows it), so ROMIO's collective-buffering hints (romio_cb_write,
  romio_cb_read) cannot act on them: under MPICH such a hint is never proven faster; under
  OMPIO the hint runs with the ROMIO switch beside it (the way diagnose's files pair them),
  so what is measured is the switch.
- Making the transfers collective is a change to the program's own calls: the proof never
  labels it, it stays "predicted, not proven here" with the reason.
- A log whose fixes are all code changes, or that has none (the PnetCDF checkpoint, whose
  wait_all already aggregates), runs nothing beyond what it must: no empty "fix" is timed
  against the unchanged command.
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
from iolab.tune.proof import ROMIO_SWITCH, plan

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


@pytest.mark.slow
@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_hdf5_strided_write_proof_on_the_program(mpi: str, tmp_path: Path) -> None:
    """The strided HDF5 write: diagnose's ROMIO hint is measured on the program (with the
    ROMIO switch under OMPIO), collective transfers stay a prediction, every label follows
    the runs; under MPICH the hint cannot act on independent calls and is never proven."""
    exe = _hdf5_program(mpi, tmp_path)
    argv = [str(exe), "strided-write", str(tmp_path / "s.h5"), str(N), str(BLOCK)]
    log = _profile(tmp_path, mpi, argv, "sw")
    _one_call_per_piece(_diagnose(tmp_path, log), "write")
    doc = _prove(tmp_path, log, mpi, argv)
    assert doc["implementation"] == ("ompio" if mpi == "openmpi" else "romio")
    hint = next(f for f in doc["fixes"] if f["params"] == {"romio_cb_write": "enable"})
    assert hint["env"] == (ROMIO_SWITCH if mpi == "openmpi" else {})
    assert len(hint["values"]) == len(doc["baseline"]["values"]) == 4
    if mpi == "mpich":  # inert by construction: a gain is noise, never a proof worth 15%
        assert not (hint["verdict"] == "faster" and hint["speedup"] > 1.15), hint
    _labels_follow_the_runs(doc)
    _code_changes_stay_predictions(doc, {"collective", "transfer", "hdf5.coll-metadata"})
    assert _stored(tmp_path, doc["id"]) == ("done", 4 * (len(doc["fixes"]) + 1))
    # diagnose --proof shows the verdict beside the small-requests fix it belongs to
    shown = _diagnose(tmp_path, log, "--db", str(tmp_path / "r.db"), "--proof", str(doc["id"]))
    small = next(f for f in shown["findings"] if f["rule_id"] == "small-requests")
    assert {p["verdict"] for p in small["proof"]} >= {hint["verdict"], "predicted"}
    cb = next(f for f in shown["findings"] if f["rule_id"] == "collective-buffering")
    assert [p["verdict"] for p in cb["proof"]] == ["predicted"]


@pytest.mark.slow
def test_hdf5_strided_read_under_ompio_proves_the_romio_switch(tmp_path: Path) -> None:
    """The strided HDF5 read under Open MPI: romio_cb_read cannot act on independent reads,
    so its run measures the ROMIO switch beside it, whose per-call path is the lighter one
    for 64 B reads: never labelled slower; every label follows the runs."""
    exe = _hdf5_program("openmpi", tmp_path)
    data = str(tmp_path / "s.h5")
    launch = [*MPI["openmpi"][1], "-np", str(NP)]
    subprocess.run([*launch, str(exe), "strided-write", data, str(N), str(BLOCK)], check=True,
                   capture_output=True, timeout=120)
    argv = [str(exe), "strided-read", data, str(N), str(BLOCK)]
    log = _profile(tmp_path, "openmpi", argv, "sr")
    report = _diagnose(tmp_path, log)
    _one_call_per_piece(report, "read")
    assert report["job"]["mpiio_implementation"].lower() == "ompio"
    doc = _prove(tmp_path, log, "openmpi", argv)
    hint = next(f for f in doc["fixes"] if f["params"] == {"romio_cb_read": "enable"})
    assert hint["env"] == ROMIO_SWITCH and hint["verdict"] in ("faster", "no-effect"), hint
    _labels_follow_the_runs(doc)
    _code_changes_stay_predictions(doc, {"collective", "transfer"})
    # a read job is never handed a write setting to prove
    assert not any(k.startswith("romio_cb_write") for f in doc["fixes"] for k in f["params"])


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


def test_pnetcdf_nonblocking_checkpoint_with_nothing_to_prove(tmp_path: Path) -> None:
    """expected: the Fortran PnetCDF checkpoint (iput + wait_all, aggregated by PnetCDF into
    collective writes) gets no predicted setting, and the proof says so without a run / was:
    an empty candidate timed against the unchanged command."""
    exe = _pnetcdf_program(tmp_path)
    argv = [str(exe), str(tmp_path / "ckpt.nc"), "16", "256", "2"]
    log = _profile(tmp_path, "openmpi", argv, "nb")
    report = _diagnose(tmp_path, log)
    assert report["summary"] and report["job"]["nprocs"] == NP
    out = _iolab("tune", "--db", str(tmp_path / "r.db"), "--from-log", str(log), "--metric",
                 METRIC, "--", *MPI["openmpi"][1], "-np", str(NP), *argv, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "diagnose predicts no setting for this log: nothing to prove" in out.stdout
    assert "proof run" not in out.stderr


def test_plan_without_a_usable_setting_has_no_candidate() -> None:
    """expected: no candidate when every prediction is a code change, or there is none /
    was: one candidate with no setting ("every predicted setting together", params {})."""
    code = [Prediction("hdf5-metadata-alignment", "t", "hdf5.coll-metadata", "true")]
    for impl in ("ompio", "romio", None):
        assert plan([], impl, ["mpirun", "./app"], None) == ([], [])
        cands, unproven = plan(code, impl, ["mpirun", "./app"], None)
        assert cands == [] and [u.knob for u in unproven] == ["hdf5.coll-metadata"]
