"""mdtest's full option list (``mdtest -h`` of a scratch IOR 4 build, kept in
mdtest_help.txt) against iolab's table: every option is implemented or refused with a named
iolab equivalent, from mdtest's defaults, and docs/mdtest.md lists them all."""

from __future__ import annotations

import re

import pytest
from mdtest_helpers import HERE
from tool_helpers import real_help_text

from iolab.mdtest import table
from iolab.mdtest.parse import parse_command_line

HELP = (HERE / "mdtest_help.txt").read_text()


def help_options(text: str = HELP) -> list[tuple[str, str | None]]:
    """(spelling, default shown) of every option in the help: -X, --long."""
    found = []
    for line in text.splitlines():
        m = re.match(r"  (-\w)(?:, --([\w.-]+))?(?:=(\S+?))?\s", line + " ")
        if m:
            found.append((m.group(1), m.group(3)))
            if m.group(2):
                found.append((f"--{m.group(2)}", m.group(3)))
            continue
        m = re.match(r"  --([\w.-]+?)(?:=(\S+?))?\s", line + " ")
        if m:
            found.append((f"--{m.group(1)}", m.group(2)))
    # "--saveRankPerformanceDetails=STRINGSave ...": mdtest's help runs into its text
    return [(s, None if d and d.startswith("STRING") else d) for s, d in found]


def lookup(spelling: str) -> table.IorOption | None:
    if spelling.startswith("--"):
        return table.by_long().get(spelling[2:])
    return table.by_letter().get(spelling[1:])


def test_the_help_file_lists_mdtests_options() -> None:
    spellings = {s for s, _ in help_options()}
    assert len(spellings) > 70
    assert {"-n", "-F", "-u", "-z", "--verify-read", "--saveRankPerformanceDetails",
            "--posix.odirect", "--mmap.madv_pattern", "--showRankStatistics"} <= spellings


@pytest.mark.parametrize("spelling", sorted({s for s, _ in help_options()}))
def test_every_mdtest_option_is_implemented_or_refused_with_an_equivalent(spelling: str
                                                                          ) -> None:
    opt = lookup(spelling)
    assert opt is not None, f"{spelling} is in 'mdtest -h' but not in iolab.mdtest.table"
    assert opt.how in ("engine", "output", "refused")
    assert opt.note.strip()
    if opt.how == "refused":
        assert opt.nearest.strip(), f"{spelling} is refused without a nearest equivalent"


def test_every_api_of_mdtest_maps_or_is_refused_with_an_equivalent() -> None:
    m = re.search(r"-a=STRING\s+API for I/O \[([^\]]+)\]", HELP)
    assert m
    for api in m.group(1).split("|"):
        assert api in table.APIS or api in table.MISSING_APIS, api


@pytest.mark.parametrize("spelling,shown", [(s, d) for s, d in help_options()
                                            if d not in (None, "STRING")])
def test_iolab_starts_from_mdtests_defaults(spelling: str, shown: str) -> None:
    opt = lookup(spelling)
    assert opt is not None
    assert str(parse_command_line([]).test.params[opt.key]) == shown, spelling


def test_docs_list_every_option_of_the_table() -> None:
    """docs/mdtest.md's option table holds every spelling of iolab.mdtest.table, and the
    nearest equivalent of each refused one, so the page cannot fall behind the code."""
    doc = (HERE.parent.parent / "docs" / "mdtest.md").read_text()
    for opt in table.OPTIONS:
        assert f"`{opt.spelling}`" in doc, opt.spelling
        if opt.how == "refused":
            assert opt.nearest.replace("|", "/") in doc, opt.key


def test_the_help_file_holds_every_option_of_the_real_mdtest() -> None:
    """expected every option of the scratch build's own 'mdtest -h' (IOLAB_MDTEST) in the kept
    help file the tests above check, so an option a newer build adds is checked too / was
    checked only against the kept file (a newer mdtest's options unseen)."""
    text = real_help_text("IOLAB_MDTEST", "mdtest (hpc/ior; IOLAB_MDTEST: its src/mdtest)")
    theirs = {s for s, _ in help_options(text)}
    assert len(theirs) > 50, text
    kept = {s for s, _ in help_options()}
    assert theirs <= kept, sorted(theirs - kept)
