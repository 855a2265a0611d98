"""``iolab mdtest -F`` with one of -C, -T, -E, -r alone, line after line on the same -d
folder, against a real mdtest (IOLAB_MDTEST) doing the same: under strace on 2 ranks each
step makes the same calls on the same names as mdtest's, -C leaves the same files for the
next line, -r removes them with the tree, and an -E -X line checks what the -C line wrote
(mdtest's own -X reports errors there when -N shifts the reader, so only iolab's is run). Skipped,
with the reason, without a real mdtest."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from mdtest_helpers import mpirun_env, run_iolab, summary_rows
from mdtest_trace import calls_by_rank, traced

from iolab.paths import engine_binary

BASE = ["-F", "-z", "1", "-b", "2", "-I", "2", "-w", "12", "-e", "12", "-N", "1"]
STEPS = ("-C", "-T", "-E", "-r")
TOUCHED = ("create", "stat", "open", "unlink")  # what names an item in each step


def engine_path() -> str:
    return str(engine_binary("default"))


def left(folder: Path) -> list[tuple[str, int]]:
    """What a line left below the -d folder: relative names and file sizes."""
    if not folder.exists():
        return []
    return sorted((str(p.relative_to(folder)), p.stat().st_size if p.is_file() else -1)
                  for p in folder.rglob("*"))


def same_steps(real_mdtest: Path, tmp_path: Path, lines: list[list[str]]) -> tuple[Path, Path]:
    """Each line by mdtest then by iolab, each tool on its own -d folder kept across the
    lines: the same calls per rank, the same SUMMARY rows, the same files left after each."""
    theirs_dir, ours_dir = tmp_path / "mdtest-out", tmp_path / "iolab-out"
    for words in lines:
        k = len(list(tmp_path.glob("t-mdtest-*")))  # traces of earlier calls stay apart
        theirs_wrap, theirs_trace = traced(tmp_path, real_mdtest, f"mdtest-{k}")
        p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(theirs_wrap),
                            *[w.replace("{tool}", "mdtest") for w in words], "-d",
                            str(theirs_dir)], cwd=tmp_path, env=mpirun_env(),
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        ours_wrap, ours_trace = traced(tmp_path, Path(engine_path()), f"iolab-{k}")
        out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"),
                        *[w.replace("{tool}", "iolab") for w in words], "-d", str(ours_dir),
                        env={"IOLAB_BENCH": str(ours_wrap)})
        assert out.returncode == 0, (words, out.stderr)
        theirs = calls_by_rank(theirs_trace, str(theirs_dir), made=TOUCHED)
        ours = calls_by_rank(ours_trace, str(ours_dir), made=TOUCHED)
        assert set(theirs) == {0, 1}
        for rank in (0, 1):
            assert ours[rank] == theirs[rank], (words, rank)
        assert [r[0] for r in summary_rows(out.stdout)] == \
            [r[0] for r in summary_rows(p.stdout)]
        assert left(ours_dir) == left(theirs_dir), words
    return theirs_dir, ours_dir


def test_phase_letters_alone_run_mdtests_steps_on_what_the_last_line_left(
        real_mdtest: Path, engine: Path, tmp_path: Path) -> None:
    """expected -C, -T, -E, -r alone (with -F) to each run that phase on the files the
    previous line left, call for call as mdtest / was refused ('the engine runs create,
    stat, read and remove together')."""
    same_steps(real_mdtest, tmp_path, [[*BASE, letter] for letter in STEPS[:3]])
    # the -C line wrote the pattern -X checks (each reader a neighbour's)
    check = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *BASE, "-E",
                      "-X", "-d", str(tmp_path / "iolab-out"))
    assert check.returncode == 0, check.stdout + check.stderr
    _, ours_dir = same_steps(real_mdtest, tmp_path, [[*BASE, "-r"]])
    assert left(ours_dir) == []


def test_status_file_carries_the_creations_count_to_later_lines(
        real_mdtest: Path, engine: Path, tmp_path: Path) -> None:
    """expected -x FILE written by a -W creation (its count) and read by later -T and -r
    lines as their -n, as mdtest / was refused ('the engine runs every phase in one
    run')."""
    status = str(tmp_path / "{tool}.stonewall")
    same_steps(real_mdtest, tmp_path, [
        ["-F", "-u", "-n", "4", "-W", "100", "-x", status, "-C"],
        ["-F", "-u", "-n", "50", "-x", status, "-T"],
        ["-F", "-u", "-n", "50", "-x", status, "-r"]])
    assert (tmp_path / "iolab.stonewall").read_text() == \
        (tmp_path / "mdtest.stonewall").read_text() == "4"


def test_unreadable_status_file_warns_and_keeps_n(engine: Path, tmp_path: Path) -> None:
    """expected mdtest's warning and -n when -x names no readable count / was refused."""
    md = tmp_path / "md"
    made = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), "-F", "-n", "3",
                     "-C", "-d", str(md))
    assert made.returncode == 0, made.stderr
    out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), "-F", "-n", "3",
                    "-x", str(tmp_path / "none"), "-r", "-d", str(md))
    assert out.returncode == 0, out.stderr
    assert "Could not read stonewall status file" in out.stderr
    assert not md.exists()


