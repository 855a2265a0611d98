"""The scaffolding rule predicates share: which files go through MPI-IO, "enough of them to
matter" tests, the worst files of a selection, and their evidence rows.

Kept apart from :mod:`base` (what a rule *is*) because these read the model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from iolab.diagnose.rules.base import FileClaims, FileEvidence, Value
from iolab.model.files import APP
from iolab.model.job import FILE_MODULES
from iolab.model.layers import slowest_rank_time
from iolab.model.metrics import BIN_UPPER
from iolab.model.tables import unique_rows

if TYPE_CHECKING:
    from iolab.diagnose.config import Thresholds
    from iolab.model.job import Model

# Direction -> (size-bin infix, operations counter suffix, bytes counter suffix).
DIR_NAMES = {"read": ("READ", "READS", "BYTES_READ"),
             "write": ("WRITE", "WRITES", "BYTES_WRITTEN")}


RULE_MEMO = "rule"  # model.memo keys of once_per_diagnosis: (RULE_MEMO, name)


def once_per_diagnosis(compute: Callable[[Model, Thresholds], np.ndarray]
                       ) -> Callable[[Model, Thresholds], np.ndarray]:
    """Decorator: ``compute(model, th)`` once for every rule of one diagnosis that asks (a
    selection several rules share: ~0.1 ms each time, issue 31), read-only. diagnose()
    forgets these at its start, so a diagnosis with other thresholds computes them again."""
    key = (RULE_MEMO, f"{compute.__module__}.{compute.__qualname__}")

    @functools.wraps(compute)
    def shared(model: Model, th: Thresholds) -> np.ndarray:
        got = model.memo.get(key)
        if got is not None and got[0] is th:
            return got[1]
        value = compute(model, th)
        value.flags.writeable = False
        model.memo[key] = (th, value)
        return value
    return shared


def forget_rule_memo(model: Model) -> None:
    for key in [k for k in model.memo if k[0] == RULE_MEMO]:
        del model.memo[key]


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


# --- typed preconditions (Rule.requires): None when the model holds what a rule needs ---

Requirement = Callable[["Model", "Thresholds"], "str | None"]


def needs_lustre(model: Model, th: Thresholds) -> str | None:
    """the Lustre layout (LUSTRE module)"""
    return None if model.stripes else "Lustre layout (the log has no LUSTRE module)"


def needs_complete(*modules: str) -> Requirement:
    """The rule compares totals of ``modules``: a module that ran out of records at run time
    (Darshan's partial flag, the per-process record limit) would make the totals wrong."""
    def check(model: Model, th: Thresholds) -> str | None:
        """complete records (no module marked partial)"""
        part = [m for m in modules if m in model.job.partial_modules]
        if part:
            why = sorted({model.job.partial_why.get(m, "records were left out at run time")
                          for m in part})
            return (f"complete {', '.join(part)} records (the log's {', '.join(part)} data is "
                    f"partial: {'; '.join(why)})")
        return None
    return check


def needs_real_names(model: Model, th: Thresholds) -> str | None:
    """real file names (not anonymised hashes)"""
    if model.job.names_anonymised:
        return "file names (the log's names are anonymised hashes)"
    return None


# --- what "small" means, defined once ---

def small_limit(model: Model, th: Thresholds) -> int:
    """Requests below this many bytes are small: a share (``small_stripe_share``) of the
    job's most common Lustre stripe (1 MiB when the layout is unknown), capped by
    ``small_request_bytes``."""
    stripes = [s for s, _ in model.stripes.values() if s > 0]
    unit = max(set(stripes), key=stripes.count) if stripes else 1 << 20
    return int(min(th.small_request_bytes, th.small_stripe_share * unit))


def small_bins(limit: int) -> int:
    """How many of Darshan's size bins hold only requests below ``limit`` (the bin that
    straddles the limit is not counted: the counters cannot split it)."""
    return sum(1 for up in BIN_UPPER if up < limit)


# --- cost ---

def cost(model: Model, files: np.ndarray, kinds: tuple[str, ...] = ("read", "write", "meta"),
         modules: tuple[str, ...] = ("POSIX", "STDIO"), share: float = 1.0) -> float:
    """The slowest rank's time in ``kinds`` on ``files`` summed over ``modules``, times
    ``share`` (the part of those operations the problem concerns)."""
    return share * sum(slowest_rank_time(model, m, kinds, files) for m in modules)


def claims_of(model: Model, files: np.ndarray, *kinds: str) -> FileClaims:
    """What a finding's cost counts, as :attr:`Hit.claims`: each of ``kinds`` (read, write,
    meta, wait or *) on each file selected by the mask ``files``; read and write only on
    files that have that operation at some layer."""
    L = model.layers
    has = {"read": (L.posix.reads + L.mpiio.reads + L.stdio.reads) > 0,
           "write": (L.posix.writes + L.mpiio.writes + L.stdio.writes) > 0}
    blocks = []
    for k in kinds:
        sel = files & has[k] if k in has else files
        blocks.append((k, np.nonzero(sel)[0]))
    return FileClaims(model.files.paths, blocks)


def file_time(model: Model, kinds: tuple[str, ...] = ("read", "write", "meta"),
              modules: tuple[str, ...] = ("POSIX", "STDIO")) -> np.ndarray:
    """Per file: time in ``kinds`` at ``modules``, summed over ranks (a column)."""
    L = model.layers
    return np.sum([L.layer(m).time_s[k] for m in modules for k in kinds], axis=0)


def costliest(model: Model, sel: np.ndarray, counts: np.ndarray,
              kinds: tuple[str, ...] = ("read", "write", "meta"),
              modules: tuple[str, ...] = ("POSIX", "STDIO"), k: int = 10) -> list[int]:
    """The ``k`` files of ``sel`` that cost most time (``counts`` breaks ties): evidence
    points at the file that cost 113 s, not at the one with the most calls and 0.16 s."""
    t = file_time(model, kinds, modules)
    c = np.asarray(counts, dtype=np.float64)
    key = t + c / (c.max() + 1.0) * 1e-9 if c.size else t
    return worst(np.where(c > 0, key + 1e-300, 0.0), sel, k)


def rank_worlds(model: Model) -> list[range]:
    """The ranks of each MPI world of the job: each log of a workflow is its own
    MPI_COMM_WORLD (its ranks never wait for another log's), one log is one world."""
    if len(model.job.logs) < 2:
        return [range(max(model.job.nprocs, 1))]
    return [range(s.first_rank, s.first_rank + s.nprocs) for s in model.job.logs]


def ranks_in_one_world(model: Model) -> np.ndarray:
    """Per file: the most ranks of one MPI world (one log) that use it; the file table's
    ``nranks`` for one log. In a workflow, 16 one-process logs reading one file are 16
    worlds of one reader each: nobody to broadcast to, nobody waiting for anybody."""
    if len(model.job.logs) < 2:
        return model.files.nranks

    out = np.zeros(len(model.files), dtype=np.int64)
    starts = np.array([w.start for w in rank_worlds(model)], dtype=np.int64)
    for m in FILE_MODULES:
        md = model.mods.get(m)
        if md is None or len(md) == 0:
            continue
        sh = md.ranks < 0  # a reduced record covers the ranks of its own log
        np.maximum.at(out, md.file_index[sh], md.span_n[sh])
        fi, r = md.file_index[~sh].astype(np.int64), md.ranks[~sh].astype(np.int64)
        if fi.size == 0:
            continue
        world = np.searchsorted(starts, r, side="right") - 1
        keys = unique_rows(np.stack([fi, world, r], axis=1))
        pairs, counts = unique_rows(keys[:, :2], return_counts=True)
        np.maximum.at(out, pairs[:, 0], counts)
    return out
