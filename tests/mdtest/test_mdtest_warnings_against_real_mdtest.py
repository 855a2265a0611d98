"""mdtest lines that meet what an earlier line left, or a deadline in the directory creation,
against a real mdtest (IOLAB_MDTEST) on the same ranks: mdtest warns for each call that
fails and goes on (exit 0), so iolab mdtest does too (``--md-warn``), and a cleanup never
removes an item the run did not make itself. Skipped, with the reason, without a real
mdtest (the tests that need only iolab run without it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from mdtest_helpers import mpirun_env, run_iolab, summary_rows
from mdtest_trace import traced
from test_mdtest_steps_against_real_mdtest import left, same_steps

from iolab.paths import engine_binary

# IOR's testing/complex-tests.sh, the three mdtest lines on one folder
IOR_LINES = [["-I", "20", "-a", "POSIX", "-W", "1", "-x", "{tool}.stonewall", "-C"],
             ["-I", "20", "-a", "POSIX", "-W", "1", "-x", "{tool}.stonewall", "-T", "-v"],
             ["-I", "20", "-a", "POSIX", "-W", "1", "-x", "{tool}.stonewall", "-D", "-v"]]


def test_ior_script_d_line_after_c_and_t_warns_goes_on_and_keeps_their_files(
        real_mdtest: Path, engine: Path, tmp_path: Path) -> None:
    """expected IOR's -C, -T -v, -D -v lines on one folder to run as mdtest's: the -D line
    warns where the tree and directories exist already, goes on, exits 0 and leaves the
    files the -C line made / was exit 1, stored as failed, and its cleanup removed every
    file of the earlier lines."""
    lines = [[w.replace("{tool}", str(tmp_path / "{tool}")) for w in words]
             for words in IOR_LINES]
    theirs_dir, ours_dir = same_steps(real_mdtest, tmp_path, lines)
    files = [name for name, size in left(ours_dir) if "/file.mdtest." in name]
    assert len(files) == 40  # 2 ranks x 20, made by the -C line
    assert left(ours_dir) == left(theirs_dir)


def test_failed_run_cleanup_removes_only_what_it_made(engine: Path, tmp_path: Path) -> None:
    """expected a run that fails (no --md-warn) on a folder an earlier line filled to remove
    only what it made itself / was its cleanup unlinking every item name of its plan, the
    earlier line's files included."""
    md, db = tmp_path / "md", str(tmp_path / "r.db")
    made = run_iolab("mdtest", "--np", "2", "--db", db, "-F", "-n", "3", "-C", "-d", str(md))
    assert made.returncode == 0, made.stderr
    before = left(md)
    plan = run_iolab("mdtest", "--np", "2", "--dry-run", "-n", "3", "-d", str(md))
    words = plan.stdout.split()[2:]  # "iolab bench ..." of every phase
    words.remove("--md-warn")
    out = run_iolab("bench", "--db", db, *words)
    assert out.returncode == 1, out.stdout + out.stderr  # tree_create: File exists
    assert left(md) == before


def test_a_later_phase_alone_on_no_files_warns_and_goes_on(engine: Path,
                                                           tmp_path: Path) -> None:
    """expected a stat line with nothing created before it to warn and exit 0, as mdtest's
    does / was exit 1, stored as failed."""
    out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), "-F", "-n", "3",
                    "-T", "-d", str(tmp_path / "md"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"^WARNING: stat \S+: No such file or directory \(6 calls",
                     out.stdout, re.M), out.stdout
    assert "File stat" in [r[0] for r in summary_rows(out.stdout)]


def _dirs_made(folder: Path) -> int:
    return sum(1 for p in folder.rglob("dir.mdtest.*") if p.is_dir())


def test_stonewall_stops_directory_creation_as_real_mdtest(real_mdtest: Path, engine: Path,
                                                          tmp_path: Path) -> None:
    """expected -W to stop each rank's directory creation at the deadline, as mdtest's
    directory_test (no wear-out) / was applied to file creation only, every directory
    made."""
    items = 40000  # far more than 1 s of mkdir on one node
    words = ["-D", "-C", "-n", str(items), "-W", "1"]
    theirs, ours = tmp_path / "mdtest-out", tmp_path / "iolab-out"
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(real_mdtest), *words,
                        "-d", str(theirs)], cwd=tmp_path, env=mpirun_env(),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-d",
                    str(ours))
    assert out.returncode == 0, out.stdout + out.stderr
    for folder in (theirs, ours):
        assert 2 <= _dirs_made(folder) < 2 * items, folder