def test_time_unique_dir_overhead_makes_mdtests_calls(real_mdtest: Path, engine: Path,
                                                      tmp_path: Path) -> None:
    """expected -t (IO500's mdtest-hard line has it) to run, with the calls mdtest makes /
    was refused ('the engine makes its directories outside the timing')."""
    _, ours_dir = same_steps(real_mdtest, tmp_path, [["-u", "-n", "3", "-t"],
                                                     ["-F", "-n", "3", "-t"]])
    assert left(ours_dir) == []


def test_n_beyond_i_loops_over_test_directories_as_real_mdtest(real_mdtest: Path,
                                                               engine: Path,
                                                               tmp_path: Path) -> None:
    """expected -n a multiple of -I (no tree) to run each phase over n / I test directories
    (test-dir.0-0, test-dir.0-1, ...), I items in each, call for call as mdtest / was
    refused ('mdtest then loops over ... test directories, not in the engine')."""
    _, ours_dir = same_steps(real_mdtest, tmp_path, [
        ["-n", "6", "-I", "2"],
        ["-F", "-n", "6", "-I", "3", "-N", "1", "-w", "5", "-e", "5", "-i", "2"]])
    assert left(ours_dir) == []


def sync_calls(trace_dir: Path) -> int:
    """sync() calls in every traced process (mdtest's run in the sync command it starts)."""
    return sum(len(re.findall(r"^(?:\d+ +)?sync\(\) += 0", f.read_text(), re.M))
               for f in trace_dir.iterdir())


def _both_traced(real_mdtest: Path, engine: Path, tmp_path: Path, words: list[str],
                 what: str) -> list[Path]:
    """The same mdtest line by real mdtest and by iolab mdtest, 2 ranks, each under strace
    -f -ff -e ``what``: the two trace folders (mdtest's first)."""
    dirs = []
    for name, binary in (("mdtest", real_mdtest), ("iolab", engine)):
        script, trace_dir = traced(tmp_path, binary, name, what, follow="-f -ff")
        folder = str(tmp_path / f"{name}-out")
        if name == "mdtest":
            p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(script), *words,
                                "-d", folder], cwd=tmp_path, env=mpirun_env(),
                               capture_output=True, text=True, timeout=300)
            assert p.returncode == 0, p.stdout + p.stderr
        else:
            out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words,
                            "-d", folder, env={"IOLAB_BENCH": str(script)})
            assert out.returncode == 0, out.stderr
        dirs.append(trace_dir)
    return dirs


@pytest.mark.parametrize("words,phases", [
    (["-F", "-n", "3", "-Y"], 4),
    (["-n", "3", "-u", "-Y"], 9),  # mdtest's empty directory read phase syncs too
    (["-F", "-z", "1", "-b", "2", "-I", "1", "-Y"], 4),  # none after the tree phases
])
def test_call_sync_after_each_phase_as_real_mdtest(real_mdtest: Path, engine: Path,
                                                   tmp_path: Path, words: list[str],
                                                   phases: int) -> None:
    """expected -Y to sync after each phase on every rank, as many times as mdtest / was
    refused ('the engine does not call sync after each phase')."""
    counts = [sync_calls(d) for d in _both_traced(real_mdtest, engine, tmp_path, words,
                                                    "trace=sync")]
    assert counts == [2 * phases, 2 * phases]


def two_second_sleeps(trace_dir: Path) -> list[int]:
    """Per traced thread, its sleeps of exactly two seconds (mdtest's sleep(2), the
    engine's nanosleep), the threads with none left out (Open MPI's own are of one second)."""
    pattern = re.compile(r"^(?:\d+ +)?(?:clock_)?nanosleep\((?:CLOCK_REALTIME, 0, )?"
                         r"\{tv_sec=2, tv_nsec=0\}", re.M)
    counts = [len(pattern.findall(f.read_text())) for f in trace_dir.iterdir()]
    return [c for c in counts if c]


@pytest.mark.parametrize("words,sleeps", [
    (["-F", "-n", "2", "-p", "2"], 1),
    (["-n", "2", "-p", "2"], 2),  # before the directory block and before the file block
])
def test_pre_delay_sleeps_on_rank_0_before_each_block_as_real_mdtest(
        real_mdtest: Path, engine: Path, tmp_path: Path, words: list[str],
        sleeps: int) -> None:
    """expected -p N to sleep N seconds in one process (rank 0) before each block of phases,
    as many times as mdtest / was refused ('no delay before an iteration in the engine')."""
    found = [two_second_sleeps(d) for d in _both_traced(
        real_mdtest, engine, tmp_path, words, "trace=nanosleep,clock_nanosleep")]
    assert found == [[sleeps], [sleeps]]
