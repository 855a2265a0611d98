"""mdtest's options (``mdtest -h`` of IOR 4) as data: spellings, mdtest's variable and
default, and what iolab does with each.

One entry per option, in the shape of :mod:`iolab.ior.table` (the same option parser reads
both in IOR, so the same record type). ``how`` says what happens when a line sets the option
to something other than mdtest's default:

- ``engine``: it shapes the engine's metadata run (:mod:`.mapping`), with mdtest's meaning;
- ``output``: it changes only mdtest's report (:mod:`.output`);
- ``refused``: one line giving ``note`` (why) and ``nearest`` (the nearest iolab option or
  mdtest spelling that runs), before anything runs, is created or stored.

The engine's metadata benchmark times mdtest's directory phases (create, stat, rename,
remove), file phases (create, stat, read, remove) and tree creation and removal, with
mdtest's names and trees, shared or one per rank, and mdtest's per-item options (-N stride,
-W stonewall, -y fsync, -k mknod, -R random order).
"""

from __future__ import annotations

from iolab.ior.table import IorOption, Kind

MdtestOption = IorOption  # IOR's option_help record: mdtest and IOR share option.c
_O = IorOption

_DUMMY_OPTIONS: tuple[tuple[str, Kind], ...] = (
    ("delay-only-rank0", "flag"), ("delay-create", "size"), ("delay-close", "size"),
    ("delay-sync", "size"), ("delay-xfer", "size"))
_OTHER_MODULES: tuple[tuple[str, str, Kind, int | str], ...] = (
    ("HDF5", "showHints", "flag", 0), ("HDF5", "collectiveMetadata", "flag", 0),
    ("HDF5", "individualDataSets", "flag", 0), ("HDF5", "noFill", "flag", 0),
    ("HDF5", "chunkSize", "flag", 0), ("HDF5", "hintsFileName", "str", ""),
    ("HDF5", "setAlignment", "size", 1),
    ("MPIIO", "showHints", "flag", 0), ("MPIIO", "preallocate", "flag", 0),
    ("MPIIO", "useStridedDatatype", "flag", 0), ("MPIIO", "useFileView", "flag", 0),
    ("MPIIO", "hintsFileName", "str", ""),
    ("NCMPI", "showHints", "flag", 0), ("NCMPI", "preallocate", "flag", 0),
    ("NCMPI", "useStridedDatatype", "flag", 0), ("NCMPI", "useFileView", "flag", 0),
    ("NCMPI", "hintsFileName", "str", ""),
    ("MMAP", "madv_dont_need", "flag", 0), ("MMAP", "madv_pattern", "flag", 0))
_NOT_READ = "no effect: mdtest reads it only in its {0} backend, and -a {0} is not run here"
_DUMMY_DELAY = ("with -a DUMMY, other than 0 refused (the engine's null metadata calls take no "
                "time); nearest: -a DUMMY without it; with -a POSIX no effect")

