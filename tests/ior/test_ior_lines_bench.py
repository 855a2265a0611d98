"""bench/ior_lines_vs_ior.py reads what real IOR / mdtest and iolab ior / mdtest print (their
text summary tables, IOR's JSON summary) into the same phases, and runs the lines it says
(IOR's test-script lines and tests/ior's list). Real IOR and mdtest are run once each when
IOLAB_IOR / IOLAB_MDTEST name them (skipped with the reason otherwise)."""

from __future__ import annotations

import importlib
import math
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from ior_helpers import mpirun_env, run_iolab
from test_ior_against_real_ior import LINES
from tool_helpers import real_tool

BENCH = Path(__file__).resolve().parents[2] / "bench"
WORDS = ["-a", "POSIX", "-w", "-r", "-t", "64k", "-b", "128k", "-s", "2"]


def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("ior_lines_vs_ior")
    finally:
        sys.path.remove(str(BENCH))


def real_run(tool: Path, words: list[str], cwd: Path) -> str:
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(tool), *words], cwd=cwd,
                       env=mpirun_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_reads_real_and_iolab_iors_summary_as_the_same_phases(engine: Path,
                                                              tmp_path: Path) -> None:
    """expected write and read MiB/s from real IOR's text table, its JSON summary file and
    iolab ior's table alike / was no reader of either (the benchmark did not exist)."""
    ior = real_tool("IOLAB_IOR", "IOR (hpc/ior; IOLAB_IOR: its src/ior)")
    b = bench()
    text = b.ior_phases(real_run(ior, [*WORDS, "-o", str(tmp_path / "a")], tmp_path),
                        tmp_path)
    out = real_run(ior, [*WORDS, "-O", "summaryFormat=JSON", "-O", "summaryFile=s.json",
                         "-o", str(tmp_path / "b")], tmp_path)
    from_json = b.ior_phases(out, tmp_path)
    ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), *WORDS, "-o",
                    str(tmp_path / "c"))
    assert ran.returncode == 0, ran.stderr
    ours = b.ior_phases(ran.stdout, tmp_path / "none")
    assert list(text) == list(from_json) == list(ours) == ["write", "read"]
    assert all(v > 0 for v in [*text.values(), *from_json.values(), *ours.values()])


def test_reads_real_and_iolab_mdtests_summary_as_the_same_phases(engine: Path,
                                                                 tmp_path: Path) -> None:
    """expected the same mdtest operations with a positive rate from both tools' SUMMARY rate
    table / was no reader (the benchmark did not exist)."""
    mdtest = real_tool("IOLAB_MDTEST", "mdtest (hpc/ior; IOLAB_MDTEST: its src/mdtest)")
    b = bench()
    words = ["-F", "-n", "20"]
    theirs = b.mdtest_phases(real_run(mdtest, [*words, "-d", str(tmp_path / "a")], tmp_path))
    ran = run_iolab("mdtest", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-d",
                    str(tmp_path / "b"))
    assert ran.returncode == 0, ran.stderr
    ours = b.mdtest_phases(ran.stdout)
    assert "File creation" in theirs and list(ours) == list(theirs)
    assert all(v > 0 for v in [*theirs.values(), *ours.values()])


def test_lines_are_iors_scripts_and_tests_iors_list() -> None:
    """expected every IOR and MDTEST line of IOR's two test scripts with its rank count and
    environment, and tests/ior's LINES unchanged / was no such list."""
    b = bench()
    lines = b.all_lines()
    assert [list(ln.words) for ln in lines if ln.source == "tests/ior"] == LINES
    fake = next(ln for ln in lines if ln.env)
    assert fake.env == (("IOR_FAKE_TASK_PER_NODES", "1"),) and fake.ranks == 2
    assert fake.words == ("-a", "POSIX", "-f", "$ROOT/bug-multi-node.conf")
    scripts = [ln for ln in lines if ln.source.endswith(".sh")]
    assert len(scripts) == 29 and {ln.ranks for ln in scripts} == {1, 2, 3}
    assert sum(ln.tool == "mdtest" for ln in scripts) == 8


def zero_time_summary(text: str) -> str:
    """Real IOR's JSON with its write summary rewritten as IOR prints a phase timed 0 s
    (ior-output.c PrintKeyValDouble: an infinite value "%.4f" in quotes, a NaN bare as printf
    writes it): what a DUMMY line (-a DUMMY -t 1m -b 1m) leaves in about one run of three."""
    head, _, tail = text.partition('"summary"')
    for key in ("bwMaxMIB", "bwMinMIB", "bwMeanMIB", "OPsMax", "OPsMin", "OPsMean"):
        tail = re.sub(rf'("{key}": )[0-9.]+', r'\1"inf"', tail, count=1)
    for key in ("bwStdMIB", "OPsSD"):
        tail = re.sub(rf'("{key}": )[0-9.]+', r"\1-nan", tail, count=1)
    return head + '"summary"' + tail


def test_reads_iors_json_summary_with_a_phase_timed_zero(engine: Path, tmp_path: Path) -> None:
    """expected the JSON line of IOR's basic-tests.sh (-a DUMMY ... -O summaryFormat=JSON -O
    summaryFile=OUT.json) read as write and read phases, also when IOR timed a phase 0 s and
    wrote inf/-nan, that phase then left out of the round with the reason said / was "IOR/
    mdtest exit 0: no summary table" (IOR's bare -nan is not JSON: the whole file unread)."""
    ior = real_tool("IOLAB_IOR", "IOR (hpc/ior; IOLAB_IOR: its src/ior)")
    b = bench()
    line = next(ln for ln in b.all_lines() if "summaryFormat=JSON" in ln.words)
    words = list(line.words)
    for _ in range(10):  # a run IOR timed whole: the write's 0 s is then made, the read kept
        real_run(ior, [*words, "-o", str(tmp_path / "ior")], tmp_path)
        text = (tmp_path / "OUT.json").read_text()
        if "inf" not in text and "nan" not in text:
            break
    else:
        pytest.skip("real IOR timed a DUMMY phase 0 s in 10 runs of 10: no whole summary")
    zero = zero_time_summary(text)
    assert "-nan" in zero and zero != text
    (tmp_path / "OUT.json").write_text(zero)
    got = b.ior_phases("", tmp_path)
    assert list(got) == ["write", "read"]
    assert math.isinf(got["write"]) and math.isfinite(got["read"]) and got["read"] > 0
    (tmp_path / "ours_cwd").mkdir()
    ran = run_iolab("ior", "--np", "2", "--db", str(tmp_path / "r.db"), *words, "-o",
                    str(tmp_path / "ours"), cwd=tmp_path / "ours_cwd")
    assert ran.returncode == 0, ran.stderr
    ours = b.ior_phases(ran.stdout, tmp_path / "ours_cwd")
    assert list(ours) == ["write", "read"] and all(math.isfinite(v) for v in ours.values())
