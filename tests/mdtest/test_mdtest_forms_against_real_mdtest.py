"""Lines of IOR's own test scripts (testing/basic-tests.sh, complex-tests.sh) that iolab
refused before, run by ``iolab mdtest`` and by a real mdtest (IOLAB_MDTEST) under strace on
the same ranks: no -n (only the tree's calls), phase subsets (-C -T -r ... in one run), the
-f/-l series of task counts, and -W with the -x status file carried from line to line. Each
compares the calls below the -d folder (per rank, or for forms whose ranks make no item, all
ranks' calls counted by call and name), the SUMMARY rows and what is left in the folder.
Skipped, with the reason, without a real mdtest."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest
from mdtest_helpers import mpirun_env, run_iolab
from mdtest_trace import _calls_of, calls_by_rank, traced

TOUCHED = ("create", "stat", "open", "unlink", "mkdir", "rmdir")


def all_calls(trace_dir: Path, folder: str) -> Counter[tuple[str, ...]]:
    """Every traced process's calls below ``folder``, counted (ranks that make no item and
    the one launch per task count of iolab's series are compared as a whole)."""
    out: Counter[tuple[str, ...]] = Counter()
    for f in trace_dir.iterdir():
        out.update(_calls_of(f, folder))
    return out


def table_rows(report: str) -> list[str]:
    """Every SUMMARY row's operation and every 'N tasks' line, in order (a series prints
    one table per task count)."""
    out = []
    for ln in report.splitlines():
        if " tasks, " in ln:
            out.append(ln)
        elif ln.startswith("   ") and ln.split()[0] in ("Directory", "File", "Tree"):
            out.append(" ".join(ln.split()[:2]))
    return out


def left(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) \
        if folder.exists() else []


def both(tmp_path: Path, real_mdtest: Path, engine: Path, np: int, words: list[str],
         k: int = 0) -> tuple[tuple[Path, str, Path], tuple[Path, str, Path]]:
    """The line by mdtest then by iolab, each on its own -d folder (kept across calls with
    the same tmp_path): (trace folder, report, -d folder) of each. ``{status}`` in a word
    becomes each tool's own -x file."""
    res = []
    for tool in ("mdtest", "iolab"):
        folder = tmp_path / f"{tool}-out"
        line = [w.replace("{status}", str(tmp_path / f"{tool}-sw.log")) for w in words]
        wrap, trace = traced(tmp_path, real_mdtest if tool == "mdtest" else engine,
                             f"{tool}-{k}")
        if tool == "mdtest":
            p = subprocess.run(["mpirun", "--oversubscribe", "-np", str(np), str(wrap), *line,
                                "-d", str(folder)], cwd=tmp_path, env=mpirun_env(),
                               capture_output=True, text=True, timeout=300)
            assert p.returncode == 0, p.stdout + p.stderr
            report = p.stdout
        else:
            out = run_iolab("mdtest", "--np", str(np), "--db", str(tmp_path / "r.db"), *line,
                            "-d", str(folder), env={"IOLAB_BENCH": str(wrap)})
            assert out.returncode == 0, (line, out.stderr)
            report = out.stdout
        res.append((trace, report, folder))
    return res[0], res[1]


@pytest.mark.parametrize("np,words", [
    (1, ["-a", "POSIX"]),
    (2, ["-a", "POSIX", "-W", "2"]),
], ids=["mdtest -np 1 -a POSIX", "mdtest -np 2 -a POSIX -W 2"])
def test_no_items_runs_mdtests_tree_phases(real_mdtest: Path, engine: Path, tmp_path: Path,
                                           np: int, words: list[str]) -> None:
    """expected a line without -n or -I to make only the tree's calls and print every row
    (the item rows 0) as mdtest / was refused ('no items to create', exit 2)."""
    (tc, theirs, tdir), (oc, ours, odir) = both(tmp_path, real_mdtest, engine, np, words)
    assert all_calls(oc, str(odir)) == all_calls(tc, str(tdir))
    assert sum(all_calls(tc, str(tdir)).values()) > 0  # the tree's mkdir and rmdir
    assert table_rows(ours) == table_rows(theirs)
    assert left(odir) == left(tdir) == []


