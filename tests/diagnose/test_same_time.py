"""Every second counted once (iolab.diagnose.attribution): findings take shares of a file's
read, write, metadata and waiting time in the rule table's tier order (mechanism, then
symptom, then layout), costliest first within a tier; a finding's net cost is what it could
take; experiments own nothing; the net costs together stay within the slowest rank's I/O
time. The real logs are in test_darshan35_logs.py; these cases pin the accounting itself.

Expected / was: a symptom ("many small requests", 210 s) outranked the mechanism that made
its requests (read-modify-write, 205 s), both HIGH on the same reads; a finding was "the
same time" only when every claim of it was taken, and its cost never recomputed net."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab.diagnose.attribution import TimePools, attribute_time
from iolab.diagnose.report import _top_fix_items
from iolab.diagnose.rules import registry
from iolab.diagnose.rules.base import FileEvidence, Finding, Fix, Hit

RULES = {r.id: r for r in registry()}
ORDER = {r.id: i for i, r in enumerate(registry())}


def _f(rule: str, cost: float, claims: list[tuple[str, str]] | None = None,
       files: tuple[str, ...] = (), direction: str | None = None) -> Finding:
    hit = Hit(summary="", values={}, direction=direction, cost_s=cost, claims=claims,
              files=[FileEvidence(p, {}) for p in files])
    return Finding(rule=RULES[rule], hit=hit, fix=Fix(f"fix of {rule}"), graded="high",
                   run_time_s=100.0)


def _pools(seconds: dict[tuple[str, str], float], rank: dict[str, int] | None = None
           ) -> TimePools:
    return TimePools(dict(seconds), dict(rank or {}))


def _run(*fs: Finding, pools: TimePools | None = None,
         io_time_s: float | None = None) -> list[Finding]:
    attribute_time(list(fs), ORDER, pools, io_time_s)
    return list(fs)


def test_the_mechanism_owns_the_seconds_before_a_costlier_symptom() -> None:
    pools = _pools({("/a", "read"): 8.0})
    small, rmw = _run(_f("small-requests", 8.0, files=("/a",), direction="read"),
                      _f("read-modify-write", 5.0, [("/a", "read")]), pools=pools)
    assert rmw.cost_s == pytest.approx(5.0) and rmw.same_time_as == []
    assert small.gross_s == 8.0 and small.cost_s == pytest.approx(3.0)
    assert small.same_time_as == ["read-modify-write"]
    assert "beyond the time of read-modify-write" in small.cost_text()
    items = _top_fix_items([rmw, small])
    assert [(i["rule_id"], i["saves_up_to_s"]) for i in items] == [
        ("read-modify-write", pytest.approx(5.0)), ("small-requests", pytest.approx(3.0))]


def test_a_finding_whose_seconds_are_all_taken_is_the_same_time() -> None:
    pools = _pools({("/a", "write"): 10.0, ("/a", "meta"): 2.0})
    close, small = _run(_f("slow-close", 12.0, [("/a", "*")]),
                        _f("small-requests", 5.0, files=("/a",), direction="write"),
                        pools=pools)
    assert close.cost_s == pytest.approx(12.0)
    assert small.cost_s == pytest.approx(0.0) and small.same_time_as == ["slow-close"]
    assert "the same time as slow-close, not in addition" in small.cost_text()
    assert [i["rule_id"] for i in _top_fix_items([close, small])] == ["slow-close"]


def test_waiting_is_not_the_posix_writes_but_mpiio_writes_spill_into_it() -> None:
    pools = _pools({("/a", "write"): 5.0, ("/a", "wait"): 10.0})
    tiny, cb = _run(_f("tiny-collective-calls", 10.0, [("/a", "wait")]),
                    _f("collective-buffering", 5.0, files=("/a",), direction="write"),
                    pools=pools)
    assert tiny.cost_s == pytest.approx(10.0) and cb.cost_s == pytest.approx(5.0)
    assert tiny.same_time_as == [] and cb.same_time_as == []  # different seconds
    # an MPI-IO write time (POSIX writes and the waiting around them) larger than the POSIX
    # writes takes the rest from the waiting
    pools = _pools({("/b", "write"): 4.0, ("/b", "wait"): 6.0})
    cb, skew = _run(_f("collective-buffering", 7.0, files=("/b",), direction="write"),
                    _f("mpiio-time-skew", 6.0, [("/b", "wait")]), pools=pools)
    assert skew.cost_s == pytest.approx(6.0)  # a mechanism: first
    assert cb.cost_s == pytest.approx(4.0) and cb.same_time_as == ["mpiio-time-skew"]


def test_no_finding_owns_more_than_the_time_of_its_operations() -> None:
    pools = _pools({("/a", "meta"): 1.4})
    close, = _run(_f("slow-close", 10.1, [("/a", "meta")]), pools=pools)
    assert close.gross_s == 10.1 and close.cost_s == pytest.approx(1.4)
    assert sum(s for _, _, s in close.owned) == pytest.approx(1.4)


def test_the_slowest_rank_of_per_rank_files_is_counted_once() -> None:
    """Four ranks, one file each, 0.8 s of metadata on each: two findings that each count the
    busiest rank's metadata time claim the same seconds."""
    files = [f"/r{i}" for i in range(4)]
    pools = _pools({(p, "meta"): 0.8 for p in files}, {p: i for i, p in enumerate(files)})
    md, opens = _run(_f("metadata-time", 0.8, [(p, "meta") for p in files]),
                     _f("frequent-open-close", 0.8, [(p, "meta") for p in files]),
                     pools=pools)
    assert md.cost_s == pytest.approx(0.8)
    assert opens.cost_s == pytest.approx(0.0) and opens.same_time_as == ["metadata-time"]


