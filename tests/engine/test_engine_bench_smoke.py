"""bench/engine_vs_ior runs end to end with tiny sizes (a smoke test, not a measurement)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine_helpers import Engine, _env

REPO = Path(__file__).resolve().parents[2]


def test_engine_vs_ior_smoke(engine: Engine, tmp_path: Path):
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nother sections stay\n")
    env = {**_env(), "IOLAB_BENCH": str(engine.binary)}
    env.pop("IOR", None)
    p = subprocess.run([sys.executable, str(REPO / "bench" / "engine_vs_ior"), "--rounds", "1",
                        "--mib-per-rank", "0.0625", "--only", "POSIX fpp buffered",
                        "--dir", str(tmp_path / "scratch"), "--output", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "other sections stay" in text
    assert text.count("<!-- engine_vs_ior:begin -->") == 1
    rows = [ln for ln in text.splitlines() if ln.startswith("| POSIX fpp buffered")]
    assert len(rows) == 6  # 3 transfer sizes x write/read
    for row in rows:
        iolab = row.split("|")[3].strip()
        assert iolab != "–" and float(iolab.split()[0]) > 0, row
    # its own scratch files are gone; --dir itself stays (it may hold the user's files)
    assert (tmp_path / "scratch").is_dir() and not any((tmp_path / "scratch").iterdir())
    assert os.environ.get("IOR") is None or "IOR" in text
