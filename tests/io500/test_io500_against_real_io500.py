"""``iolab io500`` against the real IO500 (IO500/io500 built in a scratch folder, named by
IOLAB_IO500) on the same tiny ini and 2 ranks: the same scored phases in the same order, the
same line formats of the report and result_summary.txt, the same score line, the same core
result files. Skipped, with the reason, without a real io500."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from tool_helpers import mpirun_env, real_tool, run_iolab

TINY = ("[global]\ndatadir = {dir}/data\nresultdir = {dir}/res\ntimestamp-resultdir = FALSE\n\n"
        "[debug]\nstonewall-time = 1\n\n[ior-easy]\ntransferSize = 64k\nblockSize = 4m\n\n"
        "[mdtest-easy]\nn = 200\n\n[ior-hard]\nsegmentCount = 100\n\n[mdtest-hard]\nn = 200\n")
# IO500's phase line (print_result in main.c) and its score line
PHASE_LINE = re.compile(r"^\[(RESULT|      )\] +(\S+) +\d+\.\d{6} (GiB/s|kIOPS) : time "
                        r"\d+\.\d{3} seconds( \[INVALID\])?$")
SCORE_LINE = re.compile(r"^\[SCORE \] Bandwidth \d+\.\d{6} GiB/s : IOPS \d+\.\d{6} kiops : "
                        r"TOTAL \d+\.\d{6}( \[INVALID\])?$")


@pytest.fixture(scope="module")
def real_io500() -> Path:
    return real_tool("IOLAB_IO500", "IO500 (IO500/io500; IOLAB_IO500: its io500 binary)")


def phase_lines(text: str) -> list[tuple[str, str, str, bool]]:
    """(mark, phase, unit, invalid) of every phase line; any line that looks like one but
    does not match IO500's format fails."""
    out = []
    for line in text.splitlines():
        if line.startswith("[RESULT]") or line.startswith("[      ]"):
            m = PHASE_LINE.match(line)
            assert m, f"not IO500's phase line format: {line!r}"
            out.append((m[1], m[2], m[3], bool(m[4])))
    return out


@pytest.fixture(scope="module")
def both(real_io500: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each tool's run on the tiny ini in its own folder (the ini, data and results)."""
    out = {}
    for tool in ("io500", "iolab"):
        d = tmp_path_factory.mktemp(tool)
        ini = d / "config.ini"
        ini.write_text(TINY.format(dir=d))
        if tool == "io500":
            p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(real_io500),
                                str(ini)], cwd=d, env=mpirun_env(), capture_output=True,
                               text=True, timeout=600)
            code, stdout = p.returncode, p.stdout
        else:
            r = run_iolab("io500", "--np", "2", "--db", str(d / "r.db"), str(ini), cwd=d,
                          env=mpirun_env(), timeout=600)
            code, stdout = r.returncode, r.stdout
        assert code == 0, stdout[-2000:]
        (d / "stdout.txt").write_text(stdout)
        out[tool] = d
    return out


def test_scored_phases_and_their_lines_are_io500s(both: dict[str, Path]) -> None:
    """expected the same [RESULT] phases, order, units and [INVALID] marks as IO500 in the
    report and in result_summary.txt, and IO500's score line."""
    for name in ("stdout.txt", "res/result_summary.txt"):
        theirs = [p for p in phase_lines((both["io500"] / name).read_text()) if p[0] == "RESULT"]
        ours = [p for p in phase_lines((both["iolab"] / name).read_text()) if p[0] == "RESULT"]
        assert ours == theirs, name
        for tool in both:
            scores = [ln for ln in (both[tool] / name).read_text().splitlines()
                      if ln.startswith("[SCORE ]")]
            assert len(scores) == 1 and SCORE_LINE.match(scores[0]), (tool, name, scores)


def test_core_result_files_are_io500s(both: dict[str, Path]) -> None:
    """expected result.txt, result_summary.txt, config-orig.ini, config.ini and timestampfile
    in the resultdir, as IO500 writes them."""
    core = {"result.txt", "result_summary.txt", "config-orig.ini", "config.ini",
            "timestampfile"}
    for tool in both:
        assert core <= {p.name for p in (both[tool] / "res").iterdir()}, tool


def test_unscored_phases_are_io500s(both: dict[str, Path]) -> None:
    """expected IO500 02091cf's unscored phases in standard mode (ior-rnd4K-easy-read last,
    '[      ]') / was missing (iolab ran it only with --mode extended)."""
    theirs = [p[1] for p in phase_lines((both["io500"] / "stdout.txt").read_text())]
    ours = [p[1] for p in phase_lines((both["iolab"] / "stdout.txt").read_text())]
    assert ours == theirs


def test_per_phase_files_are_io500s(both: dict[str, Path]) -> None:
    """expected every file IO500 leaves in its result folder (<phase>.txt, <phase>.csv,
    find.csv), with the same CSV columns and the tool's report in each .txt / was only the
    core files (the per-phase outputs were in the database alone)."""
    theirs = {p.name for p in (both["io500"] / "res").iterdir()}
    ours = {p.name for p in (both["iolab"] / "res").iterdir()}
    assert theirs <= ours
    res = {tool: both[tool] / "res" for tool in both}
    for name in sorted(n for n in theirs if n.endswith(".csv") and n != "find.csv"):
        heads = {tool: (res[tool] / name).read_text().splitlines() for tool in res}
        assert heads["iolab"][0] == heads["io500"][0], name  # the same columns
        assert len(heads["iolab"]) == len(heads["io500"]), name  # a row per rank (and all)
    for name in sorted(n for n in theirs if n.endswith(".txt") and n[:3] in ("ior", "mdt")):
        text = (res["iolab"] / name).read_text()
        if name.startswith("ior"):
            assert text.startswith("IOR-") and "\nCommand line        : ./ior " in text, name
            assert "\nResults: \n" in text, name
        else:
            assert "Command line used: ./mdtest " in text, name
            assert "SUMMARY rate" in text and "SUMMARY time" in text, name
    assert (res["iolab"] / "find.csv").read_text().startswith("runtime: ")
