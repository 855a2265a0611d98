"""Every fix artifact is valid for its job and can do no harm (issue 8, item 5).

The validator (artifact_check) reads the job's numbers from the model and runs the files:
``bash -n``, environment files sourced and every value parsed (ROMIO hint names and values,
OMPIO MCA names, Cray ``MPICH_MPIIO_HINTS`` syntax, buffering specs), ``lfs`` targets only
the job's own Lustre files (never a mount root), Slurm scripts executed under simulated
allocations (``-c`` at least 1, ``-n`` the job's ranks, the log's own program).

Expected / was: ``lfs setstripe -c 4`` on a file striped over 56 OSTs, ``striping_unit
4096``, ``srun -c $(( $(nproc) / 512 ))`` (0 on any multi-node job), write-behind for a whole
mount including MPI-IO shared files, ROMIO files for Open MPI's OMPIO, ``./app``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from artifact_check import all_problems, slurm_run
from corpus import GENERATED_MISSING, REAL_MISSING
from diagnose_logs import ALL_LOGS, log_id

from iolab.diagnose.config import Thresholds
from iolab.diagnose.jobfacts import job_facts
from iolab.diagnose.report import diagnose
from iolab.model.job import build_model
from iolab.model.raw import SHARED_RANK, RawJob, RawRecord
from iolab.settings import catalogue

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
CORPUS = pytest.mark.skipif(not ALL_LOGS, reason=f"{REAL_MISSING}; {GENERATED_MISSING}")


@CORPUS
@pytest.mark.usefixtures("darshan_available")
@pytest.mark.parametrize("path", ALL_LOGS, ids=log_id)
def test_every_artifact_of_every_corpus_log_is_valid(path: Path) -> None:
    from iolab.sources.darshan import load_darshan_log

    model = build_model([load_darshan_log(path)])
    rep = diagnose(model, Thresholds())
    assert all_problems(model, rep.findings) == []


# ---- synthetic jobs: what the corpus does not have (hundreds of ranks, Lustre, Cray) ---------

def _rec(module: str, path: str, rank: int, **c: float) -> RawRecord:
    rid = abs(hash(path)) % (1 << 62)
    return RawRecord(module=module, rank=rank, record_id=rid, path=path,
                     counters={k: int(v) for k, v in c.items() if "_F_" not in k},
                     fcounters={k: float(v) for k, v in c.items() if "_F_" in k})


def _big_job(runtime_trace: str, mounts: list[tuple[str, str]], exe: str,
             nprocs: int = 512) -> RawJob:
    """A 512-rank job on Lustre: a 64 GiB shared file on one OST written in small
    independent MPI-IO pieces, a restart file already over 56 OSTs accessed in 1.5 MiB
    pieces, a file in the mount's root, a log written in tiny writes by rank 0, and the
    MPI library's own runtime file."""
    out, rst, top = "/lus/proj/run42/out.dat", "/lus/proj/run42/restart.dat", "/lus/top.dat"
    log = "/lus/proj/run42/log.txt"
    n_small = 1 << 20
    recs = [
        _rec("POSIX", out, SHARED_RANK, POSIX_OPENS=nprocs, POSIX_WRITES=n_small,
             POSIX_BYTES_WRITTEN=64 * GiB, POSIX_MAX_BYTE_WRITTEN=64 * GiB - 1,
             POSIX_SIZE_WRITE_10K_100K=n_small, POSIX_ACCESS1_ACCESS=64 * KiB,
             POSIX_ACCESS1_COUNT=n_small, POSIX_F_WRITE_TIME=4000.0,
             POSIX_F_SLOWEST_RANK_TIME=400.0, POSIX_F_FASTEST_RANK_TIME=300.0),
        # half of the pieces independent, half collective: collective-buffering hints act
        # only on files with collective calls (a hints file cannot act on independent ones)
        _rec("MPI-IO", out, SHARED_RANK, MPIIO_INDEP_OPENS=nprocs,
             MPIIO_INDEP_WRITES=n_small // 2, MPIIO_COLL_WRITES=n_small // 2,
             MPIIO_BYTES_WRITTEN=64 * GiB, MPIIO_SIZE_WRITE_AGG_10K_100K=n_small,
             MPIIO_F_WRITE_TIME=4100.0),
        _rec("POSIX", rst, SHARED_RANK, POSIX_OPENS=nprocs, POSIX_WRITES=40000,
             POSIX_BYTES_WRITTEN=40000 * 1536 * KiB, POSIX_MAX_BYTE_WRITTEN=40000 * 1536 * KiB,
             POSIX_SIZE_WRITE_1M_4M=40000, POSIX_ACCESS1_ACCESS=1536 * KiB,
             POSIX_ACCESS1_COUNT=40000, POSIX_F_WRITE_TIME=50.0),
        _rec("POSIX", top, 0, POSIX_OPENS=1, POSIX_WRITES=4096, POSIX_BYTES_WRITTEN=4 * GiB,
             POSIX_MAX_BYTE_WRITTEN=4 * GiB - 1, POSIX_SIZE_WRITE_1M_4M=4096,
             POSIX_ACCESS1_ACCESS=MiB, POSIX_ACCESS1_COUNT=4096, POSIX_F_WRITE_TIME=300.0),
        _rec("POSIX", log, 0, POSIX_OPENS=1, POSIX_WRITES=500_000,
             POSIX_BYTES_WRITTEN=500_000 * 40, POSIX_MAX_BYTE_WRITTEN=500_000 * 40 - 1,
             POSIX_CONSEC_WRITES=499_999, POSIX_SEQ_WRITES=499_999,
             POSIX_SIZE_WRITE_0_100=500_000, POSIX_F_WRITE_TIME=30.0),
        _rec("POSIX", runtime_trace, 0, POSIX_OPENS=1),
    ]
    ids = {r.path: r.record_id for r in recs}
    return RawJob.build(source="darshan", source_paths=["synthetic"], nprocs=nprocs, start_time=0.0,
                        end_time=600.0, run_time_s=600.0, exe=exe, jobid="777", records=recs,
                        mounts=mounts,
                        stripes={ids[out]: (MiB, 1), ids[rst]: (MiB, 56), ids[top]: (MiB, 1)},
                        lustre_osts={ids[out]: (13,), ids[rst]: tuple(range(56)), ids[top]: (55,)})


