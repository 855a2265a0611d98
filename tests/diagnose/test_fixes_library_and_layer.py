"""Advice for the job's MPI library and the layer the program calls (issue #32 item 4), on
real programs run here under ``iolab profile`` and on real Darshan logs.

- progs/h5_pieces.c (parallel HDF5 for Open MPI, OMPIO, 4 ranks): 4 KiB blocks written, then
  read back by a second job that writes nothing, each block by its own independent
  H5Dwrite / H5Dread;
- darshan35/pncput-openmpi.darshan (PnetCDF under Open MPI) and h5close-openmpi.darshan
  (HDF5), darshan35/blockread-mpich.darshan (a read-only MPI-IO job);
- shared/darshan-generated/mpiio_4ranks_strided4K_indep.darshan (MPI-IO under OMPIO).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import corpus
import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.jobfacts import job_facts
from iolab.diagnose.report import Report, diagnose, to_dict
from iolab.model.job import build_model
from iolab.settings.change import EXPERIMENT
from iolab.sources import load_source

ROOT = Path(__file__).resolve().parents[2]
LIBDIR = ROOT / "build" / "default" / "interpose" / "trace"
PROGS = Path(__file__).resolve().parent / "progs"
D35 = Path(__file__).resolve().parent / "darshan35"
H5_INC = Path("/usr/include/hdf5/openmpi")
H5_LIB = Path("/usr/lib/x86_64-linux-gnu/hdf5/openmpi")
# What only a job that writes needs: write calls and write properties, in every language.
WRITE_ADVICE = ("H5Pset_coll_metadata_write", "H5Dwrite", "h5dwrite", "write_at", "iwrite",
                "MPI_MODE_WRONLY", "put_vara", "fwrite", "H5F_ACC_TRUNC", "Write_at")


def _report(path: Path) -> Report:
    return diagnose(build_model([load_source(path)]), Thresholds())


@pytest.fixture(scope="module")
def h5_jobs(tmp_path_factory) -> dict[str, Report]:
    """The write job and the read-only job of progs/h5_pieces.c, profiled."""
    if shutil.which("mpicc.openmpi") is None or not H5_INC.is_dir():
        pytest.skip("parallel HDF5 for Open MPI is not installed")
    if not (LIBDIR / "libiolab-trace-hdf5.so").is_file():
        pytest.skip("libiolab-trace-hdf5.so is not built (run ./setup)")
    tmp = tmp_path_factory.mktemp("h5_pieces")
    exe = tmp / "h5_pieces"
    subprocess.run(["mpicc.openmpi", "-O2", f"-I{H5_INC}", "-o", str(exe),
                    str(PROGS / "h5_pieces.c"), f"-L{H5_LIB}", "-lhdf5"], check=True)
    out = {}
    for mode in ("write", "read"):
        run = subprocess.run(
            [sys.executable, "-m", "iolab", "profile", "-q", "-o", str(tmp / mode), "--name",
             "job", "--np", "4", "--", str(exe), str(tmp / "d.h5"), "2000", "512", mode],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "IOLAB_LIBDIR": str(LIBDIR)})
        assert run.returncode == 0, run.stderr
        out[mode] = _report(tmp / mode / "job.iolab")
    return out


def _snippets(rep: Report):
    return [(f, a) for f in rep.findings for a in f.fix.artifacts
            if a.kind.startswith("snippet")]


def test_hdf5_program_gets_h5p_calls_not_mpi_file_snippets(h5_jobs) -> None:
    """Expected: HDF5 calls (H5Pset_dxpl_mpio on the transfer list) for the independent
    H5Dwrite/H5Dread calls / was: MPI_File_write_at_all snippets (small-requests) for a
    program that never calls MPI-IO itself."""
    for mode, rep in h5_jobs.items():
        assert job_facts(rep.model).mpi.io == "ompio"  # Open MPI's default MPI-IO
        ind = next(f for f in rep.findings if f.key == f"mpiio-independent/{mode}")
        names = {a.name for a in ind.fix.artifacts}
        assert f"hdf5_collective_{mode}.c" in names
        assert "H5Pset_dxpl_mpio" in next(a.content for a in ind.fix.artifacts
                                          if a.name == f"hdf5_collective_{mode}.c")
        assert {c.layer for c in ind.fix.code} == {"hdf5"}
        # under OMPIO the collective experiment comes with the switch to ROMIO, to measure
        # both (the programs: slower under OMPIO, faster with ROMIO)
        switch = next(a for a in ind.fix.artifacts if a.name == "romio_switch.env")
        assert "export OMPI_MCA_io=^ompio" in switch.content
        assert [(s.name, s.value) for s in switch.settings] == [("io", "^ompio")]
        assert "with and without the switch to ROMIO" in ind.fix.text
        for f, a in _snippets(rep):
            assert "MPI_File_" not in a.content, (mode, f.key, a.name)
        small = next(f for f in rep.findings if f.key == f"small-requests/{mode}")
        assert "collective HDF5 transfers (H5Pset_dxpl_mpio" in small.fix.text  # not MPI-IO


def test_read_only_job_gets_no_write_advice(h5_jobs) -> None:
    """Expected: the job that only reads gets read calls (H5Dread with a collective
    transfer list, collective metadata reads) / was: hdf5_collective_metadata.c with
    H5Pset_coll_metadata_write and H5Dwrite, MPI_File_write_at_all (small-requests)."""
    rep = h5_jobs["read"]
    assert rep.model.metrics.bytes_by_dir["write"] == 0
    assert rep.findings
    for f in rep.findings:
        for a in f.fix.artifacts:
            hit = [w for w in WRITE_ADVICE if w in a.content]
            assert not hit, (f.key, a.name, hit)
        assert "H5Pset_coll_metadata_write" not in f.fix.text, f.key
        assert all(c.direction != "write" for c in f.fix.code), f.key


def test_read_only_stdio_program_gets_read_buffers(tmp_path: Path) -> None:
    """progs/stdio_read.c reads 64 MiB with 512-byte freads and writes nothing. Expected:
    "read it ... in large requests", buffered_reads snippets (setvbuf on the read stream) /
    was: "write it with POSIX/MPI-IO/HDF5" and buffered_writes snippets (stdio-share,
    small-serial-io/read)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    if not (LIBDIR / "libiolab-trace.so").is_file():
        pytest.skip("libiolab-trace.so is not built (run ./setup)")
    exe = tmp_path / "stdio_read"
    subprocess.run(["cc", "-O2", "-Wall", "-o", str(exe), str(PROGS / "stdio_read.c")],
                   check=True)
    data = tmp_path / "in.dat"
    data.write_bytes(os.urandom(1 << 20) * 64)
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "-q", "-o",
                          str(tmp_path / "p"), "--name", "job", "--", str(exe), str(data),
                          "512"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "IOLAB_LIBDIR": str(LIBDIR)})
    assert run.returncode == 0, run.stderr
    rep = _report(tmp_path / "p" / "job.iolab")
    assert rep.model.metrics.bytes_by_dir["write"] == 0
    assert rep.model.metrics.bytes_by_dir["read"] == 64 << 20
    stdio = next(f for f in rep.findings if f.rule.id == "stdio-share")
    assert "read it with" in stdio.fix.text
    names = {a.name for f in rep.findings for a in f.fix.artifacts}
    assert "buffered_reads.c" in names and "buffered_writes.c" not in names
    for f in rep.findings:
        assert "write it" not in f.fix.text, f.key
        for a in f.fix.artifacts:
            assert not [w for w in WRITE_ADVICE if w in a.content], (f.key, a.name)


