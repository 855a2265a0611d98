"""bench/io500_vs_io500.py's table: the text above a measured table says how it was run."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_measured_table_says_how_it_was_run_not_to_be_measured() -> None:
    """expected the measured table headed "Measured with" and the full command (sizes
    included) / was "To be measured on an idle machine; run:" above measured numbers."""
    sys.path.insert(0, str(BENCH))
    try:
        bench = importlib.import_module("io500_vs_io500")
    finally:
        sys.path.remove(str(BENCH))
    summary = ("[RESULT]       ior-easy-write        0.760000 GiB/s : time 5.100 seconds\n"
               "[SCORE ] Bandwidth 2.000000 GiB/s : IOPS 96.000000 kiops : TOTAL 13.000000\n")
    rounds = [bench.scores_of(summary)] * 3
    o = argparse.Namespace(np=2, rounds=3, stonewall=5, transfer="1m", block="256m",
                           segments=20000, files=100000)
    text = bench.table(rounds, rounds, o, 90.0)
    assert "To be measured" not in text
    assert text.startswith("Measured with")
    assert ("bench/io500_vs_io500.py --io500 PATH --np 2 --rounds 3 --stonewall 5 "
            "--transfer 1m --block 256m --segments 20000 --files 100000") in text
    assert "| ior-easy-write | 0.76" in text