EXE = "/home/u/bin/sim -i input.nml"
SCENARIOS = {
    "open-mpi-16-nodes": (_big_job("/dev/shm/vader_segment.nid01.11.0", [("/lus", "lustre")],
                                   EXE), {"nodes": 16, "cores_per_node": 64}),
    "cray-mpich": (_big_job("/var/tmp/x", [("/lus", "lustre"), ("/opt/cray/pe", "squashfs")],
                            EXE), {"nodes": 8}),
    "unknown-mpi-no-command": (_big_job("/var/tmp/x", [("/lus", "lustre")], ""), {}),
}


def _scenario(name: str):
    raw, kw = SCENARIOS[name]
    model = build_model([raw], **kw)
    return model, diagnose(model, Thresholds())


def _artifacts(rep, kind: str | None = None, rule: str | None = None):
    return [a for f in rep.findings for a in f.fix.artifacts
            if (kind is None or a.kind == kind) and (rule is None or f.rule.id == rule)]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_artifact_of_synthetic_jobs_is_valid(name: str) -> None:
    model, rep = _scenario(name)
    assert _artifacts(rep, "lfs") and _artifacts(rep, "slurm")  # the validator had work
    assert all_problems(model, rep.findings) == []


def test_mpi_library_read_from_the_log() -> None:
    assert job_facts(_scenario("open-mpi-16-nodes")[0]).mpi.io == "ompio"
    assert job_facts(_scenario("cray-mpich")[0]).mpi.name == "cray-mpich"
    assert job_facts(_scenario("unknown-mpi-no-command")[0]).mpi.name == "unknown"


def test_ompio_job_gets_mca_parameters_not_a_bare_romio_file() -> None:
    """Under OMPIO a ROMIO hints file comes with the .env that switches to ROMIO and names
    it; an .ompio.env exports OMPIO's own parameters (was: one of comments alone, for
    romio_cb_write enable, which OMPIO has no parameter for)."""
    _, rep = _scenario("open-mpi-16-nodes")
    seen = 0
    for f in rep.findings:
        kinds = [a.kind for a in f.fix.artifacts]
        for a in f.fix.artifacts:
            if a.kind == "ompio-mca":
                assert re.search(r"^export OMPI_MCA_\w+=", a.content, re.M), a.content
        if "romio-hints" in kinds:
            seen += 1
            if "ompio-mca" in kinds:
                assert kinds.index("ompio-mca") < kinds.index("romio-hints")
            romio = next(a for a in f.fix.artifacts if a.kind == "romio-hints")
            assert "OMPIO, the default, ignores it" in romio.content
            env = next(a for a in f.fix.artifacts if a.name == romio.name[:-4] + ".env")
            assert re.search(r"^export OMPI_MCA_io=\^ompio ", env.content, re.M)
            assert f"/{romio.name}" in env.content
            assert "mpich-hints" not in kinds
    assert seen


