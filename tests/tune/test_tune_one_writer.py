"""One writer of fix files for diagnose and tune: the tune winner's files are renderings of
its settings as data (SettingChange / CodeChange, the shape of diagnose's fix.settings and
fix.code_changes), through the writers diagnose's fix files use (iolab.settings.apply), and
``tune --json`` carries that data."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_tune_edges_input import cray_split

from iolab.diagnose import fixes
from iolab.model.job import build_model
from iolab.settings.apply import romio_switch_line
from iolab.sources import load_source
from iolab.tune.artifacts import winner_changes, write_artifacts

HERE = Path(__file__).parent
D35 = HERE.parent / "diagnose" / "darshan35"
NULL_WORKLOAD = ["--", "iolab", "bench", "-a", "null", "--null.delay-us", "300", "-t", "64k",
                 "-b", "4m", "--np", "2", "-w"]


def tune(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", "tune", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def _plain(text: str) -> list[str]:
    """The lines that set something (comments and blank lines out)."""
    return [x for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]


def _key(s: dict[str, object]) -> tuple[object, object, object]:
    return s["setting"], s["value"], s["library"]


def test_real_tune_winner_files_are_what_diagnose_writes_for_the_same_settings(
        tmp_path: Path, hinted: Path) -> None:
    """expected: a real tune's winner (cb_buffer_size 32 MiB, read back by an MPICH program)
    carried as settings in --json, its hints file and MPICH_MPIIO_HINTS line the ones
    diagnose's writer makes for the same SettingChanges / was: tune's own writer, and its
    JSON listed knobs only."""
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    out = tune("--db", str(tmp_path / "r.db"), "--knob", "cb_buffer_size=1m,4m,32m",
               "--metric", r"bandwidth:\s*([\d.]+)", "--trials", "4", "--confirm", "4",
               "--time-limit", "60", "--json", "-o", str(tmp_path / "fix"), "--",
               "mpirun.mpich", "-np", "2", str(hinted), str(tmp_path / "out.dat"),
               cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["winner"] == {"cb_buffer_size": str(32 << 20)}  # knobs: kept as they were
    tuned = {_key(s) for s in doc["settings"]}
    assert tuned == {("cb_buffer_size", str(32 << 20), "romio"),
                     ("cb_buffer_size", str(32 << 20), "cray")}
    assert all(s["knob"] == "cb_buffer_size" for s in doc["settings"])
    assert doc["code_changes"] == []

    model = build_model([load_source(D35 / "blocks2nodes-mpich.darshan")])
    arts = {a.kind: a for a in fixes.romio_hints(model, {"cb_buffer_size": str(32 << 20)})}
    diagnosed = {(s.name, s.value, s.library) for k in ("romio-hints", "mpich-hints")
                 for s in arts[k].settings}
    assert diagnosed == tuned
    fix = tmp_path / "fix"
    assert _plain((fix / "romio-hints").read_text()) == _plain(arts["romio-hints"].content)
    env = (fix / "env.sh").read_text()
    cray = [x for x in _plain(arts["mpich-hints"].content) if "MPICH_MPIIO_HINTS=" in x]
    assert cray and cray[0] in env.splitlines()
    value = shlex.split(cray[0].split("=", 1)[1])[0]
    assert cray_split(value) == {"*": {"cb_buffer_size": str(32 << 20)}}
    # MPICH ran: no switch to ROMIO, not even commented
    assert "OMPI_MCA_io" not in env and f"{fix.resolve()}/romio-hints" in env


def test_real_null_tune_json_carries_the_code_change(tmp_path: Path) -> None:
    """expected: --json's code_changes holds the winner's transfer size as diagnose's
    CodeChange shape (layer, knob, value), code-changes.txt its rendering / was: no data."""
    from iolab.paths import engine_binary

    engine_binary("default")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    out = tune("--db", str(tmp_path / "r.db"), "--knob", "transfer=64k,1m", "--trials", "3",
               "--confirm", "4", "--json", "-o", str(tmp_path / "fix"), *NULL_WORKLOAD,
               cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["winner"] == {"transfer": "1048576"} and doc["settings"] == []
    (change,) = doc["code_changes"]
    assert (change["layer"], change["knob"], change["value"]) == ("posix", "transfer",
                                                                  "1048576")
    assert set(change) >= {"change", "calls", "direction", "experiment", "snippet"}
    text = (tmp_path / "fix" / "code-changes.txt").read_text()
    assert text == f"- {change['change']}\n"


def test_cray_rule_and_ompio_switch_in_the_hints_env(tmp_path: Path) -> None:
    """expected: under OMPIO the switch to ROMIO is in env.sh before ROMIO_HINTS, and is a
    setting of the data; cb_config_list *:2 left out of MPICH_MPIIO_HINTS (its ':') and
    the line parsed as Cray MPICH does / was: no switch (OMPIO ignored the hints file)."""
    winner = {"cb_config_list": "*:2", "cb_buffer_size": "16777216",
              "romio_cb_write": "enable"}
    write_artifacts(winner, tmp_path, implementation="ompio")
    lines = (tmp_path / "env.sh").read_text().splitlines()
    switch = lines.index(romio_switch_line())
    assert switch < next(i for i, x in enumerate(lines) if x.startswith("export ROMIO_HINTS="))
    line = next(x for x in lines if x.startswith("export MPICH_MPIIO_HINTS="))
    assert cray_split(shlex.split(line.split("=", 1)[1])[0]) == {
        "*": {"cb_buffer_size": "16777216", "romio_cb_write": "enable"}}
    data = winner_changes(winner, "ompio")
    assert ("io", "^ompio", "ompio") in {(s.name, s.value, s.library) for s in data.settings}
    assert "cb_config_list *:2" in (tmp_path / "romio-hints").read_text()


def test_lfs_line_is_diagnoses_lfs_writer(tmp_path: Path) -> None:
    """expected: lfs.sh's setstripe as diagnose's lfs lines write it (-S 1M), the layout as
    settings / was: -S 1048576 from tune's own builder."""
    winner = {"lfs.stripe_count": "4", "lfs.stripe_size": "1048576"}
    write_artifacts(winner, tmp_path, output_dir="/scratch/out dir")
    assert _plain((tmp_path / "lfs.sh").read_text()) == [
        "lfs setstripe -c 4 -S 1M '/scratch/out dir'"]
    assert {(s.name, s.library, s.file) for s in winner_changes(winner).settings} == {
        ("lfs.stripe_count", "lfs", "lfs.sh"), ("lfs.stripe_size", "lfs", "lfs.sh")}
