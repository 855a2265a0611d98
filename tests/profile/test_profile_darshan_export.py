"""``iolab profile --darshan`` / ``iolab profile export``: a real Darshan log written with
libdarshan-util's write API, read back by pydarshan with the same counters, names, process
count and command line, and diagnosed by ``iolab diagnose`` like the profile itself; and
read by darshan-parser (``$IOLAB_DARSHAN_PARSER`` or PATH) with the same counters again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from darshan_helpers import PARSER_MISSING, PREFIX, darshan_parser, run_darshan_parser
from trace_helpers import LIBDIR, PROGS

from iolab.sources.profile import load

darshan = pytest.importorskip("darshan")

MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IOLAB_LIBDIR": str(LIBDIR)}
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def _theirs(log: Path) -> tuple[dict[tuple[str, str, int], dict[str, float]], dict[str, object]]:
    out: dict[tuple[str, str, int], dict[str, float]] = {}
    with darshan.DarshanReport(str(log), read_all=True) as rep:
        for mod in MODULES:
            if mod not in rep.records:
                continue
            coll = rep.records[mod]
            ids = [int(r["id"]) for r in coll]
            df = coll.to_df()
            rows = df["counters"].to_dict("records")
            frows = df["fcounters"].to_dict("records")
            for rid, row, frow in zip(ids, rows, frows, strict=True):
                key = (mod, rep.name_records[rid], int(row["rank"]))
                out[key] = {**{k: v for k, v in row.items() if k not in ("rank", "id")},
                            **{k: v for k, v in frow.items() if k not in ("rank", "id")}}
        meta = {"nprocs": rep.metadata["job"]["nprocs"], "exe": rep.metadata["exe"]}
    return out, meta


def _check_equal(profile: Path, log: Path) -> int:
    job = load(profile)
    theirs, meta = _theirs(log)
    assert meta == {"nprocs": job.nprocs, "exe": job.exe}
    ours = [r for r in job.rows() if r.module in MODULES]
    assert len(ours) == len(theirs)
    for r in ours:
        got = theirs[(r.module, r.path, r.rank)]
        for name, value in got.items():
            if name in r.counters:
                assert value == r.counters[name], (r.module, r.path, name)
            else:
                assert value == pytest.approx(r.fcounters.get(name, 0.0), rel=1e-12, abs=1e-9)
    return len(ours)


def _export(kind: str, prog: Callable[[str], Path], out: Path) -> tuple[Path, Path]:
    """Profile one program (2 ranks) and write its Darshan log: (profile, log). mpiio and
    pnetcdf through ``--darshan``, hdf5 through ``iolab profile export`` afterwards."""
    out.mkdir()
    if kind == "mpiio":
        argv = [str(prog("mpi_strided")), str(out / "s.dat"), "64", "4096", "coll"]
    elif kind == "mpiio-kinds":  # every MPI-IO counter non-zero, most of them different
        argv = [str(prog("mpi_io_kinds")), str(out / "k.dat")]
    elif kind == "hdf5":
        inc = Path("/usr/include/hdf5/openmpi")
        if shutil.which("mpicc") is None or not inc.is_dir():
            pytest.skip("mpicc or Open MPI's parallel HDF5 is not installed")
        if not (LIBDIR / "libiolab-trace-hdf5.so").is_file():
            pytest.skip("libiolab-trace-hdf5.so is not built (./setup)")
        exe = out / "rw"
        subprocess.run(["mpicc", "-O2", f"-I{inc}", "-o", str(exe), str(PROGS / "mpi_hdf5_rw.c"),
                        "-L/usr/lib/x86_64-linux-gnu/hdf5/openmpi", "-lhdf5"], check=True)
        argv = [str(exe), str(out / "rw.h5")]
    else:
        if shutil.which("mpicc") is None or not Path("/usr/include/pnetcdf.h").is_file():
            pytest.skip("mpicc or PnetCDF is not installed")
        if not (LIBDIR / "libiolab-trace-pnetcdf.so").is_file():
            pytest.skip("libiolab-trace-pnetcdf.so is not built (./setup)")
        exe = out / "pnc"
        subprocess.run(["mpicc", "-O2", "-o", str(exe), str(PROGS / "mpi_pnetcdf_rw.c"),
                        "-lpnetcdf"], check=True)
        argv = [str(exe), str(out / "rw.nc")]
    flag = [] if kind == "hdf5" else ["--darshan"]
    run = _run("profile", "-o", str(out), "--name", "job", "--np", "2", *flag, "--", *argv)
    assert run.returncode == 0, run.stderr
    if kind == "hdf5":
        exp = _run("profile", "export", str(out / "job.iolab"))
        assert exp.returncode == 0, exp.stderr
    else:
        assert "Darshan log written to" in run.stderr
    return out / "job.iolab", out / "job.darshan"


@pytest.fixture(scope="module")
def exported(
    prog: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], tuple[Path, Path]]:
    """exported("mpiio" | "mpiio-kinds" | "hdf5" | "pnetcdf"): (profile, Darshan log), made
    once per module (the pydarshan and the darshan-parser tests read the same ones)."""
    made: dict[str, tuple[Path, Path]] = {}

    def get(kind: str) -> tuple[Path, Path]:
        if kind not in made:
            made[kind] = _export(kind, prog, tmp_path_factory.mktemp(kind) / "out")
        return made[kind]

    return get


def test_profile_darshan_flag_mpiio_and_posix(
    exported: Callable[[str], tuple[Path, Path]],
) -> None:
    profile, log = exported("mpiio")
    n = _check_equal(profile, log)
    assert n >= 2  # the shared file's MPI-IO and POSIX records at least
    diag = _run("diagnose", str(log))
    assert diag.returncode == 0 and "top layer MPI-IO" in diag.stdout


def test_profile_export_hdf5_layers(exported: Callable[[str], tuple[Path, Path]]) -> None:
    profile, log = exported("hdf5")
    _check_equal(profile, log)
    theirs, _ = _theirs(log)
    h5d = theirs[("H5D", f"{profile.parent}/rw.h5:/grid", -1)]
    assert h5d["H5D_BYTES_WRITTEN"] == 2 * (4096 + 2048) and h5d["H5D_POINT_SELECTS"] == 2


def test_export_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    for args in (["export"], ["export", str(tmp_path / "missing.iolab")]):
        run = _run("profile", *args)
        assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_profile_export_pnetcdf_layers(exported: Callable[[str], tuple[Path, Path]]) -> None:
    profile, log = exported("pnetcdf")
    _check_equal(profile, log)
    theirs, _ = _theirs(log)
    assert theirs[("PNETCDF_VAR", f"{profile.parent}/rw.nc:series", -1)]["PNETCDF_VAR_GET_VAR"] == 2


def test_export_every_mpiio_counter_in_its_place(
    exported: Callable[[str], tuple[Path, Path]],
) -> None:
    """mpi_io_kinds.c makes every kind of MPI-IO call: each of its non-zero counters lands in
    Darshan's place for it (a shifted or swapped counter would differ)."""
    profile, log = exported("mpiio-kinds")
    _check_equal(profile, log)
    theirs, _ = _theirs(log)
    kinds = theirs[("MPI-IO", f"{profile.parent}/k.dat", -1)]
    assert [kinds[f"MPIIO_{k}"] for k in ("SPLIT_WRITES", "NB_READS", "VIEWS", "SYNCS",
                                          "HINTS")] == [6, 8, 2, 4, 6]


