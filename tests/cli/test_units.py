"""One way to write bytes in every verb's output (diagnose and results once differed:
"1.0 MiB" against "1 MiB", numpy integers printed as "-" by one of them)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from iolab import paths
from iolab.bench import striping
from iolab.diagnose.rules.base import fmt_bytes as diagnose_fmt_bytes
from iolab.errors import UsageError
from iolab.results.render import fmt_bytes as results_fmt_bytes
from iolab.units import fmt_bytes, parse_number, parse_size


@pytest.mark.parametrize("value,text", [
    (0, "0 B"), (512, "512 B"), (63.6, "64 B"), (1536, "1.5 KiB"), (4096, "4 KiB"),
    (1 << 20, "1 MiB"), (256 * (1 << 20), "256 MiB"), (1.5 * (1 << 30), "1.5 GiB"),
    (3 * (1 << 40), "3 TiB"), (2048 * (1 << 40), "2048 TiB"),
    (np.int64(4 << 20), "4 MiB"), (np.float64(1536.0), "1.5 KiB"),
    (None, "-"), ("4M", "-"), (True, "-"),
])
def test_fmt_bytes(value: object, text: str) -> None:
    assert fmt_bytes(value) == text


def test_one_definition() -> None:
    assert diagnose_fmt_bytes is fmt_bytes and results_fmt_bytes is fmt_bytes


# --- sizes in: the engine's grammar -------------------------------------------------------

SIZES = [("4096", 4096), ("64k", 64 << 10), ("64K", 64 << 10), ("64KiB", 64 << 10),
         ("64kb", 64 << 10), ("4M", 4 << 20), ("1g", 1 << 30), ("8T", 8 << 40), ("64B", 64),
         ("1.5M", None), ("64ib", None), ("-1", None), ("k", None), ("64kk", None),
         ("0x10", None), ("20000000T", None), ("1P", None)]


@pytest.mark.parametrize("text,size", SIZES)
def test_a_size_reads_as_the_engine_reads_it(text: str, size: int | None) -> None:
    """The engine's own parser (``iolab-bench --transfer TEXT --version`` parses and exits)
    accepts exactly the sizes units.parse_size reads."""
    try:
        engine = paths.engine_binary()
    except UsageError:
        pytest.skip("the engine is not built (./setup)")
    done = subprocess.run([str(engine), "--transfer", text, "--version"], capture_output=True,
                          text=True, check=False)
    if size is None:
        with pytest.raises(ValueError, match="not a size"):
            parse_size(text)
        assert done.returncode != 0 and "not a size" in done.stderr
    else:
        assert parse_size(text) == size
        assert done.returncode == 0, done.stderr


def test_one_size_parser() -> None:
    """expected: one grammar for every size iolab reads / was: six (tune's knobs read '64ib',
    diagnose's thresholds '1.5G', bench's --stripe-size refused '1MiB' and '1T')."""
    from iolab.diagnose import config
    from iolab.tune import knobs

    assert knobs.parse_size is parse_size and config.parse_size is parse_size
    assert striping.parse_size("1MiB") == 1 << 20 and striping.parse_size("1T") == 1 << 40
    with pytest.raises(UsageError, match="wants a int"):
        config.build_thresholds(None, ["node_memory_min_bytes=1.5G"])


@pytest.mark.parametrize("text,number", [("64k", 65536), ("2", 2), ("1.5", 1.5),
                                         ("collective", None), ("1e3", None), ("nan", None)])
def test_a_swept_value_as_a_number(text: str, number: float | None) -> None:
    assert parse_number(text) == number
