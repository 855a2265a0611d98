"""``iolab io500``: IO500's ini file refused line by line, the phases iolab lacks refused up
front, and a real small run on 2 ranks whose score is the geometric means of the phase
numbers it printed (IO500's calc_score)."""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest
from tool_helpers import run_iolab

from iolab.errors import UsageError
from iolab.io500 import config, output, phases
from iolab.io500.cli import QUICK_INI
from iolab.paths import engine_binary

STANDARD = [p.name for p in phases.PHASES if not p.optional]


def _ini(tmp: Path, extra: str = "", datadir: bool = True) -> Path:
    text = "[global]\n" + (f"datadir = {tmp}/data\n" if datadir else "")
    text += (f"resultdir = {tmp}/res\ntimestamp-resultdir = FALSE\n\n[debug]\n"
             "stonewall-time = 1\n\n[ior-easy]\ntransferSize = 64k\nblockSize = 64m\n\n"
             "[mdtest-easy]\nn = 2000\n\n[ior-hard]\nsegmentCount = 2000\n\n"
             "[mdtest-hard]\nn = 2000\n" + extra)
    path = tmp / "config.ini"
    path.write_text(text)
    return path


BAD_INI = [
    ("unknown-section", "[no-such-phase]\nrun = FALSE\n", "unknown section [no-such-phase]"),
    ("unknown-key", "[ior-easy]\nstripes = 4\n", 'unknown option "stripes" in [ior-easy]'),
    ("bad-bool", "[ior-easy]\nfilePerProc = maybe\n", "expects true or false"),
    ("bad-int", "[ior-hard]\nsegmentCount = lots\n", "expects an integer"),
    ("garbage", "this is not ini\n", "unexpected content"),
]


