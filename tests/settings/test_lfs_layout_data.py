"""A Lustre layout as settings of the catalogue's lfs rows, and the one lfs writer reading them.

Expected / was: ``lfs_changes`` gives a layout (plain, or PFL components) as
``SettingChange`` rows that ``lfs_words_of`` writes as the same ``lfs setstripe`` words
``lfs_setstripe`` writes from numbers, and refuses values outside the rows' domains / was:
no data form of a layout (diagnose's scripts were text only).
"""

from __future__ import annotations

import pytest

from iolab.settings.apply import lfs_changes, lfs_setstripe, lfs_words_of
from iolab.settings.catalogue import parse, setting

KiB, MiB = 1 << 10, 1 << 20


@pytest.mark.parametrize("count,size", [(1, MiB), (24, 4 * MiB), (-1, 64 * KiB), (8, None)])
def test_plain_layout_round_trips(count: int, size: int | None) -> None:
    """expected: the words from the data are those from the numbers / was: no data form."""
    rows = lfs_changes(count, size, paths=("/p/f",), file="x.lfs.sh")
    assert all(r.library == "lfs" and r.paths == ("/p/f",) and r.file == "x.lfs.sh"
               for r in rows)
    assert all(parse(setting(r.name), r.value) == r.value for r in rows)  # type: ignore[arg-type]
    assert lfs_words_of(rows, "/p/f") == lfs_setstripe("/p/f", count, size)


def test_pfl_components_round_trip() -> None:
    """expected: each component's count and size follow its end, in order / was: no data."""
    comps = [(4 * MiB, 1, MiB), (256 * MiB, 4, None), (-1, 16, 4 * MiB)]
    rows = lfs_changes(None, None, comps)
    assert [r.name for r in rows][:3] == ["lfs.component_end", "lfs.stripe_count",
                                          "lfs.stripe_size"]
    words = lfs_words_of(rows, "/p/dir")
    assert words == lfs_setstripe("/p/dir", components=comps)
    assert words == ["lfs", "setstripe", "-E", str(4 * MiB), "-c", "1", "-S", "1M",
                     "-E", str(256 * MiB), "-c", "4", "-E", "-1", "-c", "16", "-S", "4M",
                     "/p/dir"]


def test_count_word_replaces_the_plain_count_only() -> None:
    """expected: a script's "$c" stands for the count in the line, the data keeps 8."""
    rows = lfs_changes(8, MiB)
    assert lfs_words_of(rows, "f", '"$c"') == ["lfs", "setstripe", "-c", '"$c"', "-S", "1M",
                                                "f"]
    assert [r.value for r in rows] == ["8", str(MiB)]


@pytest.mark.parametrize("count,size,comps", [
    (0, MiB, ()), (2, 4 * KiB, ()), (2, MiB + 1, ()), (None, None, [(1000, 1, MiB)]),
    (2, MiB, [(-1, 4, MiB)])])
def test_layout_outside_the_domains_is_refused(count, size, comps) -> None:
    """expected: ValueError (a stripe size off 64 KiB, count 0, a PFL end off 64 KiB, both
    forms at once) / was: nothing to check."""
    with pytest.raises(ValueError):
        lfs_changes(count, size, comps)


def test_reports_show_each_layout_once() -> None:
    """expected: the text/HTML "changes" name each distinct layout once, with its number of
    paths, sizes in binary units / was: nothing for a Lustre fix (no lfs data), and one
    entry per row and value if listed as hints are."""
    from iolab.settings.change import describe

    rows = [*lfs_changes(8, MiB, paths=("/s/a",)), *lfs_changes(8, MiB, paths=("/s/new",)),
            *lfs_changes(24, 4 * MiB, paths=("/s/b",)),
            *lfs_changes(None, None, [(-1, 4, None)], paths=("/s/pfl",))]
    assert describe(rows, []) == [
        "Lustre stripe count 8, stripe size 1 MiB (2 paths)",
        "Lustre stripe count 24, stripe size 4 MiB (1 path)",
        "Lustre component to the end of the file, stripe count 4 (1 path)"]