def test_cray_hints_name_the_files_in_the_documented_syntax() -> None:
    _, rep = _scenario("cray-mpich")
    cray = _artifacts(rep, "mpich-hints")
    assert cray and not _artifacts(rep, "romio-hints") and not _artifacts(rep, "ompio-mca")
    for a in cray:
        spec = re.search(r"^export MPICH_MPIIO_HINTS='?([^'\n]+)'?$", a.content, re.M).group(1)
        entries = spec.split(",")
        # the shared MPI-IO file by name (never the log written with POSIX calls); "*" only
        # for the job-wide aggregator count (aggregators-per-node names no file)
        names = [e.split(":")[0] for e in entries]
        assert names in (["out.dat", "/lus/proj/run42/out.dat", "*/out.dat"], ["*"]), names
        for e in entries:
            assert all(re.fullmatch(r"[a-z_]+=[^:=,]+", kv) for kv in e.split(":")[1:])


def test_no_fewer_stripes_and_no_mount_root() -> None:
    _, rep = _scenario("open-mpi-16-nodes")
    text = "".join(a.content for a in _artifacts(rep, "lfs"))
    # the restart file keeps its 56 stripes when only its stripe size changes
    assert re.search(r"lfs setstripe -c 56 -S \S+ /lus/proj/run42/restart.dat", text)
    assert not re.search(r"-c [1-9] .*/restart\.dat", text.replace("-c 56", ""))
    # the shared file on one OST gets more stripes, within the 56 OSTs the log saw
    counts = {int(c) for c in re.findall(r"lfs setstripe -c (\d+) -S \S+ /lus/proj/run42/out",
                                         text)}
    assert counts and all(1 < c <= 56 for c in counts)
    for ln in text.splitlines():
        if not ln.startswith("#"):
            assert not re.search(r" /lus/?( |$)", ln)  # never the mount root itself
            assert "mkdir /lus/iolab" not in ln


def test_stripe_sizes_are_lustre_sizes() -> None:
    for name in SCENARIOS:
        _, rep = _scenario(name)
        for a in _artifacts(rep):
            for v in re.findall(r"striping_unit[ =](\d+)", a.content):
                assert int(v) % (64 * KiB) == 0 and int(v) >= 64 * KiB


def test_slurm_c_is_never_zero_on_many_nodes() -> None:
    model, rep = _scenario("open-mpi-16-nodes")
    (sb,) = {a.content: a for a in _artifacts(rep, "slurm")}.values()
    assert "#SBATCH --nodes=16" in sb.content and "#SBATCH --ntasks-per-node=32" in sb.content
    for cpus, want in ((64, "2"), (32, "1"), (8, "1")):
        args, _ = slurm_run(sb, 512, 16, cpus)
        assert args[args.index("-c") + 1] == want
        assert args[args.index("--cpu-bind=cores") + 1:] == ["/home/u/bin/sim", "-i",
                                                            "input.nml"]


def test_slurm_without_command_line_stops_with_a_message() -> None:
    _, rep = _scenario("unknown-mpi-no-command")
    sb = _artifacts(rep, "slurm")[0]
    r = subprocess.run(["bash", "-c", 'srun() { echo ran; }; . "$1"', "_", "/dev/stdin"],
                       input=sb.content, capture_output=True, text=True)
    assert r.returncode == 2 and "set PROGRAM" in r.stderr and "ran" not in r.stdout


def test_buffering_only_for_named_non_mpiio_files() -> None:
    _, rep = _scenario("open-mpi-16-nodes")
    bufs = _artifacts(rep, "env")
    specs = [m for a in bufs for m in re.findall(r"^export IOLAB_BUFFER=(\S+)", a.content, re.M)]
    assert specs
    for s in specs:
        assert "out.dat" not in s and "*" not in s.replace("*/", "")
        assert "/lus/proj/run42/log.txt:size=64M:count=4" in s


