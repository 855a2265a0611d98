"""One mdtest line as the engine's metadata run (``iolab bench --metadata``), with mdtest's
meaning, or one line saying why not and what is nearest.

What each option becomes is in :mod:`iolab.mdtest.table`; this module applies it, with the
checks mdtest makes itself (``md_validate_tests``) and the ones the engine needs: one test
directory per iteration (or, -n beyond -I without a tree, mdtest's directory loops), the
phases mdtest's ``-C -T -E -U -r`` pick (any of them, in mdtest's order: the engine's
``--md-only``; the items stay for a later line unless ``-r``), reading back what was written.
The engine lays the items out with mdtest's names (``--md-layout mdtest``:
``DIR/test-dir.0-0/mdtest_tree.0/...``), trees included, so scripts and find see what mdtest
makes. Everything is checked before anything runs, is created or stored.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from iolab.errors import UsageError
from iolab.ior.parse import IorTest
from iolab.mdtest import table

# The engine's phases in mdtest's order, with mdtest's names (its SUMMARY table).
DIR_PHASES = (("dir_create", "Directory creation"), ("dir_stat", "Directory stat"),
              ("dir_rename", "Directory rename"), ("dir_remove", "Directory removal"))
FILE_PHASES = (("create", "File creation"), ("stat", "File stat"),
               ("open_read", "File read"), ("remove", "File removal"))
# mdtest's phase letter -> the engine's --md-only word (the items left for the next line)
_STEPS = {"-C": "create", "-T": "stat", "-E": "read", "-U": "rename", "-r": "remove"}
TREE_PHASES = (("tree_create", "Tree creation"), ("tree_remove", "Tree removal"))


@dataclass(frozen=True)
class Tree:
    """mdtest's directory tree (``-z -b -I -L``) as mdtest resolves it: ``per_dir`` items in
    each directory that holds items (all ``dirs``, or with ``leaf_only`` the deepest level)."""

    depth: int = 0
    branch: int = 1
    per_dir: int = 0
    leaf_only: bool = False

    @property
    def dirs(self) -> int:
        """mdtest's num_dirs_in_tree."""
        return sum(self.branch ** d for d in range(self.depth + 1))

    @property
    def holders(self) -> int:
        return self.branch ** self.depth if self.leaf_only else self.dirs


