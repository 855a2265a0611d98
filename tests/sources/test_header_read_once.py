"""A Darshan log's header read once for its checks (issue 31: triage's per-log CPU).

Expected: _check_header reads the first bytes once and the region check reads its 3.41 header
from them: the same regions found past the end as reading the file again, for every 3.41 log
of the corpus and for copies cut short at several places / was: the file opened a second time
for the region map (and stat'ed a second time for its size)."""

from __future__ import annotations

import shutil
from pathlib import Path

import corpus
import pytest

from iolab.errors import UsageError
from iolab.sources.darshan import _HEADER_341, _check_header, cut_regions


def _logs_341() -> list[Path]:
    logs = [p for p in corpus.REAL_LOGS + corpus.GENERATED_LOGS
            if p.read_bytes()[:4] == b"3.41"]
    if not logs:
        pytest.skip(corpus.REAL_MISSING)
    return logs


def test_regions_from_the_given_header_are_those_read_from_the_file() -> None:
    for path in _logs_341():
        head = path.read_bytes()[:_HEADER_341]
        assert cut_regions(path, head=head) == cut_regions(path), path


def test_a_cut_log_is_refused_or_kept_as_when_the_header_was_read_twice(
        tmp_path: Path) -> None:
    whole = max(_logs_341(), key=lambda p: p.stat().st_size)
    data = whole.read_bytes()
    refused = 0
    for size in (_HEADER_341 - 1, _HEADER_341 + 8, len(data) // 2, len(data) - 1):
        cut = tmp_path / f"cut{size}.darshan"
        shutil.copyfile(whole, cut)
        with open(cut, "r+b") as fh:
            fh.truncate(size)
        try:
            expected: str | None = None
            regions = cut_regions(cut)  # the file read on its own, as before
        except UsageError as exc:
            expected = str(exc)
        else:
            assert regions, f"a log cut at {size} of {len(data)} bytes shows no cut region"
        try:
            _check_header(cut)
            got = None
        except UsageError as exc:
            got = str(exc)
            refused += 1
        if expected is not None:  # the header itself cut: the same line
            assert got == expected
        else:
            assert got is None or "truncated" in got or "damaged" in got
    assert refused, "no cut copy refused: the test proves nothing"
