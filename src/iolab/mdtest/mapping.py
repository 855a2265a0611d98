"""One mdtest line as the engine's metadata run (``iolab bench --metadata``), with mdtest's
meaning, or one line saying why not and what is nearest.

What each option becomes is in :mod:`iolab.mdtest.table`; this module applies it, with the
checks mdtest makes itself (``md_validate_tests``) and the ones the engine needs: one
directory (``-z 0``), every phase of a kind together, reading back what was written.
Everything is checked before anything runs, is created or stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from iolab.errors import UsageError
from iolab.ior.parse import IorTest
from iolab.mdtest import table

# The engine's phases in mdtest's order, with mdtest's names (its SUMMARY table).
DIR_PHASES = (("dir_create", "Directory creation"), ("dir_stat", "Directory stat"),
              ("dir_rename", "Directory rename"), ("dir_remove", "Directory removal"))
FILE_PHASES = (("create", "File creation"), ("stat", "File stat"),
               ("open_read", "File read"), ("remove", "File removal"))
_PHASE_LETTERS = (("create_only", "-C"), ("stat_only", "-T"), ("read_only", "-E"),
                  ("remove_only", "-r"))
TREE_NAME = "mdtest_tree"  # the engine's files go to DIR/mdtest_tree.md/


@dataclass(frozen=True)
class MdtestRun:
    """What the line runs: per rank ``items`` files of ``write_bytes`` (and/or ``items``
    directories) in ``directory``; ``phases`` is files, dirs or both."""

    items: int
    write_bytes: int
    unique_dir: bool
    directory: str
    iterations: int
    phases: str = "files"

    def summary_phases(self) -> tuple[tuple[str, str], ...]:
        """The rows of mdtest's SUMMARY table, in its order."""
        return {"files": FILE_PHASES, "dirs": DIR_PHASES}.get(self.phases,
                                                              DIR_PHASES + FILE_PHASES)

    def items_text(self) -> str:
        return {"files": "files", "dirs": "directories"}.get(self.phases, "files/directories")

    def engine_args(self, verify: bool) -> list[str]:
        """``iolab bench`` options. The preset is ``easy`` only as a name: its size and
        directory are set explicitly (``--md-size 0`` keeps 0 bytes; ``hard`` would read it
        as its 3901)."""
        args = ["--metadata", "easy", "--md-files", str(self.items),
                "--md-size", str(self.write_bytes),
                "--md-dir", "unique" if self.unique_dir else "shared",
                "--md-phases", self.phases,
                "--reps", str(self.iterations),
                "--path", os.path.join(self.directory, TREE_NAME)]
        return args + (["--verify"] if verify else [])


def refusal(opt: table.IorOption, test: IorTest) -> UsageError:
    said = test.spelled.get(opt.key, opt.spelling)
    return UsageError(f"mdtest {said} ({opt.key}): {opt.note}; nearest in iolab: "
                      f"{opt.nearest}")


def _said(test: IorTest, key: str) -> str:
    opt = table.by_key()[key]
    return test.spelled.get(key, opt.spelling)


def plan(test: IorTest, ranks: int) -> MdtestRun:
    """The run mdtest's line makes on ``ranks`` ranks, or the UsageError saying why not."""
    p = test.params
    for key, value in p.items():
        opt = table.by_key()[key]
        if opt.how == "refused" and value != opt.default:
            raise refusal(opt, test)
    _check_api(str(p["api"]))
    phases = _phase_kinds(test)
    _check_task_counts(test, ranks)
    items = _items(test)
    _check_phases(test, phases, items)
    write, read = int(p["write_bytes"]), int(p["read_bytes"])
    if write < 0 or read < 0:
        raise UsageError(f"mdtest -w {write} -e {read}: byte counts cannot be negative")
    if read != write:
        raise UsageError(
            f"mdtest -w {write} -e {read}: the engine reads back exactly the bytes each file "
            f"was written with; nearest in iolab: -w {write} -e {write}")
    if p["verify_read"] and read <= 0:
        raise UsageError(f"mdtest {_said(test, 'verify_read')}: verifying needs bytes to "
                         "read (mdtest refuses it too); add -w N -e N")
    if int(p["iterations"]) < 1:
        raise UsageError(f"mdtest -i {p['iterations']}: iterations must be at least 1")
    path = str(p["path"])
    if "@" in path:
        raise UsageError(f"mdtest -d {path}: several test directories ('@') are not in the "
                         "engine; nearest in iolab: one -d DIR")
    if not path:
        raise UsageError("mdtest -d: the test directory is empty; give -d DIR")
    return MdtestRun(items, write, bool(p["unique_dir_per_task"]), path, int(p["iterations"]),
                     phases)


