"""CLI tests: the repository's own small Darshan log and a real profile made here."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OWN_LOG = REPO / "tests" / "profile" / "darshan" / "stdio_darshan.darshan"  # in the repo


def iolab(*args: str, cwd: Path | None = None, stdin: str | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iolab", *args], capture_output=True,
                          text=True, cwd=cwd, input=stdin, env=env, timeout=300)


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
