"""bench/trace_overhead runs end to end (tiny counts; the real measurement is not a test)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_helpers import ROOT


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


def test_trace_overhead_callgrind_smoke(tracer: Path, tmp_path: Path) -> None:
    """--callgrind writes its own block right after the wall-time one, keeps the rest."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    out = tmp_path / "bench.md"
    out.write_text(
        "# Benchmarks\n\n<!-- trace_overhead:begin -->\nwall\n<!-- trace_overhead:end -->\n"
        "\n## Other\n"
    )
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "trace_overhead"),
        "--callgrind",
        "--scale",
        "0.001",
        "--output",
        str(out),
        "--dir",
        str(tmp_path),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert text.index("trace_overhead:end") < text.index("Instruction counts (callgrind)")
    assert text.index("trace_overhead_callgrind:end") < text.index("## Other")
    row = next(ln for ln in text.splitlines() if ln.startswith("| write64 |"))
    plain, iolab = (float(c) for c in row.split("|")[2:4])
    assert 0 < plain < iolab  # the tracer adds instructions to every traced write()
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    assert out.read_text().count("trace_overhead_callgrind:begin") == 1
