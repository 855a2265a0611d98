"""Several logs on one command line (issue 8, item 6).

Expected / was: logs of different jobs were merged into one ("5 processes, 136968806 s"
for logs years apart), silently. Now logs are one job only when they share a job id (and
user, within a day), or with ``--as-one-job``; otherwise each is diagnosed alone and one
line says so. A workflow's times add up per log: logs that ran one after another add their
run and I/O times, overlapping logs count once (the slowest).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import corpus
import pytest
from artifact_check import all_problems
from darshan_writer import Rec, write_log

from iolab.cli import main
from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose, to_dict
from iolab.diagnose.several import group_logs
from iolab.model.job import build_model

pytestmark = pytest.mark.usefixtures("darshan_available")
MiB = 1 << 20
RELEASE = corpus.REAL_LOGS_DIR / "release_logs"
DLIO = sorted((corpus.REAL_LOGS_DIR / "dlio_logs").glob("*.darshan"))
CORPUS = corpus.needs_real_logs


def _load(paths):
    from iolab.sources.darshan import load_darshan_log

    return [load_darshan_log(p) for p in paths]


def _clusters(raws) -> list[list[int]]:
    """Overlapping runs of logs, computed here independently of iolab.model.workflow."""
    spans = sorted((r.start_time, r.end_time, i) for i, r in enumerate(raws))
    out: list[list[int]] = []
    end = float("-inf")
    for s, e, i in spans:
        if out and s < end:
            out[-1].append(i)
        else:
            out.append([i])
        end = max(end, e) if len(out[-1]) > 1 else e
    return out


@CORPUS
def test_real_logs_of_different_jobs_are_diagnosed_apart(capsys) -> None:
    paths = [RELEASE / "mpi-io-test-x86_64-3.4.0.darshan",
             RELEASE / "mpi-io-test-x86_64-3.4.1.darshan",
             RELEASE / "mpi-io-test-x86_64-3.5.0.darshan"]
    raws = _load(paths)
    assert len({r.jobid for r in raws}) == 3
    groups, note = group_logs(raws)
    assert [len(g) for g in groups] == [1, 1, 1]
    assert "3 logs are 3 different jobs" in note and "--as-one-job" in note
    for g, r in zip(groups, raws):
        m = build_model(g)
        assert m.job.nprocs == r.nprocs and m.job.run_time_s == r.run_time_s
    # the command line: one report per job, the note once on stderr
    assert main(["diagnose", "--color", "never", *map(str, paths)]) == 0
    out, err = capsys.readouterr()
    assert out.count("4 process(es)") == 3 and "12 process(es)" not in out
    assert err.count("\n") == 1 and "different jobs" in err
    assert main(["diagnose", "--json", "-", *map(str, paths)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["job"]["nprocs"] for r in doc["reports"]] == [4, 4, 4]
    assert all(any("different jobs" in n for n in r["job"]["notes"]) for r in doc["reports"])
    # merged only when asked, and said so
    assert main(["diagnose", "--color", "never", "--as-one-job", *map(str, paths)]) == 0
    out, err = capsys.readouterr()
    assert "12 process(es)" in out and "merged into one job as asked" in err
    # merged, the years between the runs are not run time: the three run times add up
    # (two of these formats keep whole seconds: start == end, run time 1 s)
    merged = build_model(raws)
    assert merged.job.run_time_s == pytest.approx(sum(r.run_time_s for r in raws))
    assert merged.metrics.io_time_s <= merged.job.run_time_s


@CORPUS
def test_real_workflow_logs_of_one_job_add_up_per_log() -> None:
    """16 logs of one DLIO job (job id 3116902): one workflow; its run and I/O times are
    the per-log ones combined (overlapping processes once, sequential ones added)."""
    if len(DLIO) < 2:
        pytest.skip("dlio_logs not in the corpus")
    raws = _load(DLIO)
    groups, note = group_logs(raws)
    assert len(groups) == 1 and note == ""
    merged = build_model(groups[0])
    alone = [build_model([r]).metrics.io_time_s for r in raws]
    clusters = _clusters(raws)
    want_io = sum(max(alone[i] for i in c) for c in clusters)
    want_run = sum(max(raws[i].end_time for i in c) - min(raws[i].start_time for i in c)
                   for c in clusters)
    assert merged.job.n_logs == 16 and merged.job.nprocs == sum(r.nprocs for r in raws)
    assert merged.metrics.io_time_s == pytest.approx(want_io, rel=1e-9)
    assert merged.job.run_time_s == pytest.approx(want_run, rel=1e-9)
    assert merged.job.run_time_s != raws[0].run_time_s
    # the workflow's fix files are valid for it too (its own files, its command line)
    assert all_problems(merged, diagnose(merged, Thresholds()).findings) == []


def _step(tmp: Path, name: str, jobid: int, start: int, run: float, io_s: float) -> Path:
    """One step of a workflow: 2 ranks; rank 0 writes 64 MiB to its own file in io_s."""
    recs = [Rec("POSIX", f"/scratch/wf/{name}.dat", 0, {
        "POSIX_OPENS": 1, "POSIX_WRITES": 64, "POSIX_BYTES_WRITTEN": 64 * MiB,
        "POSIX_MAX_BYTE_WRITTEN": 64 * MiB - 1, "POSIX_SIZE_WRITE_1M_4M": 64,
        "POSIX_CONSEC_WRITES": 63, "POSIX_SEQ_WRITES": 63, "POSIX_F_WRITE_TIME": io_s})]
    return write_log(tmp / f"{name}.darshan", nprocs=2, run_time_s=run, exe=f"./{name} -x",
                     records=recs, jobid=jobid, start=start)


def test_written_workflow_logs_add_up_and_other_jobs_stay_apart(tmp_path: Path) -> None:
    t0 = 1_700_000_000
    a = _step(tmp_path, "pre", 9001, t0, 100, 40.0)        # 0-100 s
    b = _step(tmp_path, "solve", 9001, t0 + 100, 100, 10.0)  # 100-200 s
    c = _step(tmp_path, "viz", 9001, t0 + 150, 100, 30.0)    # 150-250 s, beside solve
    other = _step(tmp_path, "other", 9002, t0 + 120, 50, 5.0)  # another job
    later = _step(tmp_path, "again", 9001, t0 + 10 * 86400, 60, 5.0)  # job id reused
    raws = _load([a, b, c, other, later])
    groups, note = group_logs(raws)
    assert [[r.exe.split()[0] for r in g] for g in groups] == [
        ["./pre", "./solve", "./viz"], ["./other"], ["./again"]]
    assert "5 logs are 3 different jobs (job ids 9001, 9002)" in note
    wf = build_model(groups[0])
    assert wf.metrics.io_time_s == pytest.approx(40.0 + max(10.0, 30.0))
    assert wf.job.run_time_s == pytest.approx(100.0 + 150.0)
    assert wf.job.nprocs == 6 and wf.job.n_logs == 3
    rep = diagnose(wf, Thresholds())
    assert rep.model.metrics.io_fraction == pytest.approx(70.0 / 250.0)
    # the JSON lists what the workflow's times add up from
    per_log = to_dict(rep)["job"]["per_log"]
    assert [(p["exe"].split()[0], p["start_offset_s"], p["run_time_s"], p["io_time_s"])
            for p in per_log] == [("./pre", 0.0, 100.0, 40.0), ("./solve", 100.0, 100.0, 10.0),
                                  ("./viz", 150.0, 100.0, 30.0)]
    assert to_dict(rep)["summary"]["io_time_s"] == pytest.approx(40.0 + 30.0)
    assert to_dict(diagnose(build_model(groups[1]), Thresholds()))["job"]["per_log"] == []
    # --as-one-job and --each override the job ids
    assert len(group_logs(raws, as_one_job=True)[0]) == 1
    assert [len(g) for g in group_logs(raws[:3], each=True)[0]] == [1, 1, 1]


def test_logs_without_job_id_are_diagnosed_alone(tmp_path: Path) -> None:
    raws = _load([_step(tmp_path, "x", 0, 1_700_000_000, 10, 1.0),
                  _step(tmp_path, "y", 0, 1_700_000_000, 10, 1.0)])
    groups, note = group_logs(raws)
    assert [len(g) for g in groups] == [1, 1] and "each job is diagnosed alone" in note


def test_workflow_table_in_text_and_html(tmp_path: Path) -> None:
    """Expected / was: the per-log table of a workflow only in --json; now the text and
    HTML reports show it too (every name escaped, nothing loaded from the network)."""
    import io

    from iolab.diagnose.render_html import render_html
    from iolab.diagnose.render_text import render_text

    t0 = 1_700_000_000
    evil = tmp_path / "<b>x&"
    evil.mkdir()
    logs = [_step(tmp_path, "pre", 9001, t0, 100, 40.0),
            _step(evil, "<img src=y.png>", 9001, t0 + 100, 100, 10.0)]
    rep = diagnose(build_model(_load(logs)), Thresholds())
    buf = io.StringIO()
    render_text(rep, buf, color=False, width=160)
    text = buf.getvalue()
    assert "2 logs of job 9001 (" in text
    i = text.index("log  ")
    rows = [ln.split() for ln in text[i:].splitlines()[1:3]]
    # log (name without the common ".darshan"), program, ranks, start_s, run_s, io_s
    assert rows == [["pre", "pre", "2", "0.0", "100.0", "40.0"],
                    ["<img", "src=y.png>", "<img", "2", "100.0", "100.0", "10.0"]]
    page = render_html([rep])
    assert "2 logs of job id(s) 9001" in page
    assert ("<td>pre.darshan</td><td>pre</td><td>2</td><td>0.0</td><td>100.0</td>"
            "<td>40.0</td>") in page
    assert "<img" not in page and "<b>x" not in page
    assert "&lt;img src=y.png&gt;" in page and "&lt;b&gt;x&amp;" in page
    assert not re.search(r"(src|href)\s*=\s*[\"']?[a-z]+:", page)  # no network load


def test_imbalance_is_judged_within_each_log_of_a_workflow(tmp_path: Path) -> None:
    """Expected / was: the 16 DLIO logs of one job (one process each) gave "bytes in
    per-rank files differ by 95.6%: rank 12 moved 11.2 GiB, rank 0 499.6 MiB", first, with
    "the job waits for the rank with the most data"; processes of different logs are
    different MPI worlds and never wait for each other. Within one log it still fires."""
    def one(name: str, size: int, start: int, nprocs: int = 1) -> Path:
        recs = [Rec("POSIX", f"/scratch/wf/{name}.{r}", r, {
            "POSIX_OPENS": 1, "POSIX_WRITES": max(size >> 20, 1) >> r,
            "POSIX_BYTES_WRITTEN": size >> (4 * r), "POSIX_MAX_BYTE_WRITTEN": (size >> (4 * r)) - 1,
            "POSIX_SIZE_WRITE_1M_4M": 16, "POSIX_F_WRITE_TIME": 20.0 / (1 + 9 * r)})
            for r in range(nprocs)]
        return write_log(tmp_path / f"{name}.darshan", nprocs=nprocs, run_time_s=100,
                         exe=f"./{name}", records=recs, jobid=77, start=start)
    t0 = 1_700_000_000
    wf = build_model(_load([one("a", 2 << 30, t0), one("b", 16 << 20, t0 + 10)]))
    assert wf.job.n_logs == 2
    assert not any(f.rule.id == "per-rank-imbalance"
                   for f in diagnose(wf, Thresholds()).findings)
    alone = build_model(_load([one("c", 2 << 30, t0, nprocs=2)]))
    (f,) = [f for f in diagnose(alone, Thresholds()).findings if f.rule.id == "per-rank-imbalance"]
    assert f.hit.values["max_rank"] == 0 and f.hit.values["min_rank"] == 1


def test_small_input_of_a_workflow_is_judged_per_mpi_world(tmp_path: Path) -> None:
    """Expected / was: 16 one-process DLIO logs each reading pyvenv.cfg at start-up were told
    "read the file on one rank and MPI_Bcast" (to processes of other MPI worlds); one log
    whose 8 ranks read it still is."""
    def reader(name: str, nprocs: int, start: int) -> Path:
        recs = [Rec("POSIX", "/home/u/run/config.nml", r, {
            "POSIX_OPENS": 1, "POSIX_READS": 1, "POSIX_BYTES_READ": 4096,
            "POSIX_MAX_BYTE_READ": 4095, "POSIX_SIZE_READ_1K_10K": 1,
            "POSIX_F_READ_TIME": 0.01}) for r in range(nprocs)]
        recs.append(Rec("POSIX", f"/scratch/{name}.out", 0, {
            "POSIX_OPENS": 1, "POSIX_WRITES": 64, "POSIX_BYTES_WRITTEN": 64 << 20,
            "POSIX_MAX_BYTE_WRITTEN": (64 << 20) - 1, "POSIX_SIZE_WRITE_1M_4M": 64}))
        return write_log(tmp_path / f"{name}.darshan", nprocs=nprocs, run_time_s=100,
                         exe=f"./{name}", records=recs, jobid=88, start=start)
    t0 = 1_700_000_000
    wf = build_model(_load([reader(f"w{i}", 1, t0 + i) for i in range(8)]))
    assert wf.job.n_logs == 8 and int(wf.files.nranks.max()) == 8
    assert not any(f.rule.id == "small-shared-input" for f in diagnose(wf, Thresholds()).findings)
    one = build_model(_load([reader("mpi", 8, t0)]))
    (f,) = [f for f in diagnose(one, Thresholds()).findings if f.rule.id == "small-shared-input"]
    assert f.hit.values["max_ranks"] == 8