@pytest.mark.parametrize("extra,said", [b[1:] for b in BAD_INI], ids=[b[0] for b in BAD_INI])
def test_bad_ini_is_one_line_exit_2_nothing_created(tmp_path: Path, extra: str,
                                                    said: str) -> None:
    ini = _ini(tmp_path, extra)
    r = run_iolab("io500", str(ini), cwd=tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("iolab io500: ") and said in lines[0] and " line " in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.ini"]


@pytest.mark.parametrize("debug,expected", [("", 5), ("[debug]\nstonewall-time = 2\n", 2)])
def test_quick_caps_the_stonewall_and_creates_nothing_on_a_dry_run(tmp_path: Path, debug: str,
                                                                   expected: int) -> None:
    """expected --quick to hold every stonewalled phase to at most 5 s (the ini's shorter
    one kept) / was no --quick: IO500's 300 s unless the ini's [debug] said less."""
    ini = tmp_path / "c.ini"
    ini.write_text(f"[global]\ndatadir = {tmp_path}/data\nresultdir = {tmp_path}/res\n"
                   + debug)
    r = run_iolab("io500", "--quick", "--np", "2", "--dry-run", str(ini), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    walls = re.findall(r"--stonewall (\d+)", r.stdout)
    assert walls and set(walls) == {str(expected)}, r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.ini"]


def test_missing_datadir_is_one_line_exit_2(tmp_path: Path) -> None:
    """expected a refusal naming datadir / was IO500's fallback to ./datafiles."""
    ini = _ini(tmp_path, datadir=False)
    r = run_iolab("io500", str(ini), cwd=tmp_path)
    assert r.returncode == 2 and "[global] datadir is not set" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.ini"]


def test_a_phase_iolab_lacks_is_refused_up_front(tmp_path: Path) -> None:
    r = run_iolab("io500", "--mode", "extended", str(_ini(tmp_path)), cwd=tmp_path)
    assert r.returncode == 2 and "phase mdworkbench-create" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.ini"]


def test_the_ini_reads_as_io500_reads_it(tmp_path: Path) -> None:
    cfg = config.parse_text("[GLOBAL]\n datadir = /x   # comment\napi = \n"
                            "[ior-easy]\nfileperproc = 0\n", "t.ini")
    assert cfg.get("global", "datadir") == "/x"
    assert cfg.get("global", "api") == "POSIX"  # an empty value keeps the default
    assert cfg.flag("ior-easy", "filePerProc") is False
    with pytest.raises(UsageError, match="outside any"):
        config.parse_text("datadir = /x\n", "t.ini")


def test_score_is_io500s_calc_score() -> None:
    def res(name: str, score: float) -> output.PhaseResult:
        ph = next(p for p in phases.PHASES if p.name == name)
        return output.PhaseResult(ph, score, 1.0, "", "")
    got = output.group_scores([res("ior-easy-write", 2.0), res("ior-hard-write", 8.0),
                               res("mdtest-easy-write", 9.0), res("find", 1.0),
                               res("mdtest-hard-write", 0.0), res("timestamp", 0.0)])
    assert got["BW"] == pytest.approx(4.0) and got["MD"] == pytest.approx(3.0)
    assert got["TOTAL"] == pytest.approx(math.sqrt(12.0))


@pytest.fixture(scope="module")
def md_step_engine() -> Path:
    try:
        engine = engine_binary("default")
    except UsageError:
        pytest.skip("iolab-bench is not built (run ./setup)")
    table = subprocess.run([str(engine), "--list-options"], capture_output=True, text=True,
                           check=False).stdout
    if '"md-step"' not in table:
        pytest.skip(f"{engine} predates --md-step (rebuild the engine, or set IOLAB_BENCH)")
    return engine


def test_quick_run_runs_every_phase_and_scores_what_it_printed(
        tmp_path: Path, md_step_engine: Path) -> None:
    """``--quick`` on 2 ranks: every standard phase in IO500's order, the score IO500's
    calc_score of the numbers it printed, IO500's result files, said and marked not valid."""
    from tool_helpers import mpirun_env
    r = run_iolab("io500", "--quick", "--np", "2", "--json", "--timestamp", "t1", "--db",
                  str(tmp_path / "r.db"), cwd=tmp_path, env=mpirun_env(), timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1 and doc["kind"] == "io500"
    res = tmp_path / "io500-quick" / "results" / "t1"
    summary = (res / "result_summary.txt").read_text()
    assert [ln[8:].split()[0] for ln in summary.splitlines() if ln.startswith("[")][:-1] == \
        ["ior-easy-write", "mdtest-easy-write", "timestamp", *STANDARD[3:]]
    printed = {m[0]: float(m[1]) for m in
               re.findall(r"^\[RESULT\]\s+(\S+)\s+([\d.]+) (?:GiB/s|kIOPS)", summary, re.M)}
    scored = [p.name for p in phases.PHASES if not p.optional and p.group]
    assert list(printed) == scored
    assert doc["phases"][-1]["name"] == "ior-rnd4K-easy-read"  # IO500 02091cf: unscored, last
    assert re.search(r"^\[      \]  ior-rnd4K-easy-read ", summary, re.M), summary
    assert all(v > 0 for v in printed.values()), printed
    bw = math.prod(v for k, v in printed.items() if k.startswith("ior")) ** (1 / 4)
    md = math.prod(v for k, v in printed.items() if not k.startswith("ior")) ** (1 / 8)
    score = re.search(r"^\[SCORE \] Bandwidth ([\d.]+) GiB/s : IOPS ([\d.]+) kiops : "
                      r"TOTAL ([\d.]+) \[INVALID\]$", summary, re.M)
    assert score, summary
    assert float(score[1]) == pytest.approx(bw, rel=1e-5)
    assert float(score[2]) == pytest.approx(md, rel=1e-5)
    assert float(score[3]) == pytest.approx(math.sqrt(bw * md), rel=1e-5)
    # a 2 s stonewall is not IO500's 300 s: the run is marked as IO500 marks it
    result = (res / "result.txt").read_text()
    assert "; ERROR INVALID stonewall-time 2s != 300s" in result
    assert "not valid for submission" in result and "not valid for submission" in r.stderr
    assert (res / "config-orig.ini").read_text() == QUICK_INI
    # IO500's per-phase files: the tool's report and a per-rank CSV of every IOR/mdtest phase
    for name in [p["name"] for p in doc["phases"] if p["name"][:3] in ("ior", "mdt")]:
        csv_rows = (res / f"{name}.csv").read_text().splitlines()
        assert len(csv_rows) == 1 + 2 + (name.startswith("mdtest")), name  # head, ranks, all
        assert "Command line" in (res / f"{name}.txt").read_text(), name
    assert (res / "find.csv").read_text().startswith("runtime: ")
    found = int(re.search(r"^found\s+= (\d+)", result, re.M)[1])  # type: ignore[index]
    assert found > 0
    # the files are gone, as IO500's cleanup leaves them: only the datadir's base remains
    assert list((tmp_path / "io500-quick" / "datafiles").iterdir()) == []