@dataclass(frozen=True)
class PerItem:
    """Options that change the calls made per item or their order."""

    stride: int = 0  # -N
    stonewall_s: int = 0  # -W
    sync: bool = False  # -y
    mknod: bool = False  # -k
    random_seed: int = 0  # -R / --random-seed: mdtest's shuffled stat and read order
    seed_per_rank: bool = False  # -R adds the rank to the seed
    call_sync: bool = False  # -Y: sync after each phase's loop, timed
    pre_delay_s: int = 0  # -p: rank 0 sleeps before each block of phases
    collective: bool = False  # -c: rank 0 makes and removes every rank's items


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
    tree: Tree = Tree()
    per_item: PerItem = PerItem()
    step: str = "all"  # --md-only: mdtest's -C/-T/-E/-U/-r as words ("create,stat")
    status_file: str = ""  # -x: the stonewall count, written by -W creations, read after
    warnings: tuple[str, ...] = ()  # mdtest's warnings, printed before the run
    dir_loops: int = 1  # -n beyond -I: test-dir.<i>-0 .. -<K-1>, ``items`` in each
    task_counts: tuple[int, ...] = ()  # -f/-l/-s: one test per count (empty: the launched)
    api: str = "posix"  # the engine's backend: posix, or null for mdtest's -a DUMMY

    def selected(self, phase: str) -> bool:
        """Whether mdtest's flag for ``phase`` (create, stat, read, rename, remove) is on."""
        return self.step == "all" or phase in self.step.split(",")

    def summary_phases(self) -> tuple[tuple[str, str], ...]:
        """The rows of mdtest's SUMMARY table, in its order (the tree rows after them)."""
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
                "--md-layout", "mdtest", "--path", self.directory,
                # a failing call warns and the run goes on, as in mdtest
                "--md-warn", "--api", self.api]
        t, e = self.tree, self.per_item
        if t.depth:
            args += ["--md-depth", str(t.depth), "--md-branch", str(t.branch)]
        if t.per_dir != self.items:
            args += ["--md-items-per-dir", str(t.per_dir)]
        args += ["--md-leaf-only"] if t.leaf_only else []
        args += ["--md-stride", str(e.stride)] if e.stride else []
        args += ["--stonewall", str(e.stonewall_s)] if e.stonewall_s else []
        args += ["--fsync"] if e.sync else []
        args += ["--md-mknod"] if e.mknod else []
        args += ["--md-sync"] if e.call_sync else []
        args += ["--md-pre-delay", str(e.pre_delay_s)] if e.pre_delay_s else []
        args += ["--md-collective"] if e.collective else []
        if e.random_seed:
            args += ["--md-random-seed", str(e.random_seed)]
            args += ["--md-seed-per-rank"] if e.seed_per_rank else []
        args += ["--md-only", self.step] if self.step != "all" else []
        args += ["--md-dir-loops", str(self.dir_loops)] if self.dir_loops > 1 else []
        # -C alone writes the pattern a later -E -X line checks (mdtest's data is always its)
        verify = verify or (self.step != "all" and self.selected("create")
                            and self.write_bytes > 0)
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
    api = _check_api(test)
    phases = _phase_kinds(test)
    counts = _task_counts(test, ranks)
    tree = _tree(test)
    items, loops = _items(test, tree)
    tree = Tree(tree.depth, tree.branch, items // tree.holders, tree.leaf_only)
    step = _check_phases(test)
    creates = step == "all" or "create" in step.split(",")
    status_file = str(p["stoneWallingStatusFile"])
    if status_file and tree.dirs > 1:
        raise UsageError(f"mdtest -x {status_file} with a tree (-z {tree.depth}): the count "
                         "it holds comes from a stonewalled creation, which runs in one "
                         "directory; nearest in iolab: -x without -z")
    warnings: tuple[str, ...] = ()
    if status_file and not creates and phases != "dirs":  # mdtest's file_test reads it
        count = read_status_file(status_file)
        if count is None:  # mdtest warns and keeps -n
            warnings = (STATUS_WARNING,)
        elif count < 1:
            raise UsageError(f"mdtest -x {status_file}: it holds {count} items per rank; "
                             "nothing to stat, read or remove; nearest in iolab: the -x file "
                             "of a creation that made items")
        elif phases == "both" and count != items:
            raise UsageError(f"mdtest -x {status_file}: it holds {count} items per rank and "
                             f"the directory phases run on {items}; the engine runs both "
                             "kinds on one count; nearest in iolab: -F (files only)")
        else:
            items = count
            tree = Tree(tree.depth, tree.branch, items, tree.leaf_only)
    per_item = _per_item(test, tree, creates)
    if loops > 1 and (per_item.stonewall_s or per_item.random_seed or step != "all"
                      or per_item.collective):
        raise UsageError(f"mdtest -n {items * loops} -I {items}: the engine's loop over "
                         f"{loops} test directories runs every phase in creation order; with "
                         "-W, -R/--random-seed, -c or one phase alone it is not in the engine; "
                         f"nearest in iolab: -n {items} -I {items} (one test directory)")
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
    if per_item.mknod and write > 0:
        raise UsageError(f"mdtest -k -w {write}: mknod makes empty files (mdtest refuses it "
                         "too: '-k not compatible with -w'); give -w 0")
    return MdtestRun(items, write, bool(p["unique_dir_per_task"]), path, int(p["iterations"]),
                     phases, tree, per_item, step, status_file, warnings, loops, counts, api)


# mdtest's warning when -x names nothing readable (ReadStoneWallingIterations gave -1)
STATUS_WARNING = "WARNING: Could not read stonewall status file"


def read_status_file(path: str) -> int | None:
    """mdtest's ReadStoneWallingIterations: the first integer of the file (None when there
    is none to read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            words = f.read().split(maxsplit=1)
        return int(words[0]) if words else None
    except (OSError, ValueError):
        return None


def _check_api(test: IorTest) -> str:
    """The engine's backend for mdtest's -a (DUMMY: null, without mdtest's delays)."""
    api = str(test.params["api"])
    name = api.upper()
    if name == "DUMMY":
        for key in ("dummy.delay-create", "dummy.delay-close", "dummy.delay-sync",
                    "dummy.delay-xfer"):
            if test.params.get(key):
                raise UsageError(f"mdtest {_said(test, key)} {test.params[key]} with -a DUMMY: "
                                 "the engine's null metadata calls take no time; nearest in "
                                 "iolab: -a DUMMY without it")
    if name in table.APIS:
        return table.APIS[name]
    missing = {k.upper(): v for k, v in table.MISSING_APIS.items()}
    if name in missing:
        raise UsageError(f"mdtest -a {api}: the engine's metadata run has no {api} backend; "
                         f"nearest in iolab: {missing[name]}")
    raise UsageError(f"mdtest -a {api}: not an mdtest API; this mdtest takes POSIX|DUMMY")


def _phase_kinds(test: IorTest) -> str:
    """mdtest: -F files, -D directories, neither (or both) both."""
    p = test.params
    if p["files_only"] and not p["dirs_only"]:
        return "files"
    return "dirs" if p["dirs_only"] and not p["files_only"] else "both"


def _tree(test: IorTest) -> Tree:
    """-z depth, -b branch, -L leaves only, checked as mdtest checks them."""
    p = test.params
    depth, branch = int(p["depth"]), int(p["branch_factor"])
    if depth < 0:
        raise UsageError(f"mdtest -z {depth}: depth must be 0 or more (mdtest refuses it too)")
    if depth > 0 and branch < 1:
        raise UsageError(f"mdtest -b {branch}: a tree (-z {depth}) needs a branch factor of "
                         "at least 1 (mdtest refuses it too)")
    tree = Tree(depth, max(branch, 1) if depth else 1, 0, bool(p["leaf_only"]))
    if tree.dirs > 10_000_000 or depth > 32:
        raise UsageError(f"mdtest -z {depth} -b {branch}: {tree.dirs} directories per tree; "
                         "the engine makes at most 10,000,000 (depth 32); give a smaller tree")
    return tree


def _per_item(test: IorTest, tree: Tree, creates: bool) -> PerItem:
    """-N, -W, -y, -k, -R/--random-seed, -Y, -p with mdtest's meaning and checks (-W
    bounds only a creation: a line without one ignores it, as mdtest)."""
    p = test.params
    stride, wall = int(p["nstride"]), int(p["stone_wall_timer_seconds"])
    wall = wall if creates or wall < 0 else 0
    seed, randomize = int(p["random_seed"]), bool(p["randomize"])
    delay = int(p["pre_delay"])
    if stride < 0 or wall < 0 or seed < 0 or delay < 0:
        raise UsageError("mdtest -N, -W, -p and --random-seed cannot be negative")
    if stride and tree.depth and p["unique_dir_per_task"]:
        raise UsageError(f"mdtest -N {stride} -u -z {tree.depth}: mdtest names a rank's "
                         "subdirectories after itself inside its neighbour's tree, which does "
                         "not exist, so its stats fail; nearest in iolab: -N without -u, or "
                         "-z 0")
    if wall and tree.branch > 1:
        raise UsageError(f"mdtest -W {wall} -b {tree.branch}: mdtest's stonewall works only "
                         "with a branch factor of 1 (mdtest refuses it too)")
    if wall and (tree.depth or randomize or seed):
        raise UsageError(f"mdtest -W {wall}: the engine's stonewall runs one directory in "
                         "creation order (mdtest -W in a tree or with -R stats items it never "
                         "made); nearest in iolab: -W without -z/-R")
    collective = bool(p["collective_creates"])
    if collective:
        _check_collective(test, stride, wall)
    if randomize and not seed:
        seed = int(time.time())  # mdtest: rank 0's time(NULL), then each rank adds its rank
    return PerItem(stride, wall, bool(p["sync_file"]), bool(p["make_node"]), seed,
                   randomize, bool(p["call_sync"]), delay, collective)


def _check_collective(test: IorTest, stride: int, wall: int) -> None:
    """-c runs as mdtest's (rank 0 makes and removes every rank's items, then each rank
    writes its own files), except where mdtest's collective pass breaks its own names or
    counts: -u (its stat phase aborts on a doubled path), -N (rank 0 creates rank i's items
    in tree i, the others look in tree i+N), -W (the pass stops at the deadline on rank 0's
    clock only, and -x/the wear-out never see it), -k (each rank's own pass mknods the file
    again: EEXIST warnings)."""
    said = _said(test, "collective_creates")
    if test.params["unique_dir_per_task"]:
        raise UsageError(f"mdtest {said} -u: mdtest's collective pass leaves its per-rank "
                         "directory names as full paths, so its stat phase looks in "
                         "DIR/test-dir.0-0//DIR/... and aborts (mdtest 4); nearest in iolab: "
                         "-c without -u")
    if stride:
        raise UsageError(f"mdtest {said} -N {stride}: mdtest's collective pass puts rank i's "
                         "items where its -N readers do not look; nearest in iolab: -c "
                         "without -N")
    if wall:
        raise UsageError(f"mdtest {said} -W {wall}: mdtest stonewalls the collective pass "
                         "on rank 0 alone; nearest in iolab: -c without -W, or -W without -c")
    if test.params["make_node"]:
        raise UsageError(f"mdtest {said} -k: mdtest mknods each file twice (rank 0, then "
                         "its owner: EEXIST); nearest in iolab: -c without -k")


def _check_phases(test: IorTest) -> str:
    """mdtest's phase flags: -C, -T, -E, -r and -U (the directory rename) pick phases, in
    its own order whatever the line's; none of them runs every phase. Returns the engine's
    --md-only words ("create,stat"), or "all"."""
    p = test.params
    keys = (("create_only", "-C"), ("stat_only", "-T"), ("read_only", "-E"),
            ("rename_dirs", "-U"), ("remove_only", "-r"))
    chosen = [_STEPS[letter] for key, letter in keys if p[key]]
    return ",".join(chosen) if chosen and len(chosen) < len(keys) else "all"


def _task_counts(test: IorTest, ranks: int) -> tuple[int, ...]:
    """mdtest's -f/-l/-s: one test per task count, ranks 0..count-1 taking part (mdtest:
    first = last = all ranks without -l; its checks). Empty: the one test on every rank."""
    p = test.params
    first, last, stride = int(p["first"]), int(p["last"]), int(p["stride"])
    if last == 0:
        return ()
    if stride < 1 or first < 1:
        raise UsageError(f"mdtest -f {first} -s {stride}: the first task count and the "
                         "stride must be at least 1")
    if first > last or last > ranks:
        raise UsageError(f"mdtest -f {first} -l {last}: not a range of task counts within the "
                         f"{ranks} launched rank(s) (mdtest refuses it too)")
    counts = tuple(range(first, last + 1, stride))
    return () if counts == (ranks,) else counts


def _items(test: IorTest, tree: Tree) -> tuple[int, int]:
    """(items per rank in each test directory, test directories) as mdtest resolves -n and
    -I over the tree (rounded down to a whole number per directory, as mdtest does); -n a
    multiple of -I without a tree loops over n / I test directories, as mdtest's
    directory_loops."""
    p = test.params
    items, per_dir = int(p["items"]), int(p["items_per_dir"])
    loops = 1
    if per_dir > 0:
        if items == 0:
            items = per_dir * tree.holders
        elif p["unique_dir_per_task"]:
            raise UsageError("mdtest -n with -I and -u: mdtest refuses it too ('only specify "
                             "the number of items or the number of items per directory'); "
                             "give -n N or -I N")
        elif items % per_dir:
            raise UsageError(f"mdtest -n {items} -I {per_dir}: items must be a multiple of "
                             "items per directory (mdtest refuses it too)")
        elif items != per_dir and tree.depth:
            raise UsageError(f"mdtest -n {items} -I {per_dir} -z {tree.depth}: mdtest then "
                             f"loops over {items // per_dir} test directories (test-dir.0-K), "
                             "each with a tree, not in the engine; nearest in iolab: "
                             f"-I {per_dir} alone (-n is then -I times the tree's "
                             "directories), or -z 0")
        elif items != per_dir:
            loops, items = items // per_dir, per_dir
    else:
        items -= items % tree.holders  # mdtest: items_per_dir = items / dirs, items = that x dirs
    if items < 0:
        raise UsageError(f"mdtest -n {items}: items cannot be negative")
    return items, loops  # 0: mdtest runs its phases on no items (only the tree's calls)
