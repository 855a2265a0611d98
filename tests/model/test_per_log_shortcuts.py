"""The per-log path's shortcuts (issue 31: triage's logs per second) give what the long way
gave: the same numbers bit for bit, shared arrays that nobody can change, and nothing kept
from one diagnosis for another with other thresholds."""

from __future__ import annotations

import dataclasses
import json

import corpus
import numpy as np
import pytest

from iolab.diagnose.config import Thresholds
from iolab.diagnose.report import diagnose, to_dict
from iolab.errors import UsageError
from iolab.model.job import build_model
from iolab.model.layers import _per_file_cols
from iolab.model.metrics import STACK, _layer_time, layer_time
from iolab.model.tables import ModuleData, unique_rows

pytest.importorskip("darshan", reason="pydarshan (PyPI darshan) is not installed")
from iolab.sources.darshan import load_darshan_log  # noqa: E402

# MPI-IO whose time beyond POSIX is worth reporting: the selection rules share (waiting_files)
SKEWED = "mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1"


def _model(name: str):  # type: ignore[no-untyped-def]
    path = corpus.REAL_LOGS_DIR / f"{name}.darshan"
    if not path.is_file():
        pytest.skip(corpus.REAL_MISSING)
    return build_model([load_darshan_log(path, isolate=False)])


def _modules() -> list[ModuleData]:
    return [md for md in _model(SKEWED).mods.values() if len(md)]


def test_pos_is_the_clipped_counter_shared_read_only() -> None:
    """Expected: pos(name) equals np.clip(col, 0, None), is one array per counter and cannot
    be written / was: a new writable np.clip array on each of ~130 calls a log."""
    for md in _modules():
        for name in md._cidx:
            got = md.pos(name)
            assert got.tolist() == np.clip(md.col(name), 0, None).tolist()
            assert md.pos(name) is got
            with pytest.raises(ValueError):
                got[:1] = 7


def test_pos_sums_are_the_masked_sums_of_each_counter() -> None:
    """Expected: pos_sums gives int(pos(name)[mask].sum()) per name, 0 for a name the module
    lacks / was: one np.sum per counter (the method did not exist)."""
    rng = np.random.default_rng(3)
    for md in _modules():
        names = [*md._cidx, "NO_SUCH_COUNTER"]
        mask = rng.random(len(md)) < 0.6
        want = {n: int(md.pos(n)[mask].sum()) if md.has(n) else 0 for n in names}
        assert md.pos_sums(names, mask) == want


