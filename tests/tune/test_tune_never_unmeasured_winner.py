"""A tune never reports a winner it did not measure (issue 32): a metric that never matched
is "inconclusive" with the program's closest output line, not "winner: the defaults" and
"what mattered: ... 100%"; a value equal to the library's own default is no change of the
winner; the ROMIO switch in the environment or on the command line makes a command tune
tune ROMIO, not OMPIO.

Real MPI programs (tests/tune/progs/hinted.c prints "bandwidth: N", N its effective
cb_buffer_size in MiB, read back from ROMIO) under mpirun.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
OPENMPI = ["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root", "-np", "2"]


def tune(*args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", "tune", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def _build(tmp: pytest.TempPathFactory, mpi: str) -> Path:
    if shutil.which(f"mpicc.{mpi}") is None or shutil.which(f"mpirun.{mpi}") is None:
        pytest.skip(f"{mpi} is not installed (./setup installs it)")
    exe = tmp.mktemp(mpi) / "hinted"
    subprocess.run([f"mpicc.{mpi}", "-O1", "-o", str(exe), str(HERE / "progs" / "hinted.c")],
                   check=True)
    return exe


@pytest.fixture(scope="module")
def hinted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory, "mpich")


@pytest.fixture(scope="module")
def hinted_openmpi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory, "openmpi")


def test_a_metric_never_found_is_inconclusive_with_the_closest_line(tmp_path: Path,
                                                                   hinted: Path) -> None:
    """expected: "inconclusive: the metric was never found", the regex and the program's
    line "bandwidth: 16", exit 1, no winner / was: "failed", "the baseline failed ...; fix
    the workload first" (the workload was fine: the regex asked for GB/s)."""
    out = tune("--db", str(tmp_path / "r.db"), "--knob", "cb_buffer_size=4m,32m",
               "--metric", r"bandwidth: ([\d.]+) GB/s", "--trials", "3", "--confirm", "0",
               "--", "mpirun.mpich", "-np", "2", str(hinted), str(tmp_path / "o.dat"),
               cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    head, says = out.stdout.splitlines()[:2]
    assert head.startswith("Tune 1: inconclusive"), out.stdout
    assert says.strip().startswith("inconclusive: the metric was never found"), out.stdout
    assert r"--metric 'bandwidth: ([\d.]+) GB/s'" in says  # as the user typed it
    assert "closest line: 'bandwidth: 16" in says
    assert "winner" not in out.stdout and "what mattered" not in out.stdout


def test_every_other_trial_failing_is_inconclusive_not_the_defaults(tmp_path: Path,
                                                                    hinted: Path) -> None:
    """expected: only the defaults printed a score the regex took (it matches 16 only, the
    default buffer), so no winner and no importances, exit 1 / was: "winner: the defaults",
    "what mattered: cb_buffer_size 100%", exit 0: a verdict read from one configuration."""
    out = tune("--db", str(tmp_path / "r.db"), "--knob", "cb_buffer_size=4m,64m",
               "--metric", r"bandwidth: (16)\b", "--maximize", "--trials", "4",
               "--confirm", "0", "--json", "--", "mpirun.mpich", "-np", "2", str(hinted),
               str(tmp_path / "o.dat"), cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert doc["status"] == "failed" and doc["winner"] == {} and doc["importances"] == {}
    assert doc["error"].startswith("inconclusive: the metric was never found in a run of "
                                   "other settings"), doc["error"]
    assert "closest line: 'bandwidth: " in doc["error"]
    assert doc["baseline_score"] == 16.0
    assert sum(t["status"] == "ok" for t in doc["trials"]) >= 1  # the defaults did run


def test_a_value_equal_to_the_library_default_is_not_a_change(tmp_path: Path,
                                                              hinted: Path) -> None:
    """expected: the winner sets cb_buffer_size only; romio_cb_write=automatic (ROMIO's own
    default) is left out with a note / was: listed as a change of the winner whenever the
    search's best happened to carry it (it ties with the same configuration without it)."""
    out = tune("--db", str(tmp_path / "r.db"), "--knob", "cb_buffer_size=32m",
               "--knob", "romio_cb_write=automatic", "--knob", "romio_ds_write=automatic",
               "--metric", r"bandwidth: ([\d.]+)", "--maximize", "--trials", "8",
               "--confirm", "0", "--json", "--", "mpirun.mpich", "-np", "2", str(hinted),
               str(tmp_path / "o.dat"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["winner"] == {"cb_buffer_size": str(32 << 20)}, doc
    assert doc["winner_score"] == 32.0
    for name in ("romio_cb_write", "romio_ds_write"):
        assert name not in doc["winner"]
    # the search's best carried at least one of them at its default value: left out, said
    best = max((t for t in doc["trials"] if t["status"] == "ok"),
               key=lambda t: (t["value"], len(t["params"])))
    carried = {k for k, v in best["params"].items() if v == "automatic"}
    assert carried == set(doc["left_out"]), (best, doc["left_out"])
    assert all("library's own default" in why for why in doc["left_out"].values())


@pytest.mark.parametrize("how", ["environment", "mca_option", "mpirun_x"])
def test_ompio_switched_off_by_env_or_option_is_honoured(tmp_path: Path,
                                                          hinted_openmpi: Path,
                                                          how: str) -> None:
    """expected: Open MPI switched to ROMIO (OMPI_MCA_io=^ompio in the environment, as
    diagnose's .env files export it; --mca io ^ompio; -x OMPI_MCA_io=romio321) is tuned as
    ROMIO: a ROMIO hint is tuned, OMPIO knobs are refused before anything runs /
    was: only the word "romio" on the command line counted, so the environment's switch
    and "^ompio" were missed and ROMIO hints refused as "OMPIO ignores ROMIO hints"."""
    env: dict[str, str] = {}
    launcher = list(OPENMPI)
    if how == "environment":
        env["OMPI_MCA_io"] = "^ompio"
    elif how == "mca_option":
        launcher[1:1] = ["--mca", "io", "^ompio"]
    else:
        launcher[1:1] = ["-x", "OMPI_MCA_io=romio321"]
    cmd = [*launcher, str(hinted_openmpi), str(tmp_path / "o.dat")]
    # scored by wall time: Open MPI's romio321 does not report cb_buffer_size back
    out = tune("--db", str(tmp_path / "r.db"), "--knob", "cb_buffer_size=32m",
               "--trials", "3", "--confirm", "0", "--json", "--", *cmd, cwd=tmp_path,
               env=env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["implementation"] == "romio" and doc["space"] == {
        "cb_buffer_size": [str(32 << 20)]}
    assert all(t["status"] == "ok" for t in doc["trials"])
    refused = tune("--db", str(tmp_path / "r2.db"), "--knob", "ompio.num_aggregators=1,2",
                   "--trials", "3", "--", *cmd, cwd=tmp_path, env=env)
    assert refused.returncode == 2, refused.stderr
    assert "--knob ompio.num_aggregators: the workload runs ROMIO, not OMPIO" in refused.stderr
    assert not (tmp_path / "r2.db").exists() or "Traceback" not in refused.stderr


def test_other_settings_that_crash_keep_the_defaults_without_importances(
        tmp_path: Path) -> None:
    """expected: a command that fails whenever a hints file is given (its settings are worse
    than the defaults: they crash it) keeps the defaults, says why, and gives no "what
    mattered" / was: "what mattered: cb_nodes 50%, romio_cb_write 50%" read from the
    defaults' runs alone."""
    out = tune("--db", str(tmp_path / "r.db"), "--knob", "cb_nodes=1,2",
               "--knob", "romio_cb_write=enable,disable", "--trials", "4", "--confirm", "0",
               "--json", "--", "sh", "-c", '[ -z "$ROMIO_HINTS" ] || exit 3', cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["status"] == "done" and doc["winner"] == {} and doc["importances"] == {}
    assert any(n.startswith("every other configuration failed") and "exit code 3" in n
               for n in doc["notes"]), doc["notes"]