@pytest.mark.parametrize("words", [
    ["-C", "-T", "-r", "-F", "-I", "1", "-z", "1", "-b", "1", "-L", "-u"],
    ["-C", "-T", "-I", "1", "-z", "1", "-b", "1", "-u"],
], ids=" ".join)
def test_phase_subsets_run_as_mdtests_in_one_run(real_mdtest: Path, engine: Path,
                                                 tmp_path: Path, words: list[str]) -> None:
    """expected -C -T -r (and -C -T with directories) to run those phases in one run, call
    for call as mdtest, leaving what mdtest leaves / was refused ('the engine runs one phase
    alone or all four together')."""
    (tc, theirs, tdir), (oc, ours, odir) = both(tmp_path, real_mdtest, engine, 1, words)
    assert calls_by_rank(oc, str(odir)) == calls_by_rank(tc, str(tdir))
    assert calls_by_rank(tc, str(tdir))[0]
    assert table_rows(ours) == table_rows(theirs)
    assert left(odir) == left(tdir)


def test_task_count_series_runs_one_test_per_count(real_mdtest: Path, engine: Path,
                                                   tmp_path: Path) -> None:
    """expected mdtest -f 1 -l 2 on 2 ranks to run a test on rank 0 then on ranks 0 and 1,
    the same calls and a table per count / was refused ('the engine runs one test on the
    launched ranks')."""
    words = ["-n", "1", "-f", "1", "-l", "2"]
    (tc, theirs, tdir), (oc, ours, odir) = both(tmp_path, real_mdtest, engine, 2, words)
    calls = all_calls(tc, str(tdir))
    assert all_calls(oc, str(odir)) == calls
    assert calls[("mkdir", "/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0")] == 2  # both tests
    assert calls[("mkdir", "/test-dir.0-0/mdtest_tree.0/dir.mdtest.1.0")] == 1  # the second
    assert table_rows(ours) == table_rows(theirs)
    assert [r for r in table_rows(ours) if "tasks" in r] == ["1 tasks, 1 files/directories",
                                                             "2 tasks, 2 files/directories"]
    assert left(odir) == left(tdir) == []


def test_stonewall_status_file_lines_of_iors_scripts(real_mdtest: Path, engine: Path,
                                                    tmp_path: Path) -> None:
    """expected complex-tests.sh's '-I 20 -W 1 -x FILE -C', then '-T -v' (with POSIX), to
    write and read the -x count and make mdtest's calls, and '-D -v' on a fresh folder to run
    the directory phases / was refused ('-W with -T', '-C without -F')."""
    base = ["-I", "20", "-a", "POSIX", "-W", "1", "-x", "{status}"]
    for k, letters in enumerate((["-C"], ["-T", "-v"])):
        (tc, theirs, tdir), (oc, ours, odir) = both(tmp_path, real_mdtest, engine, 2,
                                                    [*base, *letters], k)
        assert calls_by_rank(oc, str(odir), made=TOUCHED) == \
            calls_by_rank(tc, str(tdir), made=TOUCHED), letters
        assert table_rows(ours) == table_rows(theirs)
        assert left(odir) == left(tdir)
        assert (tmp_path / "iolab-sw.log").read_text().split() == \
            (tmp_path / "mdtest-sw.log").read_text().split() == ["20"]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (tc, theirs, tdir), (oc, ours, odir) = both(fresh, real_mdtest, engine, 2,
                                                [*base, "-D", "-v"], 2)
    assert calls_by_rank(oc, str(odir)) == calls_by_rank(tc, str(tdir))
    assert table_rows(ours) == table_rows(theirs)
    assert left(odir) == left(tdir) == []