OPTIONS: tuple[IorOption, ...] = (
    _O("a", None, "api", "str", "POSIX", "engine",
       "POSIX: the engine's metadata calls are POSIX's; DUMMY: the engine's null backend "
       "(--api null: every call a no-op that succeeds, as IOR's DUMMY; nothing is made under "
       "-d); the others are refused"),
    _O("b", None, "branch_factor", "size", 1, "engine",
       "--md-branch: subdirectories of each tree directory (no effect with -z 0)"),
    _O("d", None, "path", "str", "./out", "engine",
       "the test directory: made if missing and removed after, as mdtest does; the items "
       "have mdtest's names and places (DIR/test-dir.<iteration>-0/mdtest_tree.0/, -u: "
       "mdtest_tree.<rank>.0/); 'dir1@dir2' is refused"),
    _O("B", None, "no_barriers", "size", 0, "refused",
       "mdtest 4 itself stops every run with -B other than 0 (md_validate_tests: 'stone wall "
       "timer does only work with a branch factor <= 1 ... and with barriers'); -B 0 keeps "
       "the barriers and runs", "mdtest without -B"),
    _O("C", None, "create_only", "flag", 0, "engine",
       "phase selection (--md-only create,stat,read,rename,remove): any of -C -T -E -U -r "
       "run those phases of each kind, in mdtest's order, on what an earlier line left; -C "
       "makes the test directory and tree, -r removes them; without -r the items stay; none "
       "of the five runs every phase"),
    _O("T", None, "stat_only", "flag", 0, "engine", "see -C"),
    _O("E", None, "read_only", "flag", 0, "engine", "see -C"),
    _O("r", None, "remove_only", "flag", 0, "engine", "see -C"),
    _O("U", None, "rename_dirs", "flag", 0, "engine",
       "the directory rename phase (on when no phase letter is given; with -C -T -E -r it "
       "needs -U, as in mdtest; -U alone runs only the rename); see -C"),
    _O("D", None, "dirs_only", "flag", 0, "engine",
       "--md-phases dirs (the directory phases only; -F: files; neither or both: both)"),
    _O("e", None, "read_bytes", "size", 0, "engine",
       "must equal -w: the engine reads back what it wrote (--md-size)"),
    _O("f", None, "first", "size", 1, "engine",
       "with -l and -s: mdtest's series of task counts, one test per count (f, f+s, .. l), "
       "each on ranks 0..count-1: one engine run per count, stored, each with mdtest's "
       "'N tasks' line and SUMMARY table"),
    _O("F", None, "files_only", "flag", 0, "engine",
       "--md-phases files (the file phases only; without -F or -D both, directories first)"),
    _O("G", None, "random_buffer_offset", "size", -1, "engine",
       "no effect on the calls or sizes: it places mdtest's data in its buffer; the engine "
       "writes its own pattern"),
    _O("i", None, "iterations", "size", 1, "engine", "--reps"),
    _O("I", None, "items_per_dir", "size", 0, "engine",
       "--md-items-per-dir: items in each tree directory (-n is then -I times the directories "
       "holding items); -n a multiple of -I without a tree: --md-dir-loops n/I (mdtest's loop "
       "over test-dir.<i>-0 .. -<K-1>, -I items in each); with a tree refused"),
    _O("k", None, "make_node", "flag", 0, "engine",
       "--md-mknod: files made with mknod, no open (with -w 0, as mdtest requires)"),
    _O("l", None, "last", "size", 0, "engine", "see -f"),
    _O("L", None, "leaf_only", "flag", 0, "engine",
       "--md-leaf-only: items only in the deepest tree directories"),
    _O("n", None, "items", "size", 0, "engine",
       "--md-files (files, and directories, per rank)"),
    _O("N", None, "nstride", "size", 0, "engine",
       "--md-stride: rank r stats rank r+N's items, reads r+2N's, removes r+3N's (mod ranks); "
       "with -u and -z > 0 refused (mdtest's own names break)"),
    _O("p", None, "pre_delay", "size", 0, "engine",
       "--md-pre-delay: rank 0 sleeps N seconds before the directory phases and before the "
       "file phases of each iteration, untimed (the others wait at the next barrier), as "
       "mdtest"),
    _O("P", None, "print_rate_and_time", "flag", 0, "output",
       "prints the SUMMARY rate and the SUMMARY time tables"),
    _O(None, "print-all-procs", "print_all_proc", "flag", 0, "refused",
       "mdtest's per-process lists (each rank's rate before the barrier) are not printed",
       "iolab results show ID (each rank's loop time per phase)"),
    _O("R", None, "randomize", "flag", 0, "engine",
       "--md-random-seed S --md-seed-per-rank: stat and read in mdtest's shuffled order, "
       "srand(S + rank); S is --random-seed or the time, as in mdtest"),
    _O(None, "random-seed", "random_seed", "size", 0, "engine",
       "--md-random-seed: the shuffle's seed (without -R the same on every rank, as mdtest)"),
    _O("s", None, "stride", "size", 1, "engine", "see -f"),
    _O("S", None, "shared_file", "flag", 0, "refused",
       "the engine's metadata phases make one file per item, not one shared file",
       "iolab ior (IOR's shared file) or mdtest -F -n N"),
    _O("c", None, "collective_creates", "flag", 0, "engine",
       "--md-collective: rank 0 makes every rank's directories and files (empty, then each "
       "rank opens its own and writes it) and removes them all, as mdtest; with -u, -N, -W, "
       "-k or directory loops refused (mdtest's own pass breaks there)"),
    _O("t", None, "time_unique_dir_overhead", "flag", 0, "engine",
       "no effect on the calls: mdtest 4's unique-directory access (with -u) makes no file "
       "system call, only a name and, before creating, a barrier, which -t puts inside "
       "mdtest's timing; the engine's phase time starts after its barrier, as without -t"),
    _O("u", None, "unique_dir_per_task", "flag", 0, "engine",
       "--md-dir unique (a directory per rank; without -u one shared directory)"),
    _O("v", None, "verbose", "flag", 0, "output",
       "accepted; mdtest's VERBOSE progress lines are not printed"),
    _O("V", None, "verbosity", "size", 0, "output", "see -v"),
    _O("w", None, "write_bytes", "size", 0, "engine",
       "--md-size (bytes written to each file at creation)"),
    _O("W", None, "stone_wall_timer_seconds", "size", 0, "engine",
       "--stonewall: each rank stops creating files after N seconds, all create on to the "
       "furthest rank's count, later phases use that count (no effect on a line without -C, "
       "as mdtest); with -z/-R refused"),
    _O("x", None, "stoneWallingStatusFile", "str", "", "engine",
       "mdtest's stonewall status file: a line with -W that creates writes the count every "
       "rank created to (the furthest rank's), a line with file phases and without -C reads "
       "it as its -n (unreadable: mdtest's warning, -n stays); not with a tree"),
    _O("X", "verify-read", "verify_read", "flag", 0, "engine",
       "--verify (the engine's own pattern, checked on read; needs -e > 0 as in mdtest)"),
    _O(None, "verify-write", "verify_write", "flag", 0, "refused",
       "no read-back right after each create in the engine",
       "-X (iolab bench --verify: checked in the read phase)"),
    _O("y", None, "sync_file", "flag", 0, "engine",
       "--fsync: fsync after writing each file (with -w > 0, as mdtest's POSIX write)"),
    _O("Y", None, "call_sync", "flag", 0, "engine",
       "--md-sync: every rank calls sync() after its loop of each item phase, inside the "
       "phase's time (mdtest runs the sync command there); none after the tree phases, as "
       "mdtest"),
    _O("z", None, "depth", "size", 0, "engine",
       "--md-depth: mdtest's tree (mdtest_tree.0/mdtest_tree.1/...), its creation and "
       "removal timed as the Tree rows"),
    _O("Z", None, "print_time", "flag", 0, "output",
       "prints the SUMMARY time table instead of rates"),
    _O(None, "dataPacketType", "dataPacketType", "str", "t", "engine",
       "no effect on the calls or sizes: the engine writes its own pattern"),
    _O(None, "run-cmd-before-phase", "prologue", "str", "", "refused",
       "the engine runs no command between phases",
       "run the command before 'iolab mdtest' or split the phases into runs"),
    _O(None, "run-cmd-after-phase", "epilogue", "str", "", "refused",
       "the engine runs no command between phases",
       "run the command after 'iolab mdtest'"),
    _O(None, "warningAsErrors", "warningAsErrors", "flag", 0, "output",
       "iolab prints no mdtest warnings, so there is none to turn into an error"),
    _O(None, "saveRankPerformanceDetails", "saveRankDetailsCSV", "str", "", "refused",
       "not written yet", "iolab results show ID --csv (each rank's times per phase)"),
    _O(None, "savePerOpDataCSV", "savePerOpDataCSV", "str", "", "refused",
       "the engine does not time each call",
       "iolab profile (per-call counters of any program)"),
    _O(None, "showRankStatistics", "show_perrank_statistics", "flag", 0, "output",
       "adds the per-rank Max, Min, Mean columns (each rank's own loop time)"),
    # module options (mdtest 4: --module.name); only -a's module reads its own
    _O(None, "posix.odirect", "posix.odirect", "flag", 0, "refused",
       "the engine's metadata calls are buffered",
       "mdtest without --posix.odirect (iolab bench --posix.mode direct for data runs)"),
    _O(None, "posix.rangelocks", "posix.rangelocks", "flag", 0, "refused",
       "the engine takes no range locks", "mdtest without --posix.rangelocks"),
    *(_O(None, f"dummy.{name}", f"dummy.{name}", kind, 0, "engine", _DUMMY_DELAY)
      for name, kind in _DUMMY_OPTIONS),
    *(_O(None, f"{mod.lower()}.{name}", f"{mod.lower()}.{name}", kind, default, "engine",
         _NOT_READ.format(mod)) for mod, name, kind, default in _OTHER_MODULES),
)