def test_unique_rows_is_numpy_unique_over_rows() -> None:
    """Expected: unique_rows gives np.unique(axis=0)'s rows, order, inverse and counts, for
    empty, negative and repeated keys / was: np.unique(axis=0), ~100 us a call."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        keys = rng.integers(-3, 4, size=(int(rng.integers(0, 30)), int(rng.integers(1, 4))))
        want = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        got = unique_rows(keys, return_inverse=True, return_counts=True)
        assert got[0].shape == want[0].shape and got[0].tolist() == want[0].tolist()
        assert got[1].tolist() == want[1].reshape(-1).tolist()
        assert got[2].tolist() == want[2].tolist()
        assert unique_rows(keys).tolist() == np.unique(keys, axis=0).tolist()


def test_per_file_columns_add_up_bit_for_bit_as_one_bincount_each() -> None:
    """Expected: the one bincount over several columns equals a bincount per column bit for
    bit (float weights in record order) / was: one bincount per column (~15 a layer)."""
    md = _modules()[0]
    rng = np.random.default_rng(11)
    n = int(md.file_index.max()) + 1
    cols = [rng.random(len(md)) * 10.0 ** int(rng.integers(-6, 9)) for _ in range(5)]
    got = _per_file_cols(md, cols, n)
    for j, c in enumerate(cols):
        want = np.bincount(md.file_index, weights=c, minlength=n)[:n]
        assert got[:, j].tobytes() == want.tobytes()


def test_layer_time_is_computed_once_per_model_and_read_only() -> None:
    """Expected: layer_time returns the same read-only result each time a model asks, equal
    to a fresh computation / was: computed again by each caller (12 times a log)."""
    model = _model(SKEWED)
    for _, mods in STACK:
        lt = layer_time(model, mods)
        assert layer_time(model, mods) is lt
        fresh = _layer_time(model, mods)
        for a, b in ((lt.own, fresh.own), (lt.reduced, fresh.reduced), (lt.kinds, fresh.kinds)):
            assert a.tobytes() == b.tobytes()
            assert not a.flags.writeable


def test_a_second_diagnosis_with_other_thresholds_starts_afresh() -> None:
    """Expected: diagnosing a model again with other thresholds gives what a fresh model
    gives (the rules' shared selections recomputed) / was: nothing shared, each rule
    computing its own selection again."""
    th = Thresholds()
    strict = dataclasses.replace(th, mpiio_skew_min_s=1e9, exchange_share=0.99)
    fresh = json.dumps(to_dict(diagnose(_model(SKEWED), strict)), sort_keys=True, default=str)
    assert "mpiio-time-skew" not in fresh
    model = _model(SKEWED)
    first = diagnose(model, th)
    assert "mpiio-time-skew" in {f.rule.id for f in first.findings}  # the case it guards
    again = json.dumps(to_dict(diagnose(model, strict)), sort_keys=True, default=str)
    assert again == fresh  # other thresholds
    diagnose(model, th)
    th.mpiio_skew_min_s, th.exchange_share = 1e9, 0.99  # the same thresholds, changed
    again = json.dumps(to_dict(diagnose(model, th)), sort_keys=True, default=str)
    assert again == fresh


def _spread_by_record(nprocs: int, md: ModuleData, m: np.ndarray, values: np.ndarray
                      ) -> np.ndarray:
    """The loop _rank_spread made: one slice per reduced record."""
    out = np.zeros(nprocs)
    own = m & (md.ranks >= 0)
    np.add.at(out, np.clip(md.ranks[own], 0, nprocs - 1), values[own])
    for i in np.nonzero(m & (md.ranks < 0))[0]:
        lo, n = int(md.span_lo[i]), max(int(md.span_n[i]), 1)
        out[lo:lo + n] += values[i] / n
    return out


def test_rank_spread_of_one_log_adds_up_as_record_by_record() -> None:
    """Expected: _rank_spread equals the slice-per-record loop bit for bit (one log's span,
    several logs' spans, spans past the last rank, -0.0 and NaN values) / was: the loop,
    one numpy slice per reduced record (thousands on a log of shared files)."""
    from iolab.model.metrics import _rank_spread

    rng = np.random.default_rng(2)
    for _ in range(2000):
        nrec, nprocs = int(rng.integers(1, 30)), int(rng.integers(1, 12))
        ranks = rng.integers(-1, nprocs, size=nrec)
        several = rng.random() < 0.3
        lo = rng.integers(0, 3, size=nrec) if several else np.zeros(nrec, dtype=np.int64)
        n = rng.integers(0, nprocs + 3, size=nrec) if several else np.full(
            nrec, nprocs + int(rng.integers(-1, 2)))
        md = ModuleData(module="POSIX", ids=np.zeros(nrec, dtype=np.uint64), ranks=ranks,
                        _c=np.zeros((nrec, 0), dtype=np.int64), _f=np.zeros((nrec, 0)),
                        span_lo=np.where(ranks < 0, lo, ranks),
                        span_n=np.where(ranks < 0, n, 1))
        values = rng.random(nrec) * 10.0 ** rng.integers(-8, 8, size=nrec)
        values[rng.random(nrec) < 0.2] = -0.0
        values[rng.random(nrec) < 0.05] = np.nan
        m = rng.random(nrec) < 0.8
        want = _spread_by_record(nprocs, md, m, values)
        assert _rank_spread(nprocs, md, m, values).tobytes() == want.tobytes()


# Logs of the real corpus with an overview finding (I/O share, read/write balance) and MPI-IO
OVERVIEW_LOGS = (SKEWED, "apmpi_apxc/mpi-io-test")


def test_judge_without_overview_fixes_gives_diagnose_findings() -> None:
    """Expected: judge(overview_fixes=False) -- triage's findings -- gives diagnose()'s
    findings in the same order, with the same costs, grades and fixes, only the overview
    findings' fixes not made / was: triage made every overview fix (Slurm scripts) and the
    report's summary, then threw both away."""
    from iolab.diagnose.report import OVERVIEW_FIX_NOT_MADE, judge

    overview_seen = 0
    for name in OVERVIEW_LOGS:
        full = diagnose(_model(name), Thresholds())
        short, not_judged = judge(_model(name), Thresholds(), overview_fixes=False)
        assert not_judged == full.not_judged
        assert len(short) == len(full.findings)
        for a, b in zip(short, full.findings):
            assert (a.rule.id, a.hit.direction, a.severity, a.cost_s, a.estimate_s) == (
                b.rule.id, b.hit.direction, b.severity, b.cost_s, b.estimate_s)
            if b.rule.overview:
                overview_seen += 1
                assert a.fix.text == OVERVIEW_FIX_NOT_MADE and not a.fix.artifacts
            else:
                assert a.fix == b.fix
    assert overview_seen, "no overview finding in the logs: the test proves nothing"


def test_mpi_library_is_the_answer_build_model_found() -> None:
    """Expected: mpi_library(model) returns the MpiLibrary build_model found (the same
    object, equal to a fresh search of the log) / was: the log's names searched again on
    each call (triage's mpi_library column after the model's own search)."""
    from iolab.model.mpilib import library_of, mpi_library

    model = _model(SKEWED)
    first = mpi_library(model)
    assert mpi_library(model) is first
    j = model.job
    assert first == library_of(exe=j.exe, metadata=j.metadata, hints=j.hints, mounts=j.mounts,
                               rank_hosts=j.rank_hosts, files=model.files, mods=model.mods)
    assert first.name != "none"  # the log has MPI-IO: a library was looked for


def _file_ranks_by_np_unique(model):  # type: ignore[no-untyped-def]
    """The reference _file_ranks replaced: np.unique twice and np.isin."""
    from iolab.model.tables import unique_values

    mds = [md for md in model.mods.values() if len(md)]
    if not mds:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    files = np.concatenate([md.file_index for md in mds]).astype(np.int64)
    ranks = np.concatenate([md.ranks for md in mds]).astype(np.int64)
    key = unique_values(files * (1 << 32) + (ranks + 1))
    pair = np.stack([key >> 32, (key & 0xFFFFFFFF) - 1], axis=1)
    f, first = np.unique(files, return_index=True)
    n = np.unique(pair[:, 0], return_counts=True)[1]
    one = pair[np.isin(pair[:, 0], f[n == 1]) & (pair[:, 1] >= 0)
               & (pair[:, 0] < len(model.files.paths))]
    one = one[np.argsort(first[np.searchsorted(f, one[:, 0])], kind="stable")]
    return one[:, 0], one[:, 1]


def test_file_ranks_from_sorted_runs_are_those_of_np_unique() -> None:
    """Expected: the files of one rank, and that rank, found from the runs of the sorted
    (file, rank) pairs are np.unique's, in the same order, on logs of one rank per file,
    shared files and a merged workflow / was: np.unique twice and np.isin a log."""
    from iolab.diagnose.attribution import _file_ranks

    corpus.require(real=True, generated=False)
    paths = [corpus.REAL_LOGS_DIR / f"{name}.darshan" for name in OVERVIEW_LOGS]
    raws = [load_darshan_log(p, isolate=False) for p in paths]
    models = [build_model([r]) for r in raws] + [build_model(raws)]
    for p in corpus.REAL_LOGS[:40]:
        try:
            models.append(build_model([load_darshan_log(p, isolate=False)]))
        except UsageError:
            continue  # a damaged log of the corpus: refused before any model
    some = 0
    for model in models:
        got, want = _file_ranks(model), _file_ranks_by_np_unique(model)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
        some += len(got[0])
    assert some, "no file of one rank in the logs: the test proves nothing"
