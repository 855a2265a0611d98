"""The stripe count of emitted ``lfs setstripe`` fixes comes from the job's own numbers.

Expected / was: a shared file on one OST got ``max(count by size, 8)`` stripes capped at 16
when the log saw fewer OSTs (a number with no basis), whatever the file's writers. Now: by
size (NERSC's table), no more than the processes that write the file (the aggregators for
collective I/O), never fewer than the file has, never more than the OSTs the file system
has (the log's, else ``lfs df`` when the script runs), each number's origin in the comment.
Logs written with libdarshan-util (Lustre records included), checked by the validator and
by running the scripts on simulated file systems of 1, 4 and 2000 OSTs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from artifact_check import all_problems, lfs_run
from darshan_writer import Lustre, Rec, write_log

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose
from iolab.diagnose.striping import count_by_size
from iolab.model.job import build_model
from iolab.sources.darshan import load_darshan_log

pytestmark = pytest.mark.usefixtures("darshan_available")
MiB, GB = 1 << 20, 10**9
OUT = "/scratch/run/out.dat"


def _shared_file(size: int, ranks: int, collective: bool) -> list[Rec]:
    pieces = max(size // (4 * MiB), 1)
    recs = [Rec("POSIX", OUT, -1, {
        "POSIX_OPENS": ranks, "POSIX_WRITES": pieces, "POSIX_BYTES_WRITTEN": size,
        "POSIX_MAX_BYTE_WRITTEN": size - 1, "POSIX_CONSEC_WRITES": pieces - 1,
        "POSIX_SEQ_WRITES": pieces - 1, "POSIX_SIZE_WRITE_4M_10M": pieces,
        "POSIX_ACCESS1_ACCESS": 4 * MiB, "POSIX_ACCESS1_COUNT": pieces,
        "POSIX_F_WRITE_TIME": 400.0, "POSIX_F_SLOWEST_RANK_TIME": 60.0,
        "POSIX_F_FASTEST_RANK_TIME": 50.0})]
    mode = "MPIIO_COLL" if collective else "MPIIO_INDEP"
    recs.append(Rec("MPI-IO", OUT, -1, {
        f"{mode}_OPENS": ranks, f"{mode}_WRITES": pieces, "MPIIO_BYTES_WRITTEN": size,
        "MPIIO_SIZE_WRITE_AGG_4M_10M": pieces, "MPIIO_F_WRITE_TIME": 420.0,
        "MPIIO_F_SLOWEST_RANK_TIME": 62.0, "MPIIO_F_FASTEST_RANK_TIME": 52.0}))
    return recs


# id: (file size, ranks, collective, nodes given, widest other layout in the log,
#      rule, stripes wanted, where the count comes from)
CASES = {
    "4GB-64-independent": (4 * GB, 64, False, None, 0, "stripe-shared-file", 8, "by size"),
    "40GB-16-independent": (40 * GB, 16, False, None, 0, "stripe-shared-file", 16,
                            "16 ranks write it"),
    "40GB-512-collective-8-nodes": (40 * GB, 512, True, 8, 0, "stripe-shared-file", 8,
                                    "8 aggregators"),
    "2GB-64-collective-1-node": (2 * GB, 64, True, 1, 0, "stripe-shared-file", 2,
                                 "at least 2"),
    "40GB-512-independent-32-OSTs-seen": (40 * GB, 512, False, None, 32, "stripe-shared-file",
                                          24, "by size"),
    "200GB-4-ranks": (200 * GB, 4, False, None, 0, "stripe-huge-file", 72, "by size"),
}


def _diagnose(tmp_path: Path, case: str):
    size, ranks, coll, nodes, seen, rule, want, origin = CASES[case]
    recs = _shared_file(size, ranks, coll)
    lustre = [Lustre(OUT, MiB, 1)]
    if seen:  # another file of the job, already striped over `seen` OSTs
        other = "/scratch/run/restart.dat"
        recs.append(Rec("POSIX", other, 0, {"POSIX_OPENS": 1, "POSIX_READS": 1,
                                             "POSIX_BYTES_READ": MiB,
                                             "POSIX_MAX_BYTE_READ": MiB - 1}))
        lustre.append(Lustre(other, MiB, seen))
    log = write_log(tmp_path / f"{case}.darshan", nprocs=ranks, run_time_s=600.0,
                    exe="/home/u/sim -i in.nml", records=recs, lustre=lustre)
    model = build_model([load_darshan_log(log)], nodes=nodes)
    return model, diagnose(model, Thresholds())


@pytest.mark.parametrize("case", sorted(CASES))
def test_stripe_count_from_size_writers_and_osts(tmp_path: Path, case: str) -> None:
    size, ranks, coll, nodes, seen, rule, want, origin = CASES[case]
    model, rep = _diagnose(tmp_path, case)
    (f,) = [f for f in rep.findings if f.rule.id == rule]
    assert f.hit.values["recommended_stripe_count"] == want
    (art,) = [a for a in f.fix.artifacts if a.kind == "lfs"]
    comment = next(ln for ln in art.content.splitlines() if ln.startswith(f"# {OUT}:"))
    assert f"-> {want} x 1M" in comment and origin in comment and "NERSC" in comment
    osts_known = max(seen, 1)  # the file's own record is on OST 0
    for osts in (1, 4, 2000):
        calls, err, rc = lfs_run(art, osts)
        assert rc == 0, err
        (c,) = [int(c[3]) for c in calls if c[:3] == ["lfs", "setstripe", "-c"]
                and c[-1] == OUT + ".iolab-restripe"]
        # the log proves `osts_known` OSTs; above that the script asks `lfs df`
        assert c == (want if want <= osts_known else min(want, osts))
    assert ("stripes() {" in art.content) == (want > osts_known)
    assert all_problems(model, rep.findings) == []


def test_never_fewer_stripes_than_the_file_has(tmp_path: Path) -> None:
    """A 40 GB file already over 32 OSTs, 16 writers: no restripe (24 or 16 would shrink it)."""
    recs = _shared_file(40 * GB, 16, False)
    log = write_log(tmp_path / "wide.darshan", nprocs=16, run_time_s=600.0, exe="/home/u/sim",
                    records=recs, lustre=[Lustre(OUT, MiB, 32)])
    rep = diagnose(build_model([load_darshan_log(log)]), Thresholds())
    text = "".join(a.content for f in rep.findings for a in f.fix.artifacts if a.kind == "lfs")
    assert not re.search(r"lfs setstripe -c \S+ -S \S+ " + re.escape(OUT), text)


def test_validator_refuses_more_stripes_than_the_file_system_has(tmp_path: Path) -> None:
    """The check itself: a literal count above the OSTs the log proves is refused."""
    model, rep = _diagnose(tmp_path, "4GB-64-independent")
    for f in rep.findings:
        for a in f.fix.artifacts:
            if a.kind == "lfs":
                a.content = re.sub(r'c=\$\(stripes 8 [^)]*\)\n', "", a.content).replace(
                    '-c "$c"', "-c 8")
    assert any("stripe count 8 outside 1..1" in p for p in all_problems(model, rep.findings))


@pytest.mark.parametrize(("size", "count"), [(GB - 1, 1), (GB, 8), (99 * GB, 24),
                                             (100 * GB, 72), (2000 * GB, 144)])
def test_count_by_size_is_nersc_table(size: int, count: int) -> None:
    assert count_by_size(size)[0] == count


def test_more_stripes_keep_the_files_own_stripe_size(tmp_path: Path) -> None:
    """A fix of the count does not change the stripe size too: a 4 MiB-striped file keeps
    4 MiB stripes (1 MiB only when the log has no layout for the file)."""
    recs = _shared_file(4 * GB, 64, False)
    log = write_log(tmp_path / "s4m.darshan", nprocs=64, run_time_s=600.0, exe="/home/u/sim",
                    records=recs, lustre=[Lustre(OUT, 4 * MiB, 1)])
    model = build_model([load_darshan_log(log)])
    rep = diagnose(model, Thresholds())
    (art,) = [a for f in rep.findings if f.rule.id == "stripe-shared-file"
              for a in f.fix.artifacts if a.kind == "lfs"]
    assert re.search(r'lfs setstripe -c "\$c" -S 4M ' + re.escape(OUT), art.content)
    assert "stripe size its own" in art.content
    assert all_problems(model, rep.findings) == []