def test_read_only_mpiio_job_gets_a_nonblocking_read(tmp_path: Path) -> None:
    """Expected: MPI_File_iread_at_all for a job that only reads / was:
    MPI_File_iwrite_at_all (darshan35/blockread-mpich.darshan, mpiio-nonblocking)."""
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    rep = _report(D35 / "blockread-mpich.darshan")
    assert rep.model.metrics.bytes_by_dir["write"] == 0
    f = next(f for f in rep.findings if f.rule.id == "mpiio-nonblocking")
    assert any("MPI_File_iread_at_all" in a.content for a in f.fix.artifacts)
    for f in rep.findings:
        for a in f.fix.artifacts:
            assert not [w for w in WRITE_ADVICE if w in a.content], (f.key, a.name)


@pytest.mark.parametrize("log, layer", [("pncput-openmpi.darshan", "pnetcdf"),
                                        ("h5close-openmpi.darshan", "hdf5")])
def test_library_programs_get_their_library_calls(log: str, layer: str) -> None:
    """Expected: ncmpi_iput_vara + ncmpi_wait_all (PnetCDF), H5Pset_dxpl_mpio (HDF5) /
    was: MPI_File_iwrite_at_all and MPI_File_write_at_all snippets (tiny-collective-calls,
    small-requests, random-access) for programs that call PnetCDF or HDF5."""
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    rep = _report(D35 / log)
    snippets = _snippets(rep)
    assert snippets
    for f, a in snippets:
        assert "MPI_File_" not in a.content, (f.key, a.name)
    layers = {c.layer for f in rep.findings for c in f.fix.code if c.change.startswith(
        ("collective", "non-blocking"))}
    assert layers == {layer}


