"""The scaffolding rule predicates share: which files go through MPI-IO, "enough of them to
matter" tests, the worst files of a selection, and their evidence rows.

Kept apart from :mod:`base` (what a rule *is*) because these read the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from iolab.diagnose.rules.base import FileEvidence, Value
from iolab.model.files import APP

if TYPE_CHECKING:
    from iolab.model.job import Model

# Direction -> (size-bin infix, operations counter suffix, bytes counter suffix).
DIR_NAMES = {"read": ("READ", "READS", "BYTES_READ"),
             "write": ("WRITE", "WRITES", "BYTES_WRITTEN")}


def mpi_files(model: Model) -> np.ndarray:
    """Per file: is it accessed through MPI-IO?"""
    mask = np.zeros(len(model.files), dtype=bool)
    md = model.mods.get("MPI-IO")
    if md is not None and len(md):
        mask[md.file_index] = True
    return mask


def per_op(total: np.ndarray, ops: np.ndarray) -> np.ndarray:
    """``total / ops`` element-wise, 0 where there are no operations (average sizes)."""
    t = np.asarray(total, dtype=np.float64)
    return np.divide(t, ops, out=np.zeros_like(t), where=np.asarray(ops) > 0)


def shared_app_files(model: Model) -> np.ndarray:
    """Per file: an application file opened by several ranks."""
    return (model.files.category == APP) & (model.files.nranks > 1)


def enough(count: float, total: float, min_count: float, min_share: float) -> bool:
    """``count`` of ``total`` is both many (``min_count``) and a large share (``min_share``)."""
    return total > 0 and count >= min_count and count / total >= min_share


def worst(values: np.ndarray, sel: np.ndarray | None = None, k: int = 10) -> list[int]:
    """Indices of the ``k`` largest positive ``values`` (among ``sel``), largest first."""
    v = np.asarray(values, dtype=np.float64)
    if sel is not None:
        v = np.where(sel, v, -np.inf)
    return [int(i) for i in np.argsort(-v, kind="stable")[:k] if v[i] > 0]


def file_rows(model: Model, idx: list[int] | np.ndarray,
              columns: Mapping[str, np.ndarray | Callable[[int], Any]]) -> list[FileEvidence]:
    """Evidence rows for files ``idx``: each column an array indexed by file, or a function of
    the file index. numpy scalars become plain ints/floats (for JSON and the renderers)."""
    def val(col: np.ndarray | Callable[[int], Any], i: int) -> Value:
        v = col(i) if callable(col) else col[i]
        if isinstance(v, (np.integer, np.bool_)):
            return int(v)
        if isinstance(v, np.floating):
            return float(v)
        return v
    return [FileEvidence(model.files.paths[i], {k: val(c, int(i)) for k, c in columns.items()})
            for i in idx]
