"""CLI tests: the repository's own small Darshan log and a real profile made here."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # cli_helpers
from cli_helpers import OWN_LOG, iolab  # noqa: E402


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    """Two Darshan logs, A.darshan and B.darshan, in tmp_path."""
    pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
    a, b = tmp_path / "A.darshan", tmp_path / "B.darshan"
    shutil.copy(OWN_LOG, a)
    shutil.copy(OWN_LOG, b)
    return a, b


@pytest.fixture(scope="session")
def profile_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real iolab profile: a shell writing a file under the tracer."""
    from iolab import paths
    from iolab.errors import UsageError

    try:
        paths.interposer_library("trace")
    except UsageError as exc:
        pytest.skip(str(exc))
    d = tmp_path_factory.mktemp("prof")
    r = iolab("profile", "-q", "-o", str(d), "--name", "P", "--", "sh", "-c",
              "echo hello > out.txt; cat out.txt >/dev/null", cwd=d)
    assert r.returncode == 0, r.stderr
    return d / "P.iolab"


@pytest.fixture(scope="session")
def stored_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results database made by real commands on the null backend: run 1 (bench), sweep 1
    (two points, runs 2-3) and tune 1 (trials stored as runs)."""
    from iolab.paths import engine_binary

    engine_binary("default")  # raises (test error) when ./setup did not build it
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not on PATH (./setup installs Open MPI)")
    d = tmp_path_factory.mktemp("stored")
    db = str(d / "r.db")
    for argv in (["bench", "-q", "--api", "null", "--np", "2", "--reps", "1", "--transfer",
                  "1k", "--block", "4k", "--db", db],
                 ["sweep", "-q", "--db", db, "--param", "transfer=1k,2k", "--reps", "1", "--",
                  "--api", "null", "--np", "2", "--block", "4k"],
                 ["tune", "-q", "--db", db, "--knob", "transfer=1k,2k", "--trials", "2",
                  "--confirm", "2", "--", "iolab", "bench", "-a", "null", "--np", "2", "-t",
                  "1k", "-b", "4k", "-w"]):
        r = iolab(*argv, cwd=d)
        assert r.returncode == 0, (argv, r.stderr)
    return d / "r.db"
