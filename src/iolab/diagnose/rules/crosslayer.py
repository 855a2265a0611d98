"""Per-file columns the cross-layer rules share (iolab.diagnose.rules.layers and
.time_skew): application files, the call mode, MPI-IO time beyond POSIX, tiny collectives."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from iolab.diagnose.rules.common import once_per_diagnosis, small_limit
from iolab.model.files import APP

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model


def app_files(model: Model) -> np.ndarray:
    return model.files.category == APP


def call_mode(model: Model, i: int, d: str = "write") -> str:
    calls = model.layers.calls.of(d)
    coll = calls["COLL"][i] + calls["SPLIT"][i]
    total = model.layers.calls.total(d)[i]
    return "collective" if total and coll >= 0.5 * total else "independent"


@once_per_diagnosis
def tiny_collective_files(model: Model, th: Thresholds) -> np.ndarray:
    L = model.layers
    coll = sum(L.calls.of(d)["COLL"] + L.calls.of(d)["SPLIT"] for d in ("read", "write"))
    calls = L.calls.total("read") + L.calls.total("write")
    avg = np.divide(L.mpiio.bytes, calls, out=np.zeros(len(model.files)), where=calls > 0)
    # Per rank: 512 ranks making 2 collective calls each are not "many calls" (1,024 in the
    # record's sum); every rank of the file takes part in each collective call.
    per_rank = coll / np.maximum(model.files.nranks, 1)
    return (app_files(model) & (per_rank >= th.tiny_collective_calls) & (coll >= 0.5 * calls)
            & (avg < small_limit(model, th)))


def mpiio_overhead(model: Model) -> np.ndarray:
    """Per file: the slowest rank's MPI-IO time beyond the slowest POSIX rank's time."""
    L = model.layers
    return np.maximum(L.mpiio.slowest_rank_time_s - L.posix.slowest_rank_time_s, 0)
