"""bench/trace_overhead runs end to end (tiny counts; the real measurement is not a test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_trace_overhead_smoke(tracer: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    out.write_text("# Benchmarks\n\nother section\n")
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "trace_overhead"),
            "--repeat",
            "1",
            "--scale",
            "0.0005",
            "--output",
            str(out),
            "--dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "other section" in text and "| write64 |" in text and "| openclose |" in text
    # a second run replaces the section instead of appending another one
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "trace_overhead"),
            "--repeat",
            "1",
            "--scale",
            "0.0005",
            "--output",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    assert out.read_text().count("trace_overhead:begin") == 1
