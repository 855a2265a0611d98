"""Adding a ROMIO hint is one catalogue row, down to the engine: with a row added (iolab's own
data, patched for the test), the engine's value check generated from the rows
(engine/src/hint_forms.def) is built into a real iolab-bench, which ``iolab bench`` and
``iolab hints`` then run: a value of the row's domain is accepted and passed to the library,
a malformed one refused before anything runs (exit 2, one line). diagnose's and tune's side
of the same row: tests/diagnose/test_settings_one_row.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from iolab.settings import c_table, catalogue

ROOT = Path(__file__).resolve().parents[2]
NEW = catalogue.Setting("romio_example_buffer", ("romio", "cray"), "bytes",
                        "an example buffer size", defaults={"romio": str(1 << 20)},
                        explore=("2M", "8M"))
pytestmark = pytest.mark.slow  # one engine build (about 20 s)


def _env(bench: Path) -> dict[str, str]:
    env = {**os.environ, "IOLAB_BENCH": str(bench),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                       os.environ.get("PYTHONPATH")]))}
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.pop("ROMIO_HINTS", None)
    env.setdefault("OMPI_MCA_btl", "self,vader")
    return env


@pytest.fixture(scope="module")
def engine_with_row(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An iolab-bench built from this tree with hint_forms.def generated from the
    catalogue plus NEW (the tree's own file is left as it is)."""
    if not (shutil.which("cmake") and shutil.which("mpicc") and shutil.which("mpirun")):
        pytest.skip("cmake, mpicc and mpirun are needed to build iolab-bench")
    src = tmp_path_factory.mktemp("engine-src")
    shutil.copy(ROOT / "CMakeLists.txt", src)
    shutil.copytree(ROOT / "engine", src / "engine", ignore=shutil.ignore_patterns("build*"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(catalogue, "SETTINGS", (*catalogue.SETTINGS, NEW))
        (src / c_table.DEF_PATH).write_text(c_table.render())
    assert f'"{NEW.name}"' in (src / c_table.DEF_PATH).read_text()
    build = src / "b"
    for cmd in (["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 "-DMPI_C_COMPILER=mpicc", "-DIOLAB_ENGINE_ONLY=ON"],
                ["cmake", "--build", str(build), "--target", "iolab-bench", "-j2"]):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    yield build / "engine" / "iolab-bench"


def _iolab(bench: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *argv], capture_output=True,
                          text=True, env=_env(bench), cwd=cwd, timeout=180)


def _bench(bench: Path, tmp: Path, hint: str) -> subprocess.CompletedProcess[str]:
    return _iolab(bench, tmp, "bench", "--db", str(tmp / "r.db"), "--np", "1", "-a", "mpiio",
                  "-t", "4K", "-b", "8K", "-o", str(tmp / "f"), "--hint", hint, "--json")


def test_bench_passes_a_new_rows_value_and_refuses_a_malformed_one(
        engine_with_row: Path, tmp_path: Path) -> None:
    """expected: with the row, --hint romio_example_buffer=4M is refused by the engine (exit
    2, one line) and =4194304 runs and is requested / was: the engine checked only the keys
    typed in hints.c, so a new hint's malformed value ran (ROMIO's atoi reads "4M" as 4)."""
    good = _bench(engine_with_row, tmp_path, f"{NEW.name}=4194304")
    assert good.returncode == 0, good.stderr
    (run,) = json.loads(good.stdout)["runs"]
    assert run["engine"]["hints"]["requested"][NEW.name] == "4194304"
    bad = _bench(engine_with_row, tmp_path, f"{NEW.name}=4M")
    assert bad.returncode == 2, bad.stderr
    said = [ln for ln in bad.stderr.splitlines() if NEW.name in ln]
    assert len(said) == 1 and "takes a whole number" in said[0], bad.stderr


def test_hints_verb_shows_a_new_row_and_refuses_a_malformed_one(
        engine_with_row: Path, tmp_path: Path) -> None:
    where = tmp_path / "dir"
    where.mkdir()
    good = _iolab(engine_with_row, tmp_path, "hints", str(where), "--json", "--hint",
                  f"{NEW.name}=4194304")
    assert good.returncode == 0, good.stderr
    rows = {r["key"]: r for r in json.loads(good.stdout)["hints"]}
    assert rows[NEW.name]["requested"] == "4194304"
    bad = _iolab(engine_with_row, tmp_path, "hints", str(where), "--hint", f"{NEW.name}=4M")
    assert bad.returncode == 2 and f"hint {NEW.name}=4M" in bad.stderr, bad.stderr
    assert list(where.iterdir()) == []


def test_without_the_row_the_engine_lets_the_value_through(tmp_path: Path) -> None:
    """The row is what makes the engine check it: an engine built from the tree's own table
    runs the malformed value (the library would read it as 4)."""
    from iolab.errors import UsageError
    from iolab.paths import engine_binary

    assert f'"{NEW.name}"' not in (ROOT / c_table.DEF_PATH).read_text()
    try:
        plain = engine_binary()
    except UsageError as exc:
        pytest.skip(str(exc))
    assert _bench(plain, tmp_path, f"{NEW.name}=4M").returncode == 0