def test_romio_hint_names_are_known_to_mpich_romio(tmp_path: Path) -> None:
    """Each non-Lustre name of the table, set on a real file with real MPICH, is reported
    back by MPI_File_get_info (ROMIO drops names it does not know)."""
    mpicc, mpirun = shutil.which("mpicc.mpich"), shutil.which("mpirun.mpich")
    if not (mpicc and mpirun):
        pytest.skip("MPICH (mpicc.mpich, mpirun.mpich) is not installed")
    src = tmp_path / "hints.c"
    src.write_text(r"""
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Info info, used; MPI_Info_create(&info);
    for (int i = 2; i < argc; i++) {
        char k[256]; snprintf(k, sizeof k, "%s", argv[i]);
        char *eq = strchr(k, '='); if (!eq) continue; *eq = 0; MPI_Info_set(info, k, eq + 1);
    }
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh))
        return 1;
    MPI_File_get_info(fh, &used);
    int n; MPI_Info_get_nkeys(used, &n);
    for (int i = 0; i < n; i++) { char k[MPI_MAX_INFO_KEY + 1]; MPI_Info_get_nthkey(used, i, k);
                                  printf("%s\n", k); }
    MPI_File_close(&fh); MPI_Finalize(); return 0;
}
""")
    exe = tmp_path / "hints"
    subprocess.run([mpicc, "-o", str(exe), str(src)], check=True, capture_output=True)
    value = {"mode": "disable", "bool": "true", "bytes": str(MiB), "count": "1",
             "config": "*:1", "stripe": str(MiB), "osts": "1", "number": "1"}
    # ROMIO's hints read on every file system (the Lustre driver's only on Lustre)
    local = {r.name: value.get(r.domain) or catalogue.default(r) for r in catalogue.hints()
             if "romio" in r.libraries and not r.driver}
    out = subprocess.run([mpirun, "-n", "1", str(exe), str(tmp_path / "f.dat")]
                         + [f"{k}={v}" for k, v in local.items()],
                         check=True, capture_output=True, text=True, timeout=60).stdout.split()
    assert sorted(set(local) - set(out)) == []


def test_ompio_mca_names_are_open_mpis() -> None:
    """The MCA parameters written for OMPIO exist in the installed Open MPI (ompi_info);
    the Lustre fs component's only where Open MPI was built with it."""
    if not shutil.which("ompi_info"):
        pytest.skip("Open MPI (ompi_info) is not installed")
    text = subprocess.run(["ompi_info", "--all", "--parsable"], capture_output=True,
                          text=True, timeout=60).stdout
    params = set(re.findall(r"^mca:[^:]+:[^:]+:param:([^:]+):value:", text, re.M))
    lustre = "fs_lustre_stripe_size" in params
    for env_name in (catalogue.mca_env(r) for r in catalogue.ompio_parameters()):
        name = env_name[len("OMPI_MCA_"):]
        if name.startswith("fs_lustre") and not lustre:
            continue  # this Open MPI has no Lustre fs component (Debian: no Lustre)
        assert name in params, name
    assert re.search(r"^mca:io:romio3\d\d:", text, re.M)  # `--mca io romio321` exists


def test_emitted_files_say_which_job_they_are_for(tmp_path: Path) -> None:
    import os

    from iolab.diagnose.emit import emit_fixes

    _, rep = _scenario("open-mpi-16-nodes")
    written = emit_fixes(rep, tmp_path)
    index = (tmp_path / "README.md").read_text()
    assert "For: `/home/u/bin/sim -i input.nml`, 512 rank(s) on 16 node(s)." in index
    assert "MPI library: Open MPI with OMPIO (Open MPI's trace in the log: /dev/shm/" in index
    assert "Lustre: at least 56 OSTs seen in the log." in index
    scripts = [p for p in written if p.suffix in (".sh", ".sbatch")]
    assert scripts and all(os.access(p, os.X_OK) for p in scripts)
    for p in written:
        if p.suffix in (".sh", ".sbatch", ".env"):
            subprocess.run(["bash", "-n", str(p)], check=True)


