"""IOR 4's full option list (``ior -h`` of a scratch build, kept in ior4_help.txt) against
iolab's table: every option is implemented or refused with a named iolab equivalent."""

from __future__ import annotations

import re

import pytest
from ior_helpers import HERE
from tool_helpers import real_help_text

from iolab.ior import table
from iolab.ior.parse import parse_command_line

HELP = (HERE / "ior4_help.txt").read_text()


def help_options(text: str = HELP) -> list[tuple[str, str | None]]:
    """(spelling, default shown) of every option in the help: -X, --long, -O key."""
    found = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"\s+-O (\w+)=", line)
        if m:
            found.append((f"-O {m.group(1)}", None))
            continue
        m = re.match(r"\s+(-\w)(?:, --([\w.-]+))?(?:=(\S+))?\s", line + " ")
        if m:
            found.append((m.group(1), m.group(3)))
            if m.group(2):
                found.append((f"--{m.group(2)}", m.group(3)))
            continue
        m = re.match(r"\s+--([\w.-]+)(?:=(\S+))?\s", line + " ")
        if m:
            found.append((f"--{m.group(1)}", m.group(2)))
    return found


def lookup(spelling: str) -> table.IorOption | None:
    if spelling.startswith("-O "):
        return table.by_key().get(spelling[3:].lower())
    if spelling.startswith("--"):
        return table.by_long().get(spelling[2:])
    return table.by_letter().get(spelling[1:])


def test_the_help_file_lists_ior4s_options() -> None:
    spellings = {s for s, _ in help_options()}
    assert len(spellings) > 70
    assert {"-z", "-O summaryFormat", "--posix.odirect", "--hdf5.setAlignment",
            "--ncmpi.hintsFileName", "--mpiio.useFileView", "--collective"} <= spellings


@pytest.mark.parametrize("spelling", sorted({s for s, _ in help_options()}))
def test_every_ior4_option_is_implemented_or_refused_with_an_equivalent(spelling: str) -> None:
    opt = lookup(spelling)
    assert opt is not None, f"{spelling} is in 'ior -h' but not in iolab.ior.table"
    assert opt.how in ("engine", "output", "refused")
    assert opt.note.strip()
    if opt.how == "refused":
        assert opt.nearest.strip(), f"{spelling} is refused without a nearest iolab equivalent"


def test_every_api_of_ior4_maps_or_is_refused_with_an_equivalent() -> None:
    m = re.search(r"API for I/O \[([^\]]+)\]", HELP)
    assert m
    for api in m.group(1).split("|"):
        assert api in table.APIS or api in table.MISSING_APIS, api


@pytest.mark.parametrize("spelling,shown", [(s, d) for s, d in help_options()
                                            if d not in (None, "STRING")])
def test_iolab_starts_from_ior4s_defaults(spelling: str, shown: str) -> None:
    """expected IOR's defaults (-t 256k -b 1m -s 1 ...) / was bench's (-t 1m -b 4m)."""
    opt = lookup(spelling)
    assert opt is not None
    test = parse_command_line([]).tests[0]
    assert str(test.params[opt.key]) == shown, spelling


def test_docs_list_every_option_of_the_table() -> None:
    """docs/ior.md's option table is generated from iolab.ior.table: every spelling and
    parameter is there, so the page cannot fall behind the code."""
    doc = (HERE.parent.parent / "docs" / "ior.md").read_text()
    for opt in (*table.OPTIONS, *table.DIRECTIVES):
        assert f"`{opt.key}`" in doc, opt.key
        if opt.how == "refused":
            assert opt.nearest.replace("|", "/") in doc, opt.key


def test_the_help_file_holds_every_option_of_the_real_ior() -> None:
    """expected every option of the scratch build's own 'ior -h' (IOLAB_IOR) in the kept
    help file the tests above check, so an option a newer build adds is checked too / was
    checked only against the kept file (a newer ior's options unseen)."""
    text = real_help_text("IOLAB_IOR", "IOR (hpc/ior; IOLAB_IOR: its src/ior)")
    theirs = {s for s, _ in help_options(text)}
    assert len(theirs) > 50, text
    kept = {s for s, _ in help_options()}
    assert theirs <= kept, sorted(theirs - kept)