@corpus.needs_generated_logs
def test_ompio_job_gets_no_bare_romio_hint() -> None:
    """Expected, under Open MPI's OMPIO: each ROMIO hints file comes with the .env that
    switches to ROMIO and names it, an .ompio.env only with an export, MPI-IO snippets
    without ROMIO's MPI_Info_set lines / was: .ompio.env files of comments alone (they set
    nothing), collective_io.c setting romio_cb_write with MPI_Info_set."""
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    rep = _report(corpus.GENERATED_DIR / "mpiio_4ranks_strided4K_indep.darshan")
    assert job_facts(rep.model).mpi.io == "ompio"
    romio_files = 0
    for f in rep.findings:
        arts = {a.name: a for a in f.fix.artifacts}
        for a in f.fix.artifacts:
            if a.kind == "ompio-mca":
                assert re.search(r"^export OMPI_MCA_\w+=", a.content, re.M), a.name
                assert a.settings and all(s.library == "ompio" for s in a.settings)
            if a.kind == "romio-hints":
                romio_files += 1
                env = arts[a.name[:-len(".txt")] + ".env"]
                assert re.search(r"^export OMPI_MCA_io=\^ompio ", env.content, re.M)
                assert f'/{a.name}"' in env.content
                assert ("io", "^ompio") in {(s.name, s.value) for s in f.fix.settings}
            if a.kind.startswith("snippet"):
                assert "romio_" not in a.content, (f.key, a.name)
    # every write is an independent 4 KiB piece: no hints file at all, since collective
    # buffering acts only in collective calls and data sieving only inside a call of
    # several pieces (was: romio_cb_write files, which measured nothing but the switch)
    assert romio_files == 0


@corpus.needs_generated_logs
def test_collective_advice_is_an_experiment() -> None:
    """Expected: collective-transfer advice says it is to be proven with iolab tune
    --from-log, in the text and the JSON / was: stated as a fix (under OMPIO collective was
    2.0x slower for one of the issue's programs)."""
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    rep = _report(corpus.GENERATED_DIR / "mpiio_4ranks_strided4K_indep.darshan")
    doc = json.loads(json.dumps(to_dict(rep)))
    seen = 0
    for f, d in zip(rep.findings, doc["findings"]):
        coll = [c for c in f.fix.code if c.knob == "collective"]
        if coll:
            seen += 1
            assert all(c.experiment for c in coll)
            assert EXPERIMENT in f.fix.text and EXPERIMENT in d["fix"]["text"]
            assert any(c["knob"] == "collective" and c["experiment"]
                       for c in d["fix"]["code_changes"])
    assert seen >= 2
