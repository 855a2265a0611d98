"""``iolab mdtest`` end to end on 2 real ranks: mdtest's report, the run stored, nothing
left behind, refusals before anything is made."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mdtest_helpers import run_iolab, summary_rows


def stored(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT status, label FROM runs ORDER BY id"))


def test_mdtest_line_prints_mdtests_report_and_is_stored(engine: Path, tmp_path: Path
                                                          ) -> None:
    db, out_dir = tmp_path / "r.db", tmp_path / "out"
    out = run_iolab("mdtest", "--np", "2", "--db", str(db), "-n", "5", "-i", "2", "-d",
                    str(out_dir))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("-- started at ") and lines[-2].startswith("-- finished at ")
    assert lines[-1] == ""  # mdtest ends with an empty line
    assert lines[2].startswith("mdtest-") and "was launched with 2 total task(s) on 1 node(s)" \
        in lines[2]
    assert f"Command line used: mdtest '-n' '5' '-i' '2' '-d' '{out_dir}'" in lines
    assert "2 tasks, 10 files/directories" in lines
    assert "SUMMARY rate (in ops/sec): (of 2 iterations)" in lines
    rows = summary_rows(out.stdout)
    assert [r[0] for r in rows] == ["Directory creation", "Directory stat", "Directory rename",
                                    "Directory removal", "File creation", "File stat",
                                    "File read", "File removal", "Tree creation",
                                    "Tree removal"]
    for _, mx, mn, mean, _sd in rows:
        assert float(mx) >= float(mean) >= float(mn) > 0
    assert stored(db) == [("ok", f"mdtest -n 5 -i 2 -d {out_dir}")]
    assert not out_dir.exists()  # made for the run and removed, as mdtest does


def test_files_only_with_rank_statistics_and_both_tables(engine: Path, tmp_path: Path
                                                          ) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), "-F", "-u", "-P",
                    "--showRankStatistics", "-w", "100", "-e", "100", "-n", "4", "-d",
                    str(out_dir))
    assert out.returncode == 0, out.stderr
    assert "2 tasks, 8 files" in out.stdout.splitlines()
    assert "WARNING: Read bytes is 0" not in out.stdout
    heads = [ln for ln in out.stdout.splitlines() if ln.startswith("SUMMARY")]
    assert heads == ["SUMMARY rate (in ops/sec): (of 1 iterations)",
                     "SUMMARY time (in ms/op): (of 1 iterations)"]
    assert out.stdout.count("per Rank: Max") == 2
    rows = [ln.split() for ln in out.stdout.splitlines() if ln.startswith("   File ")]
    assert len(rows) == 8 and all(len(r) == 2 + 7 for r in rows)  # 3 per rank + 4
    assert out_dir.is_dir() and list(out_dir.iterdir()) == []  # the user's folder stays


@pytest.mark.parametrize("words,says", [
    (["-F", "-n", "5", "-c", "-u"], "nearest in iolab: -c without -u"),
    (["-F", "-n", "5", "-B", "1"], "nearest in iolab: mdtest without -B"),
    (["-n", "5", "-z", "1", "-u", "-N", "1"], "neighbour's tree"),
    (["-F", "-n", "5", "-R", "-W", "2"], "-W without -z/-R"), (["-F", "-n", "x"], "not a number"),
    (["-F", "-n", "5", "-a", "DUMMY", "--dummy.delay-create=10"],
     "nearest in iolab: -a DUMMY without it"),
])
def test_refused_line_exits_2_with_one_line_and_makes_nothing(tmp_path: Path,
                                                              words: list[str],
                                                              says: str) -> None:
    db, out_dir = tmp_path / "r.db", tmp_path / "out"
    out = run_iolab("mdtest", "--np", "2", "--db", str(db), *words, "-d", str(out_dir))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and says in out.stderr
    assert out.stderr.startswith("iolab mdtest: ")
    assert not db.exists() and not out_dir.exists()


def test_help_lists_every_option_with_what_iolab_does() -> None:
    out = run_iolab("mdtest", "-h")
    assert out.returncode == 0
    assert "-N" in out.stdout and "refused:" in out.stdout and "--verify-read" in out.stdout


def test_dry_run_prints_the_bench_line() -> None:
    out = run_iolab("mdtest", "--np", "2", "--dry-run", "-F", "-n", "3", "-d", "/x")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("iolab bench --np 2 ") and "--md-phases files" in out.stdout