def _check_api(api: str) -> None:
    name = api.upper()
    if name in table.APIS:
        return
    missing = {k.upper(): v for k, v in table.MISSING_APIS.items()}
    if name in missing:
        raise UsageError(f"mdtest -a {api}: the engine's metadata run has no {api} backend; "
                         f"nearest in iolab: {missing[name]}")
    raise UsageError(f"mdtest -a {api}: not an mdtest API; this mdtest takes POSIX|DUMMY")


def _phase_kinds(test: IorTest) -> str:
    """mdtest: -F files, -D directories, neither (or both) both."""
    p = test.params
    if int(p["depth"]) != 0:
        raise UsageError(f"mdtest {_said(test, 'depth')} {p['depth']}: a directory tree is "
                         "not in the engine yet; nearest in iolab: -z 0 (one directory, or "
                         "one per rank with -u)")
    if p["files_only"] and not p["dirs_only"]:
        return "files"
    return "dirs" if p["dirs_only"] and not p["files_only"] else "both"


def _check_phases(test: IorTest, phases: str, items: int) -> None:
    """mdtest runs every phase unless -C/-T/-E/-r/-U pick some; the engine runs all the
    phases of a kind together (with directories, the rename too: -U)."""
    p = test.params
    chosen = [letter for key, letter in _PHASE_LETTERS if p[key]]
    if not chosen and p["rename_dirs"]:
        raise UsageError("mdtest -U alone runs only the directory rename phase; the engine "
                         "renames between the directory stat and removal of the same run; "
                         "nearest in iolab: mdtest -D without -U (every directory phase)")
    if chosen and len(chosen) < len(_PHASE_LETTERS):
        raise UsageError(
            f"mdtest {' '.join(chosen)}: the engine runs create, stat, read and remove "
            "together (items are never left behind between runs); nearest in iolab: "
            "-C -T -E -r (all four, as without any of them)")
    if chosen and phases != "files" and not p["rename_dirs"] and items > 1:
        raise UsageError(
            "mdtest -C -T -E -r without -U skips the directory rename phase; the engine "
            "renames whenever it runs directory phases; nearest in iolab: add -U (or -F)")


def _check_task_counts(test: IorTest, ranks: int) -> None:
    """mdtest's -f/-l/-s series: one test per task count; only the launched ranks run."""
    p = test.params
    first, last, stride = int(p["first"]), int(p["last"]), int(p["stride"])
    if last == 0:
        return  # mdtest: first = last = all ranks
    if stride < 1:
        raise UsageError(f"mdtest -s {stride}: the task-count stride must be at least 1")
    if first > last or last > ranks:
        raise UsageError(f"mdtest -f {first} -l {last}: not a range of task counts within the "
                         f"{ranks} launched rank(s) (mdtest refuses it too)")
    counts = list(range(first, min(last, ranks) + 1, stride))
    if counts != [ranks]:
        raise UsageError(
            f"mdtest -f {first} -l {last} -s {stride}: mdtest runs a test per task count "
            f"{counts}; the engine runs one test on the {ranks} launched rank(s); nearest in "
            "iolab: one 'iolab mdtest --np N' per count")


def _items(test: IorTest) -> int:
    p = test.params
    items, per_dir = int(p["items"]), int(p["items_per_dir"])
    if per_dir > 0:
        if items == 0:
            items = per_dir  # mdtest: items = items_per_dir x the tree's directories (one)
        elif items != per_dir:
            raise UsageError(f"mdtest -n {items} -I {per_dir}: more items than one directory "
                             "holds needs mdtest's directory loops, not in the engine; "
                             f"nearest in iolab: -n {items} without -I")
        elif p["unique_dir_per_task"]:
            raise UsageError("mdtest -n with -I and -u: mdtest refuses it too ('only specify "
                             "the number of items or the number of items per directory'); "
                             "give -n N")
    if items <= 0:
        raise UsageError("mdtest: no items to create; give -n N (files per rank)")
    return items
