"""Module tables: a RawJob's record tables with named column access (:class:`ModuleData`),
so the metrics are written once, against columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iolab.model.raw import RawJob, RecordTable


@dataclass
class ModuleData:
    """One module's records with named column access (missing counters read as zero)."""

    module: str
    ids: np.ndarray  # uint64
    ranks: np.ndarray  # int64
    _c: np.ndarray
    _f: np.ndarray
    _cidx: dict[str, int] = field(default_factory=dict)
    _fidx: dict[str, int] = field(default_factory=dict)
    file_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # For a record reduced over ranks (rank -1): the first rank and number of ranks it
    # stands for (several logs merged into one job each bring their own rank range).
    span_lo: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    span_n: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # pos() per counter: the metrics and the rules ask for the same ~130 columns of a log,
    # and np.clip on a small array costs ~30 us (triage's per-log path, issue 31)
    _pos: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def has(self, name: str) -> bool:
        return name in self._cidx or name in self._fidx

    def col(self, name: str) -> np.ndarray:
        """Integer counter ``name`` for every record (zeros when the source lacks it)."""
        j = self._cidx.get(name)
        if j is None:
            return np.zeros(len(self), dtype=np.int64)
        return self._c[:, j]

    def fcol(self, name: str) -> np.ndarray:
        """Float counter ``name`` for every record (zeros when the source lacks it)."""
        j = self._fidx.get(name)
        if j is None:
            return np.zeros(len(self), dtype=np.float64)
        return self._f[:, j]

    def pos_sums(self, names: list[str], mask: np.ndarray) -> dict[str, int]:
        """``int(pos(name)[mask].sum())`` of each name, in one numpy call (integer sums: the
        same whatever the order; ~40 counters an interface, issue 31)."""
        known = [n for n in names if n in self._cidx]
        out = dict.fromkeys(names, 0)
        if known and len(self):
            # the columns first, then the rows (all of them: no copy of every counter of
            # every record, 36 MB on 64,000 records)
            cols = self._c[:, [self._cidx[n] for n in known]]
            if not mask.all():
                cols = cols[mask]
            out.update(zip(known, np.maximum(cols, 0).sum(axis=0).tolist()))
        return out

    def pos(self, name: str) -> np.ndarray:
        """A counter with Darshan's -1 'not recorded' values read as 0 (read-only: one array
        per counter, shared by every caller)."""
        got = self._pos.get(name)
        if got is None:
            got = np.maximum(self.col(name), 0)  # = np.clip(.., 0, None), without its checks
            got.flags.writeable = False
            self._pos[name] = got
        return got


def _from_table(t: RecordTable) -> ModuleData:
    n = len(t.record_ids)
    return ModuleData(
        module=t.module,
        ids=np.asarray(t.record_ids, dtype=np.uint64),
        ranks=np.asarray(t.ranks, dtype=np.int64),
        _c=np.asarray(t.counters, dtype=np.int64).reshape(n, len(t.counter_names)),
        _f=np.asarray(t.fcounters, dtype=np.float64).reshape(n, len(t.fcounter_names)),
        _cidx={n: i for i, n in enumerate(t.counter_names)},
        _fidx={n: i for i, n in enumerate(t.fcounter_names)},
    )


def concat_modules(a: ModuleData, b: ModuleData) -> ModuleData:
    """The same module of two sources (several logs) joined on the union of names."""
    cn = sorted(set(a._cidx) | set(b._cidx))
    fn = sorted(set(a._fidx) | set(b._fidx))
    c = np.zeros((len(a) + len(b), len(cn)), dtype=np.int64)
    f = np.zeros((len(a) + len(b), len(fn)), dtype=np.float64)
    for j, n in enumerate(cn):
        c[:, j] = np.concatenate([a.col(n), b.col(n)])
    for j, n in enumerate(fn):
        f[:, j] = np.concatenate([a.fcol(n), b.fcol(n)])
    return ModuleData(
        module=a.module,
        ids=np.concatenate([a.ids, b.ids]),
        ranks=np.concatenate([a.ranks, b.ranks]),
        span_lo=np.concatenate([a.span_lo, b.span_lo]),
        span_n=np.concatenate([a.span_n, b.span_n]),
        _c=c, _f=f,
        _cidx={n: i for i, n in enumerate(cn)},
        _fidx={n: i for i, n in enumerate(fn)},
    )


def module_tables(raw: RawJob) -> tuple[dict[str, ModuleData], dict[int, str]]:
    """Every module of ``raw`` as columns, and the record id -> path map."""
    return {mod: _from_table(t) for mod, t in raw.tables.items()}, raw.paths()


def unique_values(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for integers (sorted, each value once) by one sort: numpy 2.3+
    finds the values with a hash table before sorting them, 20 to 100 times slower on a
    log's 64,000 record ids (measured, numpy 2.4: 30-140 ms against 1 ms)."""
    ordered = np.sort(values, axis=None)
    if ordered.size < 2:
        return ordered
    first = np.empty(ordered.size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def unique_rows(keys: np.ndarray, return_inverse: bool = False, return_counts: bool = False
                ) -> Any:
    """``np.unique(keys, axis=0, ...)`` for a 2-D integer array: the same rows in the same
    (lexicographic) order, the same inverse (1-D) and counts, without np.unique's
    axis machinery (moveaxis, a structured view: ~100 us a call on a log's few rows,
    called a dozen times per log in triage's per-log path, issue 31)."""
    n = len(keys)
    if n == 0:
        uk = keys.reshape(0, keys.shape[1] if keys.ndim == 2 else 0)
        empty = np.zeros(0, dtype=np.int64)
        extra = ([empty] if return_inverse else []) + ([empty] if return_counts else [])
        return (uk, *extra) if extra else uk
    order = np.lexsort(keys.T[::-1])  # by the first column, then the next: np.unique's order
    ordered = keys[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=first[1:])
    uk = ordered[first]
    extra = []
    if return_inverse:
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.cumsum(first) - 1
        extra.append(inv)
    if return_counts:
        extra.append(np.diff(np.append(np.flatnonzero(first), n)))
    return (uk, *extra) if extra else uk
