"""One way to write bytes in every verb's output (diagnose and results once differed:
"1.0 MiB" against "1 MiB", numpy integers printed as "-" by one of them)."""

from __future__ import annotations

import numpy as np
import pytest

from iolab.diagnose.rules.base import fmt_bytes as diagnose_fmt_bytes
from iolab.results.render import fmt_bytes as results_fmt_bytes
from iolab.units import fmt_bytes


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