@pytest.mark.parametrize("kind", ["mpiio", "mpiio-kinds", "hdf5", "pnetcdf"])
def test_darshan_parser_reads_the_export(
    kind: str, exported: Callable[[str], tuple[Path, Path]]
) -> None:
    """darshan-parser (Darshan's own reader, not pydarshan) prints every record of the
    export with the profile's counters and pydarshan's, under Darshan's record ids; the
    H5D/PNETCDF_VAR records name their file's record."""
    parser = darshan_parser()
    if parser is None:
        pytest.skip(PARSER_MISSING)
    profile, log = exported(kind)
    printed = run_darshan_parser(parser, log)
    job = load(profile)
    ours = {(r.module, r.rank, r.path): r for r in job.rows() if r.module in MODULES}
    theirs, _ = _theirs(log)
    with darshan.DarshanReport(str(log), read_all=True) as rep:
        ids = {name: rid for rid, name in rep.name_records.items()}
    assert sorted((m, rk, n) for m, rk, _, n in printed) == sorted(ours)
    assert len(printed) == len(theirs)
    for (mod, rank, rid, name), counters in printed.items():
        rec, py = ours[(mod, rank, name)], theirs[(mod, name, rank)]
        assert rid == ids[name] == rec.record_id
        for counter, value in counters.items():
            if counter.endswith("_FILE_REC_ID"):  # H5D, PNETCDF_VAR: their file's record
                assert value == ids[name.rsplit(":", 1)[0]], (name, counter)
            elif isinstance(value, int):  # ids in counters are signed in the other two
                u64 = (1 << 64) - 1
                assert value == rec.counters.get(counter, 0) & u64 == int(py[counter]) & u64, (
                    name, counter)
            else:  # printed with 6 decimals
                assert value == pytest.approx(rec.fcounters.get(counter, 0.0), abs=1e-6)
                assert value == pytest.approx(py[counter], abs=1e-6), (name, counter)
    # something was compared: the layer's own records are there, with bytes
    top = {"hdf5": "H5D", "pnetcdf": "PNETCDF_VAR"}.get(kind, "MPI-IO")
    assert any(m == top and c.get(f"{PREFIX[top]}_BYTES_WRITTEN", 0) > 0
               for (m, _, _, _), c in printed.items())


def test_trace_goes_into_the_darshan_log_as_dxt(
    prog: Callable[[str], Path], tmp_path: Path
) -> None:
    """Expected: ``--trace --darshan`` writes the trace as DXT_POSIX and DXT_MPIIO records,
    each operation as traced / was: the .darshan had no DXT, and diagnose of it advised
    recording with ``--trace``."""
    out = tmp_path / "out"
    out.mkdir()
    argv = [str(prog("mpi_strided")), str(out / "s.dat"), "16", "4096", "indep"]
    run = _run("profile", "-o", str(out), "--name", "job", "--np", "2", "--trace", "--darshan",
               "--", *argv)
    assert run.returncode == 0, run.stderr
    ours = load(out / "job.iolab")
    segs = ours.segments()
    assert {s.module for s in segs} == {"DXT_POSIX", "DXT_MPIIO"}
    theirs = []
    with darshan.DarshanReport(str(out / "job.darshan"), read_all=True) as rep:
        for mod in ("DXT_POSIX", "DXT_MPIIO"):
            for rec in rep.records[mod]:
                for op in ("write", "read"):
                    for s in rec[f"{op}_segments"]:
                        theirs.append((mod, rep.name_records[int(rec["id"])], int(rec["rank"]),
                                       op, int(s["offset"]), int(s["length"]),
                                       round(float(s["start_time"]), 9)))
    mine = [(s.module, s.path, s.rank, s.op, s.offset, s.length, round(s.start_s, 9))
            for s in segs]
    assert sorted(theirs) == sorted(mine)
    diag = _run("diagnose", str(out / "job.darshan"))
    assert diag.returncode == 0, diag.stderr
    text = " ".join(diag.stdout.split())
    assert "timeline from the trace" in text and "--trace" not in text