def test_experiments_own_nothing_and_rank_after_waste() -> None:
    pools = _pools({("/a", "write"): 10.0})
    agg, single = _run(_f("aggregators-per-node", 9.0, files=("/a",), direction="write"),
                       _f("single-posix-writer", 6.0, [("/a", "write")]), pools=pools)
    assert agg.rule.experiment and agg.cost_s is None and agg.owned == []
    assert agg.estimate_s == 9.0 and "to be proven" in agg.cost_text()
    assert single.cost_s == pytest.approx(6.0) and single.same_time_as == []
    items = _top_fix_items([agg, single])
    assert [(i["rule_id"], i["experiment"]) for i in items] == [
        ("single-posix-writer", False), ("aggregators-per-node", True)]


def test_net_costs_together_stay_within_the_slowest_ranks_io_time() -> None:
    pools = _pools({("/r0", "meta"): 12.0, ("/r1", "write"): 150.0}, {"/r0": 0, "/r1": 1})
    close, tiny = _run(_f("slow-close", 12.0, [("/r0", "meta")]),
                       _f("tiny-file-slow", 150.0, [("/r1", "write")]),
                       pools=pools, io_time_s=150.0)
    assert tiny.cost_s == pytest.approx(150.0)
    assert close.cost_s == pytest.approx(0.0) and close.beside == ["tiny-file-slow"]
    assert "not in addition" in close.cost_text()


def test_information_only_and_costless_findings_claim_nothing() -> None:
    info = _f("stripe-small-files", 10.0, [("/a", "*")])
    assert info.rule.severity == "info"
    pools = _pools({("/a", "write"): 5.0})
    _, small = _run(info, _f("small-requests", 5.0, files=("/a",), direction="write"),
                    pools=pools)
    assert small.same_time_as == [] and small.cost_s == pytest.approx(5.0)
    _, small = _run(_f("slow-close", 0.0, [("/a", "*")]),
                    _f("small-requests", 5.0, files=("/a",), direction="write"), pools=pools)
    assert small.same_time_as == [] and small.cost_s == pytest.approx(5.0)


def test_without_a_model_each_file_is_its_largest_claim() -> None:
    rmw, small = _run(_f("read-modify-write", 9.0, [("/a", "read")]),
                      _f("small-requests", 4.0, files=("/a",), direction="read"))
    assert rmw.cost_s == pytest.approx(9.0)
    assert small.cost_s == pytest.approx(0.0) and small.same_time_as == ["read-modify-write"]


def test_every_rule_has_a_tier_and_experiments_are_data() -> None:
    from iolab.diagnose.attribution import TIERS
    from iolab.diagnose.rules import ATTRIBUTION

    assert set(ATTRIBUTION) <= set(RULES)
    for rule in RULES.values():
        assert rule.tier in TIERS
        assert rule.experiment == ATTRIBUTION.get(rule.id, ("", False))[1]


DARSHAN35 = Path(__file__).resolve().parent / "darshan35"


