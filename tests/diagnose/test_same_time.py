"""Each second of a file's time goes to one finding (report.attribute_time): the costliest
finding claiming it; a finding whose claims are all held by costlier ones says it is the
same time, takes no second HIGH and buys nothing in the top fixes. The real logs are in
test_darshan35_logs.py; these cases pin the rules of the claims themselves."""

from __future__ import annotations

from iolab.diagnose.report import _top_fix_items, attribute_time
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


def _run(*fs: Finding) -> list[Finding]:
    attribute_time(list(fs), ORDER)
    return list(fs)


def test_all_of_a_file_covers_its_writes_costliest_first() -> None:
    close, small = _run(_f("small-requests", 5.0, files=("/a",), direction="write"),
                        _f("slow-close", 10.0, [("/a", "*")]))[::-1]
    assert close.same_time_as == [] and close.severity == "high"
    assert small.same_time_as == ["slow-close"] and small.severity == "warn"
    assert "the same time as slow-close, not in addition" in small.cost_text()
    items = _top_fix_items([close, small])
    assert [i["rule_id"] for i in items] == ["slow-close"]


def test_waiting_does_not_cover_the_writes_but_writes_cover_waiting() -> None:
    tiny, cb, small = _run(_f("tiny-collective-calls", 10.0, [("/a", "wait")]),
                           _f("collective-buffering", 5.0, files=("/a",), direction="write"),
                           _f("small-requests", 3.0, files=("/a",), direction="write"))
    assert tiny.same_time_as == [] and cb.same_time_as == []  # different seconds
    assert small.same_time_as == ["collective-buffering/write"]
    wr, skew = _run(_f("single-posix-writer", 10.0, [("/b", "write")]),
                    _f("mpiio-time-skew", 4.0, [("/b", "wait")]))
    assert skew.same_time_as == ["single-posix-writer"]


def test_every_kind_held_covers_all_of_the_file() -> None:
    *_, close = _run(_f("read-modify-write", 9.0, [("/a", "read")]),
                     _f("write-amplification", 8.0, [("/a", "write")]),
                     _f("frequent-open-close", 7.0, [("/a", "meta")]),
                     _f("slow-close", 2.0, [("/a", "*")]))
    assert close.same_time_as == ["read-modify-write", "write-amplification",
                                  "frequent-open-close"]
    *_, close = _run(_f("read-modify-write", 9.0, [("/a", "read")]),
                     _f("slow-close", 2.0, [("/a", "*")]))
    assert close.same_time_as == []  # its writes and metadata are nobody's yet


def test_a_finding_with_time_of_its_own_keeps_it() -> None:
    a, b = _run(_f("write-amplification", 9.0, [("/a", "write")]),
                _f("single-posix-writer", 5.0, [("/a", "write"), ("/b", "write")]))
    assert b.same_time_as == [] and b.severity == "high"
    c = _run(_f("write-amplification", 9.0, [("/a", "write")]), b,
             _f("small-requests", 1.0, [("/b", "write")], direction="write"))[2]
    assert c.same_time_as == ["single-posix-writer"]


def test_information_only_and_costless_findings_claim_nothing() -> None:
    info = _f("stripe-small-files", 10.0, [("/a", "*")])
    assert info.rule.severity == "info"
    _, small = _run(info, _f("small-requests", 5.0, files=("/a",), direction="write"))
    assert small.same_time_as == []
    _, small = _run(_f("slow-close", 0.0, [("/a", "*")]),
                    _f("small-requests", 5.0, files=("/a",), direction="write"))
    assert small.same_time_as == []