@pytest.mark.usefixtures("darshan_available")
def test_every_artifact_of_a_written_512_rank_log_is_valid(tmp_path: Path) -> None:
    """The same job through a real log file (libdarshan-util's write API, LUSTRE records):
    512 ranks, small independent MPI-IO writes to one shared file on one OST, a restart file
    over 56 OSTs written in 1.5 MiB pieces, a rank-0 log."""
    from darshan_writer import Lustre, Rec, write_log

    from iolab.sources.darshan import load_darshan_log

    n = 1 << 20
    recs = [
        Rec("POSIX", "/scratch/run/out.dat", -1, {
            "POSIX_OPENS": 512, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": 64 * GiB,
            "POSIX_MAX_BYTE_WRITTEN": 64 * GiB - 1, "POSIX_SIZE_WRITE_10K_100K": n,
            "POSIX_F_WRITE_TIME": 4000.0, "POSIX_F_SLOWEST_RANK_TIME": 400.0}),
        Rec("MPI-IO", "/scratch/run/out.dat", -1, {
            "MPIIO_INDEP_OPENS": 512, "MPIIO_INDEP_WRITES": n, "MPIIO_BYTES_WRITTEN": 64 * GiB,
            "MPIIO_SIZE_WRITE_AGG_10K_100K": n, "MPIIO_F_WRITE_TIME": 4100.0,
            "MPIIO_F_SLOWEST_RANK_TIME": 420.0}),
        Rec("POSIX", "/scratch/run/restart.dat", -1, {
            "POSIX_OPENS": 512, "POSIX_WRITES": 40000, "POSIX_BYTES_WRITTEN": 40000 * 1536 * KiB,
            "POSIX_MAX_BYTE_WRITTEN": 40000 * 1536 * KiB - 1, "POSIX_SIZE_WRITE_1M_4M": 40000,
            "POSIX_ACCESS1_ACCESS": 1536 * KiB, "POSIX_ACCESS1_COUNT": 40000,
            "POSIX_F_WRITE_TIME": 50.0}),
        Rec("POSIX", "/scratch/run/log.txt", 0, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 500_000, "POSIX_BYTES_WRITTEN": 20_000_000,
            "POSIX_MAX_BYTE_WRITTEN": 19_999_999, "POSIX_CONSEC_WRITES": 499_999,
            "POSIX_SEQ_WRITES": 499_999, "POSIX_SIZE_WRITE_0_100": 500_000,
            "POSIX_F_WRITE_TIME": 30.0}),
    ]
    log = write_log(tmp_path / "big.darshan", nprocs=512, run_time_s=600.0,
                    exe="/home/u/bin/sim -i input.nml", records=recs,
                    lustre=[Lustre("/scratch/run/out.dat", MiB, 1),
                            Lustre("/scratch/run/restart.dat", MiB, 56)])
    model = build_model([load_darshan_log(log)], nodes=16)
    assert job_facts(model).osts_known == 56
    rep = diagnose(model, Thresholds())
    kinds = {a.kind for a in _artifacts(rep)}
    # independent 64 KiB writes only: no collective-buffering hint (it acts only inside
    # collective calls: was romio_cb_write in ROMIO's file and Cray's line), so no hints
    # file; never an .ompio.env of comments
    assert {"slurm", "env", "lfs"} <= kinds
    assert not any(s.row is not None and s.row.collective_only
                   for f in rep.findings for s in f.fix.settings)
    assert all(re.search(r"^export OMPI_MCA_", a.content, re.M)
               for a in _artifacts(rep, "ompio-mca"))
    assert all_problems(model, rep.findings) == []
    lfs = "".join(a.content for a in _artifacts(rep, "lfs"))
    assert re.search(r"lfs setstripe -c 56 -S 1536K /scratch/run/restart.dat", lfs)
    assert re.search(r"lfs setstripe -c (2[0-9]|[3-5][0-9]) -S 1M /scratch/run/out.dat", lfs)


def test_emit_never_overwrites_a_users_folder_nor_writes_broken_shell(tmp_path: Path) -> None:
    from iolab.diagnose.emit import emit_fixes
    from iolab.diagnose.rules.base import Artifact
    from iolab.errors import UsageError

    _, rep = _scenario("open-mpi-16-nodes")
    mine = tmp_path / "project"
    mine.mkdir()
    (mine / "README.md").write_text("my notes\n")
    with pytest.raises(UsageError, match="holds other files"):
        emit_fixes(rep, mine)
    assert [p.name for p in mine.iterdir()] == ["README.md"]
    assert (mine / "README.md").read_text() == "my notes\n"
    out = tmp_path / "fixes"
    first = emit_fixes(rep, out)
    assert emit_fixes(rep, out) == first  # an earlier --emit-fixes folder is refreshed
    f = next(f for f in rep.findings if f.fix.artifacts)
    f.fix.artifacts.append(Artifact("env", "broken.env", "export A='unterminated\n"))
    written = emit_fixes(rep, tmp_path / "again")
    assert not any(p.name == "broken.env" for p in written)
    assert "broken.env: not written, bash -n rejects it" in (tmp_path / "again" /
                                                              "README.md").read_text()


