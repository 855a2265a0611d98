"""Read an mdtest command line as mdtest reads it.

mdtest and IOR 4 share IOR's option parser (``option.c``), so the words are read by
:func:`iolab.ior.parse.parse_words` with mdtest's option table: letters group (``-Fu`` is
``-F -u``, ``-vvv`` counts three), a value follows its letter (``-n100``, ``-n=100``) or is the
next word, numbers take IOR's k/m/g suffixes (``-n 1k``). A word mdtest would not take is
one line of bad input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.ior.parse import Dialect, IorTest, parse_words
from iolab.mdtest import table

MDTEST = Dialect("mdtest", "mdtest")


@dataclass
class MdtestLine:
    test: IorTest  # mdtest's parameters by its variable names, and how each was spelled
    help: bool = False


def parse_command_line(argv: Sequence[str]) -> MdtestLine:
    test = IorTest(params=table.defaults())
    wants_help = parse_words(argv, test, table.by_letter(), table.by_long(), MDTEST)
    return MdtestLine(test, wants_help)
