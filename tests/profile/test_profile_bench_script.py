"""bench/trace_overhead runs end to end (tiny counts; the real measurement is not a test)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_helpers import ROOT


def test_trace_overhead_smoke(tracer: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    out.write_text("# Benchmarks\n\nother section\n")
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "trace_overhead"),
            "--repeat",
            "1",
            "--scale",
            "0.0005",
            "--output",
            str(out),
            "--dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "other section" in text and "| write64 |" in text and "| openclose |" in text
    for case in _expected_mpi_cases():  # the MPI cases run too, where their tools exist
        assert f"| {case} |" in text, case
    # a second run replaces the section instead of appending another one
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "trace_overhead"),
            "--repeat",
            "1",
            "--scale",
            "0.0005",
            "--output",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    assert out.read_text().count("trace_overhead:begin") == 1


def test_trace_overhead_callgrind_smoke(tracer: Path, tmp_path: Path) -> None:
    """--callgrind writes its own block right after the wall-time one, keeps the rest; every
    case runs under callgrind, two scripts side by side on two cores: the HDF5 cases (four
    MPI + HDF5 start-ups under valgrind, most of the time) beside all the others (the
    single-process ones, MPI-IO and the launcher: these two were with HDF5 and made the
    test ~5-8 s longer than its longest script needs)."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    runs = {}
    for part, cases in (("others", "write64,fwrite512,openclose,mpiio,launcher"),
                        ("hdf5", "hdf5")):
        (tmp_path / part).mkdir()
        out = tmp_path / part / "bench.md"
        out.write_text(
            "# Benchmarks\n\n<!-- trace_overhead:begin -->\nwall\n<!-- trace_overhead:end -->\n"
            "\n## Other\n"
        )
        cmd = [sys.executable, str(ROOT / "bench" / "trace_overhead"), "--callgrind",
               "--cases", cases, "--scale", "0.001", "--output", str(out), "--dir",
               str(tmp_path / part)]
        runs[part] = (out, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True))
    for out, proc in runs.values():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        text = out.read_text()
        assert text.index("trace_overhead:end") < text.index("Instruction counts (callgrind)")
        assert text.index("trace_overhead_callgrind:end") < text.index("## Other")
    rows = {part: [ln for ln in out.read_text().splitlines() if ln.startswith("| ")]
            for part, (out, _) in runs.items()}
    assert any(ln.startswith("| launcher") for ln in rows["others"]), rows
    if "mpiio" in _expected_mpi_cases():
        assert any(ln.startswith("| mpiio (1 rank) |") for ln in rows["others"]), rows
    if "hdf5" in _expected_mpi_cases():
        assert sum(ln.startswith("| hdf5 (1 rank)") for ln in rows["hdf5"]) == 2, rows
    out = runs["others"][0]
    text = out.read_text()
    row = next(ln for ln in text.splitlines() if ln.startswith("| write64 |"))
    plain, iolab = (float(c) for c in row.split("|")[2:4])
    assert 0 < plain < iolab  # the tracer adds instructions to every traced write()
    # a second run replaces its block in place (benchdoc.replace_section, which the script
    # calls; checked on the written file rather than by a second minute of callgrind)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from benchdoc import replace_section
    finally:
        sys.path.remove(str(ROOT / "bench"))
    replace_section(out, "trace_overhead_callgrind", "again", after="trace_overhead")
    again = out.read_text()
    assert again.count("trace_overhead_callgrind:begin") == 1 and "\nagain\n" in again
    assert again.index("trace_overhead:end") < again.index("again") < again.index("## Other")


def _expected_mpi_cases() -> list[str]:
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        return []
    out = ["mpiio"]
    if shutil.which("mpif90"):
        out.append("fortran")
    if Path("/usr/include/hdf5/openmpi").is_dir() and (
            ROOT / "build" / "default" / "interpose" / "trace" / "libiolab-trace-hdf5.so"
    ).is_file():
        out.append("hdf5")
    return out


def test_trace_overhead_every_case_with_darshan(tracer: Path, tmp_path: Path) -> None:
    """Every case, C, Fortran MPI-IO and HDF5 included, with Darshan too: each traced run is
    checked by the script (a Darshan log with the case's module and process count)."""
    lib = os.environ.get("DARSHAN_LIB")
    if not lib or not Path(lib).is_file():
        pytest.skip("set DARSHAN_LIB to a Darshan 3.5 libdarshan.so built for the default MPI "
                    "(and DARSHAN_PARSER to its darshan-parser) to run the cases with Darshan")
    out = tmp_path / "bench.md"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "trace_overhead"), "--repeat",
                          "1", "--scale", "0.0005", "--output", str(out), "--dir",
                          str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = [ln for ln in out.read_text().splitlines() if ln.startswith("| ")][1:]
    cases = {ln.split("|")[1].strip(): ln for ln in rows}
    assert set(cases) == {"write64", "fwrite512", "openclose", *_expected_mpi_cases()}
    assert all(ln.count("|") == 12 and "n/a" not in ln for ln in cases.values())


def test_trace_overhead_refuses_a_run_that_was_not_traced(tracer: Path, tmp_path: Path) -> None:
    """A "Darshan" that writes no log (here libm) gives no number: one line, exit 1, no table
    (before, a mode that traced nothing was timed as if it had)."""
    libm = next((p for p in (Path("/lib/x86_64-linux-gnu/libm.so.6"),
                             Path("/usr/lib/x86_64-linux-gnu/libm.so.6")) if p.is_file()), None)
    if libm is None:
        pytest.skip("no libm.so.6 to stand in for a library that traces nothing")
    out = tmp_path / "bench.md"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "trace_overhead"), "--repeat",
                          "1", "--scale", "0.0005", "--output", str(out), "--dir",
                          str(tmp_path)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "DARSHAN_LIB": str(libm)})
    assert run.returncode == 1
    assert "Darshan wrote no log" in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()
