"""IOR's ``-O stoneWallingStatusFile=F``: a write run stores how far it got, a later read run
reads that far and no further.

As IOR 4 (utilities.c ``StoreStoneWallingIterations`` / ``ReadStoneWallingIterations``,
ior.c, ior-output.c ``ShowTestEnd``):

- at the end of a test with ``-O stoneWallingWearOut=1`` (which needs ``-D N``), the file
  gets the write's pairs accessed (transfers per rank after the wear-out: the furthest rank's
  count) of the first repetition, written ``"%lld"``, no newline, replacing what was there;
- each read phase of a test reads the first number in the file and each rank reads that many
  transfers, then stops (also without ``-D``); a file that cannot be read is IOR's warning
  and a read of everything.

The file is read just before each test runs and written just after it: IOR reads it in the
read phase, but it only changes at a test's end, so a script's later test sees an earlier
test's count, as in IOR. The format is IOR's, so either tool reads the other's file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from iolab import cli_common
from iolab.errors import UsageError
from iolab.ior.parse import IorTest
from iolab.runs.engine_doc import from_json

_KEY = "stoneWallingStatusFile"
_FIRST_NUMBER = re.compile(r"\s*([+-]?\d+)")  # what fscanf("%lld") takes


def status_file(test: IorTest) -> str:
    """The test's status file name, or "" when it has none."""
    return str(test.params.get(_KEY) or "")


def check(test: IorTest) -> None:
    """IOR's own refusals of the status file (ValidateTests), and ours: a read-only test with
    wear-out would replace the write's count by 0 (IOR stores an unwritten count), losing
    the number the file was kept for."""
    name = status_file(test)
    if not name:
        return
    p = test.params
    said = test.spelled.get(_KEY, f"-O {_KEY}={name}")
    if not p["keepFile"]:
        raise UsageError(f"IOR {said} without -k: IOR refuses it too (the status file is for "
                         "a write run and a later read run of the same files); add -k")
    if p["writeFile"] and not p["stoneWallingWearOut"]:
        raise UsageError(f"IOR {said} with -w: IOR refuses it without wear-out (the count "
                         "is the worn-out one); add -O stoneWallingWearOut=1 with -D N")
    if p["stoneWallingWearOut"] and not p["writeFile"]:
        raise UsageError(f"IOR {said} with -O stoneWallingWearOut=1 and no -w: IOR would "
                         f"replace the count in {name} by 0 (nothing was written); drop "
                         "-O stoneWallingWearOut=1 from the read line")
    if stores(test):
        cli_common.check_output_file(name, f"-O {_KEY}", [str(p["testFileName"])])


def stores(test: IorTest) -> bool:
    """Whether the test writes its count into the status file at its end."""
    return bool(status_file(test)) and bool(test.params["stoneWallingWearOut"])


def reads(test: IorTest) -> bool:
    p = test.params
    return bool(status_file(test)) and bool(p["readFile"] or p["checkRead"])


def read_args(test: IorTest) -> tuple[list[str], str | None]:
    """(engine options, warning or None) for the test's reads: ``--read-xfers N`` from the
    status file as it is now; 0 (all) with IOR's warning when it cannot be read."""
    if not reads(test):
        return [], None
    name = status_file(test)
    try:
        match = _FIRST_NUMBER.match(Path(name).read_text(errors="replace"))
    except OSError:
        match = None
    if match is None or int(match.group(1)) < 0:
        return ["--read-xfers", "0"], (f"{name}: could not read back the stonewalling status "
                                       "from the file (IOR's warning); reading everything")
    return ["--read-xfers", match.group(1).lstrip("+")], None


def pairs_written(doc: dict[str, Any]) -> int:
    """The first repetition's write pairs (transfers per rank) from an engine run document:
    the stonewall's furthest count, as IOR's pairs_accessed; 0 when the run wrote nothing."""
    reps = from_json(doc).repetitions
    for phase in reps[0].phases if reps else ():
        if phase.op == "write":
            return int((phase.stonewall or {}).get("xfers_max", 0))
    return 0


def store(test: IorTest, doc: dict[str, Any]) -> None:
    """Write the count as IOR does (rank 0's fprintf "%lld", the file replaced)."""
    if not stores(test):
        return
    # the project's output write: through a temporary file, so a failed write leaves the
    # count a later read run would read, not an empty file
    cli_common.write_output(Path(status_file(test)), str(pairs_written(doc)),
                            opt=f"IOR -O {_KEY}", verb="ior")