def test_directories_and_files_have_mdtests_modes(real_mdtest: Path, engine: Path,
                                                  tmp_path: Path) -> None:
    """expected mkdir with mdtest's 0775 and create with its 0664 under strace / was 0755
    and 0644."""
    modes = {}
    for name, binary in (("mdtest", real_mdtest), ("iolab", engine_binary("default"))):
        script, trace_dir = traced(tmp_path, binary, name, "trace=mkdir,openat")
        words = ["-z", "1", "-n", "2", "-C", "-d", str(tmp_path / f"{name}-out")]
        if name == "mdtest":
            p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(script), *words],
                               cwd=tmp_path, env=mpirun_env(), capture_output=True,
                               text=True, timeout=300)
            assert p.returncode == 0, p.stdout + p.stderr
        else:
            out = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words,
                            env={"IOLAB_BENCH": str(script)})
            assert out.returncode == 0, out.stdout + out.stderr
        text = "".join(f.read_text() for f in trace_dir.iterdir())
        modes[name] = (set(re.findall(r'mkdir\("[^"]*(?:test-dir|mdtest_tree|dir\.mdtest)'
                                      r'[^"]*", (0\d+)\)', text)),
                       set(re.findall(r'openat\([^"]*"[^"]*file\.mdtest[^"]*", '
                                      r'[^)]*O_CREAT[^)]*, (0\d+)\)', text)))
    assert modes["iolab"] == modes["mdtest"] == ({"0775"}, {"0664"})


def test_ior_script_dummy_lines_run_make_nothing_and_print_mdtests_rows(
        real_mdtest: Path, engine: Path, tmp_path: Path) -> None:
    """expected IOR's -a DUMMY lines (-C, -T -v, -D -v) to run on the engine's null backend,
    make nothing under -d, write the -x count and print mdtest's rows / was refused ('the
    engine's metadata phases have no null backend')."""
    for tool in ("mdtest", "iolab"):
        (tmp_path / tool).mkdir()
    for words in IOR_LINES:
        line = [w.replace("POSIX", "DUMMY") for w in words]
        theirs = subprocess.run(
            ["mpirun", "--oversubscribe", "-np", "2", str(real_mdtest),
             *[w.replace("{tool}", str(tmp_path / "mdtest" / "sw")) for w in line],
             "-d", str(tmp_path / "mdtest" / "out")],
            cwd=tmp_path, env=mpirun_env(), capture_output=True, text=True, timeout=300)
        assert theirs.returncode == 0, theirs.stdout + theirs.stderr
        ours = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"),
                         *[w.replace("{tool}", str(tmp_path / "iolab" / "sw")) for w in line],
                         "-d", str(tmp_path / "iolab" / "out"))
        assert ours.returncode == 0, ours.stdout + ours.stderr
        assert [r[0] for r in summary_rows(ours.stdout)] == \
            [r[0] for r in summary_rows(theirs.stdout)]
        moved = [r for r in summary_rows(ours.stdout) if float(r[1]) > 0]
        assert [r[0] for r in moved] == \
            [r[0] for r in summary_rows(theirs.stdout) if float(r[1]) > 0], line
    for tool in ("mdtest", "iolab"):  # nothing made but the -x file, which mdtest writes too
        assert sorted(p.name for p in (tmp_path / tool).iterdir()) == ["sw.stonewall"], tool
    assert (tmp_path / "iolab" / "sw.stonewall").read_text().strip() == \
        (tmp_path / "mdtest" / "sw.stonewall").read_text().strip()


PER_RANK = 5000  # stats enough that mdtest's 3-decimal time (s) is within a few per cent


def _items_in_rate(report: str) -> float:
    """File stat's SUMMARY rate Mean times its SUMMARY time Mean (-P prints both): the
    items the rate counts."""
    rows = {}
    lines = report.splitlines()
    for title in ("SUMMARY rate", "SUMMARY time"):
        start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
        stat = next(ln for ln in lines[start + 3:] if ln.split()[:2] == ["File", "stat"])
        rows[title] = float(stat.split()[-2])
    return rows["SUMMARY rate"] * rows["SUMMARY time"]


def _half_removed(folder: Path) -> int:
    """Every other file of each rank gone (as an earlier line or a user left them); how many
    files are left."""
    for f in folder.rglob("file.mdtest.*.*"):
        if int(f.name.rsplit(".", 1)[1]) % 2:
            f.unlink()
    return sum(1 for _ in folder.rglob("file.mdtest.*.*"))


def test_stat_rate_counts_every_item_tried_as_real_mdtest(real_mdtest: Path, engine: Path,
                                                          tmp_path: Path) -> None:
    """expected the File stat rate of a -T line on a folder where half the files are missing
    to count every item tried (each rank's -n, the failed stats included) over the phase
    time, as mdtest's updateResult: rate x time = 2 x -n for real mdtest and iolab mdtest
    alike / was the stats that succeeded only (iolab: half of mdtest's count)."""
    words = ["-F", "-n", str(PER_RANK)]
    base = tmp_path / "base"
    made = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-C",
                     "-d", str(base))
    assert made.returncode == 0, made.stderr
    assert _half_removed(base) == PER_RANK
    got = {}
    for tool in ("mdtest", "iolab"):
        folder = tmp_path / tool
        shutil.copytree(base, folder, symlinks=True)
        if tool == "mdtest":
            p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(real_mdtest),
                                *words, "-T", "-P", "-d", str(folder)], cwd=tmp_path,
                               env=mpirun_env(), capture_output=True, text=True, timeout=300)
            out, rc = p.stdout, p.returncode
        else:
            ran = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words,
                            "-T", "-P", "-d", str(folder))
            out, rc = ran.stdout, ran.returncode
        assert rc == 0, out[-2000:]
        got[tool] = _items_in_rate(out)
    tried = 2 * PER_RANK
    for tool, items in got.items():
        assert abs(items - tried) < 0.15 * tried, (tool, got)
