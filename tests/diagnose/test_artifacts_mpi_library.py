"""The MPI library is read from the job itself, and the hints take its form (issue 8, item 5).

A real 2-rank MPI-IO program, built with Open MPI and with MPICH, is run under
``iolab profile``: Open MPI's OMPIO leaves its ``.locktest`` and ``/tmp/ompi.*`` files,
MPICH's ROMIO reports its hints in effect. Expected / was: a ROMIO hints file (and a Cray
``MPICH_MPIIO_HINTS`` line) for every job, whichever library ran it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from artifact_check import problems

from iolab.diagnose import fixes
from iolab.diagnose.jobfacts import job_facts
from iolab.model.job import build_model
from iolab.sources import load_source

PROGRAM = r"""
#include <mpi.h>
/* Each rank writes 64 interleaved blocks of 4 KiB with collective calls to argv[1]. */
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_File fh; static char buf[4096];
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                  &fh);
    for (int i = 0; i < 64; i++)
        MPI_File_write_at_all(fh, (MPI_Offset)(i * size + rank) * 4096, buf, 4096, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
"""
LIBS = {"openmpi": ("mpicc", "default"), "mpich": ("mpicc.mpich", "mpich")}


def _profiled(tmp_path: Path, lib: str):
    cc, flavour = LIBS[lib]
    if not shutil.which(cc):
        pytest.skip(f"{cc} is not installed")
    src = tmp_path / "coll.c"
    src.write_text(PROGRAM)
    exe = tmp_path / f"coll_{lib}"
    subprocess.run([cc, "-o", str(exe), str(src)], check=True, capture_output=True)
    out = tmp_path / "shared.dat"
    run = subprocess.run([sys.executable, "-m", "iolab", "profile", "--np", "2", "--mpi",
                          flavour, "--launcher", "mpirun", "-o", str(tmp_path), "--name",
                          "p.iolab", "-q", "--", str(exe), str(out)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, f"iolab profile failed: {run.stderr.strip()[-300:]}"
    return build_model([load_source(tmp_path / "p.iolab")]), str(out)


def test_open_mpi_job_gets_ompio_parameters(tmp_path: Path) -> None:
    model, out = _profiled(tmp_path, "openmpi")
    lib = job_facts(model).mpi
    assert (lib.name, lib.io) == ("open-mpi", "ompio")
    arts = fixes.romio_hints(model, {"cb_buffer_size": str(64 << 20), "cb_nodes": "2",
                                     "romio_ds_write": "disable"}, paths=[out])
    kinds = [a.kind for a in arts]
    assert kinds == ["ompio-mca", "romio-hints", "env"]  # OMPIO's own form first
    mca = arts[0].content
    assert "export OMPI_MCA_io_ompio_bytes_per_agg=67108864" in mca
    assert "export OMPI_MCA_io_ompio_num_aggregators=2" in mca
    # no equivalent: say so, and where the switch to ROMIO is
    assert "romio_ds_write=disable" in mca and "romio_hints.env switches Open MPI to ROMIO" in mca
    # the ROMIO file only with ROMIO: the switch in the same file that names it
    assert "OMPI_MCA_io=^ompio" in arts[2].content and "romio_hints.txt" in arts[2].content
    # the data each file renders
    assert {(s.name, s.value, s.library) for s in arts[0].settings} == {
        ("io_ompio_bytes_per_agg", "67108864", "ompio"),
        ("io_ompio_num_aggregators", "2", "ompio")}
    assert [(s.name, s.value) for s in arts[2].settings] == [("io", "^ompio")]
    for a in arts:
        assert problems(model, a, arts) == []


def test_mpich_job_gets_a_romio_file_without_what_is_in_effect(tmp_path: Path) -> None:
    model, out = _profiled(tmp_path, "mpich")
    lib = job_facts(model).mpi
    assert (lib.name, lib.io) == ("mpich", "romio")
    assert model.job.hints  # ROMIO reported the hints in effect at open
    arts = fixes.romio_hints(model, {"romio_cb_write": "enable", "cb_nodes": "1",
                                     "cb_buffer_size": str(16 << 20)}, paths=[out])
    assert [a.kind for a in arts] == ["romio-hints", "env"]
    body = arts[0].content
    assert "romio_cb_write enable" in body
    assert "cb_nodes=1 (already in effect)" in body  # ROMIO said so at open
    assert "cb_buffer_size=16777216 (ROMIO's default already)" in body
    assert not [ln for ln in body.splitlines() if ln.startswith(("cb_nodes", "cb_buffer"))]
    for a in arts:
        assert problems(model, a, arts) == []
    # nothing left to set: no file at all
    assert fixes.romio_hints(model, {"cb_nodes": "1"}, paths=[out]) == []


HINTS_IN_EFFECT = r"""
#include <mpi.h>
#include <stdio.h>
/* Open argv[1] with no hints of its own and print the hints in effect (key=value). */
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_File fh; MPI_Info used;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                      &fh)) return 1;
    MPI_File_get_info(fh, &used);
    int n; MPI_Info_get_nkeys(used, &n);
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1], v[1024]; int f;
        MPI_Info_get_nthkey(used, i, k); MPI_Info_get(used, k, 1023, v, &f);
        printf("%s=%s\n", k, v);
    }
    MPI_File_close(&fh); MPI_Finalize(); return 0;
}
"""


def _write(arts, d: Path) -> None:
    d.mkdir()
    for a in arts:
        (d / a.name).write_text(a.content)


def test_mpich_applies_the_emitted_romio_file(tmp_path: Path) -> None:
    """Sourcing the emitted env file (from another directory) makes real MPICH use them."""
    model, out = _profiled(tmp_path, "mpich")
    arts = fixes.romio_hints(model, {"romio_cb_write": "enable",
                                     "cb_buffer_size": str(4 << 20)}, paths=[out])
    fixdir = tmp_path / "fixes"
    _write(arts, fixdir)
    src = tmp_path / "inuse.c"
    src.write_text(HINTS_IN_EFFECT)
    exe = tmp_path / "inuse"
    subprocess.run(["mpicc.mpich", "-o", str(exe), str(src)], check=True, capture_output=True)
    env_file = next(a.name for a in arts if a.kind == "env")
    run = subprocess.run(["bash", "-c", f'. "{fixdir}/{env_file}" && mpirun.mpich -n 1 "$0" "$1"',
                          str(exe), str(tmp_path / "x.dat")], cwd="/", capture_output=True,
                         text=True, timeout=60, check=True)
    got = dict(ln.split("=", 1) for ln in run.stdout.splitlines() if "=" in ln)
    assert got["romio_cb_write"] == "enable" and got["cb_buffer_size"] == str(4 << 20)


def test_open_mpi_reads_the_emitted_mca_parameters(tmp_path: Path) -> None:
    """Sourcing the OMPIO file sets parameters Open MPI itself reports as set from the
    environment (ompi_info), with the values written."""
    if not shutil.which("ompi_info"):
        pytest.skip("Open MPI (ompi_info) is not installed")
    model, out = _profiled(tmp_path, "openmpi")
    arts = fixes.romio_hints(model, {"cb_buffer_size": str(64 << 20), "cb_nodes": "2"},
                             paths=[out])
    fixdir = tmp_path / "fixes"
    _write(arts, fixdir)
    mca = next(a.name for a in arts if a.kind == "ompio-mca")
    run = subprocess.run(["bash", "-c", f'. "{fixdir}/{mca}" && ompi_info --param io ompio '
                          "--level 9 --parsable"], capture_output=True, text=True, timeout=60,
                         check=True)
    lines = set(run.stdout.splitlines())
    for name, value in (("io_ompio_bytes_per_agg", str(64 << 20)),
                        ("io_ompio_num_aggregators", "2")):
        assert f"mca:io:ompio:param:{name}:value:{value}" in lines
        assert f"mca:io:ompio:param:{name}:source:environment" in lines


def _model_with(paths=(), mounts=(), hosts=None, launch="", hints=None, exe="./a.out"):
    from iolab.model.raw import RawJob, RawRecord

    recs = [RawRecord(module="MPI-IO", rank=-1, record_id=1, path="/lus/run/out.dat",
                      counters={"MPIIO_COLL_OPENS": 4})]
    recs += [RawRecord(module="POSIX", rank=0, record_id=10 + i, path=p,
                       counters={"POSIX_OPENS": 1}) for i, p in enumerate(paths)]
    meta = {"launch": launch} if launch else {}
    meta.update({f"hints:{p}": h for p, h in (hints or {}).items()})
    raw = RawJob.build(source="iolab-profile" if launch else "darshan", source_paths=["s"],
                       nprocs=4, start_time=0.0, end_time=1.0, run_time_s=1.0, records=recs,
                       exe=exe, mounts=list(mounts), metadata=meta, rank_hosts=hosts or {})
    return build_model([raw])


ROMIO_IN_EFFECT = "cb_buffer_size=16777216;romio_cb_read=automatic;romio_cb_write=automatic"


@pytest.mark.parametrize("case,want", [
    (dict(paths=["/dev/shm/vader_segment.n1.2a.0"]), ("open-mpi", "ompio")),
    (dict(paths=["/lus/run/out.dat.locktest.0"]), ("open-mpi", "ompio")),
    (dict(paths=["/tmp/ompi.n1.0/x.sm"], hints={"/lus/run/out.dat": ROMIO_IN_EFFECT}),
     ("open-mpi", "romio")),  # Open MPI run with --mca io romio321
    (dict(launch="mpirun.mpich -np 4 env LD_PRELOAD=x"), ("mpich", "romio")),
    (dict(exe="/opt/cray/pe/mpich/8.1.28/bin/x"), ("cray-mpich", "romio")),
    (dict(mounts=[("/opt/cray/pe", "squashfs"), ("/lus", "lustre")]), ("cray-mpich", "romio")),
    (dict(mounts=[("/opt/cray/pe", "squashfs"), ("/opt/aurora/24.1", "squashfs")]),
     ("unknown", "unknown")),  # Aurora: MPICH, not Cray MPICH
    (dict(hosts={0: "nid001234", 1: "nid001234", 2: "nid001235", 3: "nid001235"}),
     ("cray-mpich", "romio")),
    (dict(hints={"/lus/run/out.dat": ROMIO_IN_EFFECT}), ("unknown", "romio")),
    (dict(), ("unknown", "unknown")),
], ids=["vader", "locktest", "ompi-romio", "mpich-launch", "cray-path", "cray-mounts",
        "aurora", "cray-nodes", "romio-hints", "nothing"])
def test_mpi_library_from_the_traces_it_leaves(case: dict, want: tuple[str, str]) -> None:
    lib = job_facts(_model_with(**case)).mpi
    assert (lib.name, lib.io) == want, lib.evidence