def test_odd_hint_values_become_valid_ones_or_nothing() -> None:
    from iolab.diagnose import fixes

    model, _ = _scenario("unknown-mpi-no-command")
    out = "/lus/proj/run42/out.dat"
    arts = fixes.romio_hints(model, {"cb_buffer_size": "1000000", "striping_unit": "4096",
                                     "striping_factor": "200", "cb_nodes": "4096",
                                     "romio_cb_write": "yes", "no_such_hint": "1"}, paths=[out])
    body = next(a for a in arts if a.kind == "romio-hints").content
    assert "cb_buffer_size 983040" in body  # whole 64 KiB units
    # the file's own 1 MiB stripe, not the 4 KiB asked; 200 stripes (at most the 512
    # ranks), with a note: the log proves 56 OSTs, Lustre cuts it to the OSTs it has
    assert "striping_unit 1048576" in body and "striping_factor 200\n" in body
    assert "striping_factor 200: more than the 56 OST(s) the log proves" in body
    assert "cb_nodes 512" in body  # at most the ranks
    assert "romio_cb_write" not in body.replace("# left out: romio_cb_write=yes", "")
    assert "# left out: no_such_hint=1 (not valid for this job)" in body
    assert all_problems_of(model, arts) == []
    # cb_config_list alone, nodes unknown: no per-node list at all (expected / was: *:2 on a
    # 65,536-rank job whose node count the log does not give), the reason said instead
    arts = fixes.romio_hints(model, {"cb_config_list": "*:2"}, paths=[out])
    assert arts == []
    arts = fixes.romio_hints(model, {"cb_config_list": "*:2", "cb_buffer_size": "33554432"},
                             paths=[out])
    body = next(a for a in arts if a.kind == "romio-hints").content
    assert "cb_config_list *:2" not in body and "does not give the node count" in body
    assert all_problems_of(model, arts) == []
    # the named file is not an MPI-IO file: hints would reach only the others
    assert fixes.romio_hints(model, {"cb_nodes": "4"}, paths=["/lus/proj/run42/log.txt"]) == []


def all_problems_of(model, arts) -> list[str]:
    from artifact_check import problems

    return [p for a in arts for p in problems(model, a, arts)]


def test_emitted_buffering_env_buffers_exactly_the_named_file(tmp_path: Path) -> None:
    """Sourced, buffering.env loads libiolab-buffer for the named file only; the bytes come
    out unchanged (the library's statistics name the file it buffered)."""
    from iolab.diagnose import fixes
    from iolab.paths import interposer_library

    try:
        interposer_library("buffer")
    except Exception:  # noqa: BLE001 - not built here
        pytest.skip("libiolab-buffer.so is not built")
    named, other = tmp_path / "log.txt", tmp_path / "other.txt"
    recs = [_rec("POSIX", str(p), 0, POSIX_OPENS=1, POSIX_WRITES=1000) for p in (named, other)]
    raw = RawJob.build(source="darshan", source_paths=["s"], nprocs=1, start_time=0.0, end_time=1.0,
                       run_time_s=1.0, records=recs, exe="/bin/sh step.sh")
    (art,) = fixes.iolab_buffer(build_model([raw]), [str(named)])
    env = tmp_path / "buffering.env"
    env.write_text(art.content)
    stats = tmp_path / "stats.txt"
    # the exports reach the next program started (a child shell writing both files)
    child = ('i=0; while [ $i -lt 2000 ]; do printf "%05d\\n" $i; i=$((i+1)); done > "$0"; '
             'echo other > "$1"')
    # IOLAB_PREFIX: where iolab is installed on the machine that runs the job (here, this one)
    prefix = interposer_library("buffer").parents[2]
    script = (f'export IOLAB_PREFIX="{prefix}"; . "{env}"; '
              f'export IOLAB_BUFFER="$IOLAB_BUFFER:verbose={stats}"; '
              f"bash -c '{child}' \"{named}\" \"{other}\"")
    subprocess.run(["bash", "-c", script], check=True, timeout=60)
    assert named.read_text() == "".join(f"{i:05d}\n" for i in range(2000))
    assert other.read_text() == "other\n"
    text = stats.read_text()
    assert str(named) in text and str(other) not in text