# mdtest's APIs (-a): the engine's, or the nearest.
APIS: dict[str, str] = {"POSIX": "posix", "DUMMY": "null"}
MISSING_APIS: dict[str, str] = {
    "DAOS": "-a POSIX on a DFuse mount", "DFS": "-a POSIX on a DFuse mount",
    "S3": "none in iolab (no object store backend); -a POSIX on a file system",
    "S3-4C": "none in iolab (no object store backend); -a POSIX on a file system",
    "S3-libs3": "none in iolab (no object store backend); -a POSIX on a file system",
    "RADOS": "-a POSIX on CephFS", "CEPHFS": "-a POSIX on a CephFS mount",
    "HDFS": "-a POSIX on a mounted file system", "IME": "-a POSIX on the IME FUSE mount",
    "GFARM": "-a POSIX on a gfarm2fs mount", "LIBNFS": "-a POSIX on an NFS mount",
    "PMDK": "-a POSIX on a DAX mount", "CHFS": "-a POSIX", "FINCHFS": "-a POSIX",
    "AIO": "-a POSIX", "MMAP": "-a POSIX", "HDF5": "-a POSIX", "MPIIO": "-a POSIX",
    "NCMPI": "-a POSIX",
}


def by_letter() -> dict[str, IorOption]:
    return {o.short: o for o in OPTIONS if o.short}


def by_long() -> dict[str, IorOption]:
    return {o.long: o for o in OPTIONS if o.long}


def by_key() -> dict[str, IorOption]:
    return {o.key: o for o in OPTIONS}


def defaults() -> dict[str, int | str]:
    """mdtest's defaults (``-d ./out -i 1 -b 1 -z 0``, POSIX, ...), by variable name."""
    return {o.key: o.default for o in OPTIONS}
