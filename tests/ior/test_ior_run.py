"""``iolab ior`` end to end on 2 real ranks: IOR's report, stored runs, refusals."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from ior_helpers import run_iolab

from iolab.ior.output import population_stats


def test_summary_stddev_divides_by_n_as_ior() -> None:
    """expected IOR's standard deviation with divisor N / was N-1 (the sample's)."""
    assert population_stats([1.0, 3.0]) == (3.0, 1.0, 2.0, 1.0)


def stored(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT status, label FROM runs ORDER BY id"))


def test_ior_line_runs_with_iors_text_report_and_is_stored(engine: Path, tmp_path: Path
                                                            ) -> None:
    db = tmp_path / "r.db"
    out = run_iolab("ior", "--np", "2", "--db", str(db), "-t", "64k", "-b", "256k", "-s", "2",
                    "-i", "2", "-o", str(tmp_path / "f"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("IOR-4") and lines[1].startswith("Began               : ")
    assert "access              : single-shared-file" in lines
    header = [ln for ln in lines if ln.startswith("access    bw(MiB/s)")]
    assert header == ["access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  "
                      "open(s)    wr/rd(s)   close(s)   total(s)   iter"]
    rows = [ln.split() for ln in lines if ln.split()[:1] in (["write"], ["read"])]
    # 2 iterations x (write, read), then the summary's write and read
    assert [r[0] for r in rows] == ["write", "read", "write", "read", "write", "read"]
    assert [r[-1] for r in rows[:4]] == ["0", "0", "1", "1"]
    assert rows[0][4:6] == ["256.00", "64.00"]
    assert "Summary of all tests:" in lines and lines[-1].startswith("Finished")
    assert stored(db) == [("ok", "ior -t 64k -b 256k -s 2 -i 2 -o " + str(tmp_path / "f"))]
    assert not list(tmp_path.glob("f*"))  # removed as IOR removes them without -k


def test_ior_json_summary_read_with_jq_and_iors_key_paths(engine: Path, tmp_path: Path
                                                          ) -> None:
    db = tmp_path / "r.db"
    out = run_iolab("ior", "--np", "2", "--db", str(db), "-F", "-k", "-t", "64k", "-b",
                    "256k", "-i", "2", "-O", "summaryFormat=JSON", "-o", str(tmp_path / "f"))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [s["operation"] for s in doc["summary"]] == ["write", "read"]
    assert len(doc["tests"][0]["Results"]) == 4
    assert doc["tests"][0]["Parameters"]["filePerProc"] == 1
    for s in doc["summary"]:
        assert s["bwMinMIB"] <= s["bwMeanMIB"] <= s["bwMaxMIB"] and s["numTasks"] == 2
    if shutil.which("jq"):
        got = subprocess.run(["jq", ".summary[].bwMaxMIB"], input=out.stdout, text=True,
                             capture_output=True, check=True).stdout.split()
        assert [float(x) for x in got] == [s["bwMaxMIB"] for s in doc["summary"]]
    sizes = sorted(p.stat().st_size for p in tmp_path.glob("f.*"))
    assert sizes == [256 * 1024, 256 * 1024]  # -k kept them: one block per rank


def test_ior_csv_has_iors_header_and_a_row_per_phase(engine: Path, tmp_path: Path) -> None:
    out = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-w", "-t", "64k",
                    "-b", "128k", "-O", "summaryFormat=CSV", "-o", str(tmp_path / "f"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),"
                        "close(s),total(s),numTasks,iter")
    assert len(lines) == 2 and lines[1].startswith("write,") and lines[1].endswith(",2,0")


def test_script_file_runs_each_test_once_stored_each(engine: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.ior"
    script.write_text(f"IOR START\n testFile={tmp_path / 'f'}\n transferSize=64k\n"
                      " blockSize=64k\nRUN\n filePerProc=1\nRUN\nIOR STOP\n")
    db = tmp_path / "r.db"
    out = run_iolab("ior", "--np", "2", "--db", str(db), "-f", str(script))
    assert out.returncode == 0, out.stderr
    assert [ln for ln in out.stdout.splitlines() if ln.startswith("TestID")] == \
        ["TestID              : 0", "TestID              : 1"]
    assert len(stored(db)) == 2


@pytest.mark.parametrize("words,says", [
    (["--posix.rangelocks"], "range locks"), (["-z", "-z"], "division by zero"),
    (["-a", "S3"], "no S3 backend"),
    (["-t", "1x"], "not a number"), (["-a", "HDF5", "-z"], "-a MPIIO"),
])
def test_refused_line_exits_2_with_one_line_and_stores_nothing(tmp_path: Path, words: list[str],
                                                               says: str) -> None:
    db = tmp_path / "r.db"
    out = run_iolab("ior", "--np", "2", "--db", str(db), *words, "-o", str(tmp_path / "f"))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and says in out.stderr
    assert not db.exists() and not list(tmp_path.glob("f*"))


def test_help_lists_every_option_with_what_iolab_does() -> None:
    out = run_iolab("ior", "-h")
    assert out.returncode == 0
    assert "-m" in out.stdout and "refused:" in out.stdout and "--posix.odirect" in out.stdout


def test_iors_own_delay_line_runs_with_a_note(engine: Path, tmp_path: Path) -> None:
    """expected IOR's test line '-w -Z -i1 -m -t 100k -b 100k -d 0.1' to run as IOR runs it
    (no delay: IOR keeps the whole seconds) with one note on stderr / was refused, exit 2."""
    db = tmp_path / "r.db"
    out = run_iolab("ior", "--np", "2", "--db", str(db), "-a", "POSIX", "-w", "-Z", "-i1", "-m",
                    "-t", "100k", "-b", "100k", "-d", "0.1", "-o", str(tmp_path / "f"))
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("note: -d 0.1: IOR reads whole seconds, 0 s here") == 1
    assert "--phase-delay" not in out.stdout and db.exists()
    assert [ln.split()[0] for ln in out.stdout.splitlines() if ln.startswith("write ")] == \
        ["write", "write"]  # the results table and the summary, as IOR's


def test_time_stamp_signature_accepted_and_a_later_run_checks_the_files(engine: Path,
                                                                         tmp_path: Path) -> None:
    """expected -G N / -O setTimeStampSignature=N (IOR's bug-multi-node.conf) to run with a
    note, and a later -R run with another -G to check the files a -W run wrote (iolab's
    pattern, written when a check is asked, is the same in every run), as IOR's does with the
    same -G / was refused, exit 2."""
    f = str(tmp_path / "f")
    first = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-w", "-W", "-k", "-t",
                      "4k", "-b", "16k", "-O", "setTimeStampSignature=1511817315", "-o", f)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("-O setTimeStampSignature=1511817315: IOR's time stamp sets "
                              "only") == 1
    again = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-r", "-R", "-k",
                      "-G", "7", "-t", "4k", "-b", "16k", "-o", f)
    assert again.returncode == 0, again.stderr
    assert "-G 7: IOR's time stamp" in again.stderr
    assert [ln.split()[0] for ln in again.stdout.splitlines() if ln.startswith("read ")] == \
        ["read", "read"]
    (tmp_path / "f").write_bytes(b"\0" * 32768)  # not the pattern: the check must fail
    bad = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), "-r", "-R", "-k",
                    "-G", "7", "-t", "4k", "-b", "16k", "-o", f)
    assert bad.returncode != 0