@pytest.mark.usefixtures("darshan_available")
@pytest.mark.parametrize("name", sorted(p.name for p in DARSHAN35.glob("*.darshan")))
def test_pools_as_columns_attribute_as_the_dict(name: str) -> None:
    """expected the attribution of a real log's findings the same, to the last bit, from
    time_pools' columns (PoolTable) as from the dict of every (file, operation) the same
    pools make; was only the dict (192,000 keys walked in Python on a 64,000-file log)."""
    from iolab.diagnose.attribution import time_pools
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose
    from iolab.model.job import build_model
    from iolab.sources.darshan import load_darshan_log

    model = build_model([load_darshan_log(DARSHAN35 / name)])
    findings = diagnose(model, Thresholds()).findings
    pools = time_pools(model)
    assert pools.table is not None
    as_dict = TimePools(dict(pools.seconds), dict(pools.rank))
    seen = []
    for p in (pools, as_dict):
        attribute_time(findings, ORDER, p, model.metrics.io_time_s)
        seen.append([(f.key, f.net_s, f.owned, f.same_time_as, f.beside, f.estimate_low_s)
                     for f in findings])
    assert seen[0] == seen[1]
    assert all(f.net_s is not None for f in findings if not f.rule.experiment
               and f.rule.severity != "info" and not f.rule.overview and not f.hit.cost_bound
               and (f.gross_s or 0.0) > 0)


@pytest.mark.usefixtures("darshan_available")
@pytest.mark.parametrize("name", sorted(p.name for p in DARSHAN35.glob("*.darshan")))
def test_claims_as_file_indices_attribute_as_the_pairs(name: str) -> None:
    """expected the attribution of a real log's findings the same, to the last bit, from
    claims kept as file indices (FileClaims) and owned seconds kept as arrays
    (OwnedSeconds) as from the (file, operation) pairs they stand for; was only the pairs
    (64,000 tuples made and looked up by name per finding: ~0.4 s on a 64,000-file log)."""
    from iolab.diagnose.attribution import time_pools
    from iolab.diagnose.config import Thresholds
    from iolab.diagnose.report import diagnose
    from iolab.diagnose.rules.base import FileClaims
    from iolab.model.job import build_model
    from iolab.sources.darshan import load_darshan_log

    model = build_model([load_darshan_log(DARSHAN35 / name)])
    findings = diagnose(model, Thresholds()).findings
    arrays = [f for f in findings if isinstance(f.hit.claims, FileClaims)]
    seen = []
    for as_pairs in (False, True):
        if as_pairs:
            for f in arrays:
                f.hit.claims = list(f.hit.claims or [])
        attribute_time(findings, ORDER, time_pools(model), model.metrics.io_time_s)
        seen.append([(f.key, f.net_s, list(f.owned), f.same_time_as, f.beside,
                      f.estimate_low_s) for f in findings])
    assert seen[0] == seen[1]


def test_file_claims_and_owned_seconds_read_as_their_pairs() -> None:
    """expected a FileClaims to read as its (file, operation) pairs, blocks in order, and an
    OwnedSeconds as its (file, operation, seconds), scaled ones without those that become
    0; was: no such arrays (the pairs were always made)."""
    import numpy as np

    from iolab.diagnose.attribution import OPERATIONS
    from iolab.diagnose.rules.base import FileClaims, OwnedSeconds

    paths = ["/a", "/b", "/c"]
    c = FileClaims(paths, [("read", np.array([2, 0])), ("meta", np.array([], dtype=int)),
                           ("*", np.array([1]))])
    want = [("/c", "read"), ("/a", "read"), ("/b", "*")]
    assert len(c) == 3 and c == want and list(c) == want and c[1] == ("/a", "read")
    assert c.files().tolist() == [2, 0, 1] and c != want[:2]
    assert not FileClaims(paths, []) and FileClaims(paths, []) == []
    own = OwnedSeconds(paths, OPERATIONS, np.array([2 * 5 + 1, 0 * 5 + 3]),
                       np.array([1.5, 5e-324]))
    assert own == [("/c", "write", 1.5), ("/a", "wait", 5e-324)]
    assert own.scaled(0.5) == [("/c", "write", 0.75)] and len(own.scaled(0.0)) == 0


def test_keys_number_a_few_names_as_many() -> None:
    """expected a few names (a finding's evidence files) numbered by a scan of the known
    names exactly as many are by the dict of them: known names by their place, new ones
    after, once each, in the order they first appear; was: a dict of every known name made
    for ten evidence files (30 ms on a 64,000-file log)."""
    import random

    from iolab.diagnose.attribution import _Keys

    rng = random.Random(31)
    known = [f"/d/f{i}" for i in range(40)]
    for _ in range(300):
        names = [rng.choice(known) if rng.random() < 0.6 else f"/new/{rng.randint(0, 5)}"
                 for _ in range(rng.randint(0, 16))]
        few, many = _Keys(known), _Keys(known)
        many.index  # noqa: B018 - the dict made first: the look-up by it
        assert few.files(names).tolist() == many.files(names).tolist()
        assert few.paths == many.paths
