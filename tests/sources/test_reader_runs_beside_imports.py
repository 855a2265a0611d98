"""diagnose's forked reader runs while diagnose imports numpy, the model and the rules.

Expected: ``iolab diagnose`` forks the first log's reader before numpy is imported in its
process, and the reader reads, names and sends a log without DXT without importing numpy
(so on two cores the reader's decompression overlaps the parent's imports) / was: the
reader forked after every import (numpy, the rules: ~0.3 s of a 64,000-file log's wall
time in sequence), and read with numpy."""

from __future__ import annotations

import subprocess
import sys

import corpus
import pytest

pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")

_LOG = corpus.GENERATED_DIR / "posix_write_1M_x_64B.darshan"  # no DXT section

_FORKED_BEFORE_NUMPY = """
import sys
from iolab.sources import darshan
forked = darshan._fork_reader
def counted(*args):
    print("numpy loaded at the fork:", "numpy" in sys.modules, file=sys.stderr)
    return forked(*args)
darshan._fork_reader = counted
from iolab.cli import main
sys.exit(main(["diagnose", "--json", sys.argv[1]]))
"""

_READ_WITHOUT_NUMPY = """
import io, pickle, sys
from pathlib import Path
from iolab.sources import darshan
out = io.BytesIO()
darshan._send(out, Path(sys.argv[1]))
kind = pickle.loads(out.getvalue())[0]
print(kind, "numpy" in sys.modules)
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    corpus.require(real=False, generated=True)
    return subprocess.run([sys.executable, "-c", code, str(_LOG)], capture_output=True,
                          text=True, timeout=120)


def test_diagnose_forks_the_reader_before_importing_numpy() -> None:
    r = _run(_FORKED_BEFORE_NUMPY)
    assert r.returncode == 0, r.stderr[-2000:]
    assert '"kind": "diagnosis"' in r.stdout
    assert r.stderr.count("numpy loaded at the fork: False") == 1, r.stderr[-2000:]


def test_reader_sends_a_log_without_numpy() -> None:
    r = _run(_READ_WITHOUT_NUMPY)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["ok", "False"]
