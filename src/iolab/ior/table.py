"""IOR 4's options as data: each one's spellings, IOR's parameter name and default, and what
iolab does with it.

One entry per IOR option (``ior -h``, IOR 4.1) and per ``-O``/script directive. ``how`` says
what happens when a line sets it to something other than IOR's default:

- ``engine``: it becomes iolab-bench engine options with IOR's meaning (:mod:`.mapping`);
- ``output``: it changes only what is printed (IOR's report), handled by :mod:`.output`;
- ``refused``: the run is refused in one line giving ``note`` (why) and ``nearest`` (the
  nearest iolab option or verb), before anything runs or is stored.

The parameter names are IOR's own (``-O blockSize=1m``, script files, the JSON's
"Parameters"), matched without regard to case as IOR does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["flag", "int", "size", "str"]
How = Literal["engine", "output", "refused"]


@dataclass(frozen=True)
class IorOption:
    short: str | None  # the letter of -X, or None
    long: str | None  # --name (module options: "posix.odirect"), or None
    key: str  # IOR's parameter name (-O key=value, script files)
    kind: Kind  # flag: counted (-vvv, -z -z); size: 1m, 4k; int; str
    default: int | str
    how: How
    note: str  # engine: what it becomes; refused: why
    nearest: str = ""  # refused: the nearest iolab equivalent

    @property
    def spelling(self) -> str:
        return f"-{self.short}" if self.short else f"--{self.long}" if self.long \
            else f"-O {self.key}"


_O = IorOption
MIB = 1 << 20

OPTIONS: tuple[IorOption, ...] = (
    _O("a", None, "api", "str", "POSIX", "engine",
       "--api: POSIX posix, MPIIO mpiio (with --mpiio.set-size-zero: IOR's create empties "
       "the file), HDF5 hdf5 (with --hdf5.segment-datasets: IOR's dataset per segment), "
       "NCMPI pnetcdf, DUMMY null"),
    _O("A", None, "refNum", "int", 0, "output", "RefNum column of the summary"),
    _O("b", None, "blockSize", "size", MIB, "engine", "--block"),
    _O("c", "collective", "collective", "flag", 0, "engine", "--collective"),
    _O("C", None, "reorderTasks", "flag", 0, "engine",
       "--reorder --reorder-nodes Q: reads shift by -Q times the first node's ranks, as IOR "
       "(so on one node each rank reads its own data, as IOR)"),
    _O("d", None, "interTestDelay", "int", 0, "engine",
       "--phase-delay (seconds every rank sleeps before each phase, untimed; a fraction is "
       "read as IOR reads it, whole seconds: 0.1 is 0, with a note)"),
    _O("D", None, "deadlineForStonewalling", "int", 0, "engine",
       "--stonewall (with -O stoneWallingWearOut=1 every rank wears out to the furthest "
       "rank's count; without it --stonewall-stop: each rank stops at the deadline)"),
    _O("e", None, "fsync", "flag", 0, "engine", "--fsync (before close, after writing)"),
    _O("E", None, "useExistingTestFile", "flag", 0, "engine",
       "--use-existing (no removal before each write; POSIX overwrites in place, no "
       "truncation, as IOR's POSIX create; MPIIO opens the file and empties it with "
       "MPI_File_set_size(0), as IOR's MPIIO create)"),
    _O("f", None, "scriptFile", "str", "", "engine",
       "IOR START / RUN / IOR STOP script: one engine run per test"),
    _O("F", None, "filePerProc", "flag", 0, "engine",
       "--layout fpp (without it IOR's shared file: --layout segmented)"),
    _O("g", None, "intraTestBarriers", "flag", 0, "engine",
       "--step-barriers (after the open and after the transfers, inside the timing)"),
    _O("G", None, "setTimeStampSignature", "int", 0, "engine",
       "nothing to pass: it sets only the bytes' content (IOR's time stamp in its pattern); "
       "iolab's pattern, written when a check is asked (-W, -R), is the same in every run "
       "(rank, offset, repetition), so a later -R run checks an earlier run's files, as IOR "
       "does with one -G"),
    _O("i", None, "repetitions", "int", 1, "engine", "--reps"),
    _O("j", None, "outlierThreshold", "int", 0, "output",
       "IOR's 'WARNING: for HOST, task N, write elapsed transfer time is ...' lines after "
       "each row, for every rank more than N seconds from the mean of a timer"),
    _O("k", None, "keepFile", "flag", 0, "engine", "--keep"),
    _O("K", None, "keepFileWithError", "flag", 0, "refused",
       "the engine keeps files only on request",
       "-k (iolab bench --keep keeps the files, also after a failure)"),
    _O("l", "dataPacketType", "dataPacketType", "str", "", "refused",
       "the engine writes its own data pattern, not IOR's packets",
       "iolab bench --verify (iolab's pattern, checked on read)"),
    _O("m", None, "multiFile", "flag", 0, "engine",
       "--file-per-rep (names end in .<repetition>); note that IOR reads '-b1m' as "
       "'-b 1m -m'"),
    _O("M", None, "memoryPerNode", "str", "", "refused",
       "the engine does not hog memory to shrink the page cache",
       "iolab bench --evict (drops the files from the page cache before reading)"),
    _O("N", None, "numTasks", "int", -1, "engine",
       "must equal the ranks launched (--np); fewer participating ranks are refused"),
    _O("o", None, "testFileName", "str", "testFile", "engine",
       "--path (file per process: IOR's names PATH.00000000, --fpp-digits 8)"),
    _O("O", None, "options", "str", "", "engine", "IOR directives key=value[,key=value]"),
    _O("Q", None, "taskPerNodeOffset", "int", 1, "engine",
       "--reorder-nodes (nodes between writer and reader, with -C and -Z)"),
    _O("r", None, "readFile", "flag", 0, "engine", "--read"),
    _O("R", None, "checkRead", "flag", 0, "engine",
       "--verify (iolab's own pattern, so it checks files iolab wrote)"),
    _O("s", None, "segmentCount", "size", 1, "engine", "--segments"),
    _O("t", None, "transferSize", "size", 256 * 1024, "engine", "--transfer"),
    _O("T", None, "maxTimeDuration", "int", 0, "engine",
       "--max-time (minutes as seconds: no phase starts after them)"),
    _O("u", None, "uniqueDir", "flag", 0, "engine", "--unique-dir (with -F)"),
    _O("v", None, "verbose", "flag", 0, "output", "more lines in the report"),
    _O("w", None, "writeFile", "flag", 0, "engine", "--write"),
    _O("W", None, "checkWrite", "flag", 0, "engine",
       "--check-write --verify (after each write a read pass checking iolab's pattern, "
       "reported apart from the reads)"),
    _O("x", None, "singleXferAttempt", "flag", 0, "engine",
       "nothing to add: the engine always makes one attempt (a short transfer is an I/O "
       "error, stored as failed), as IOR with -x"),
    _O("X", None, "reorderTasksRandomSeed", "int", 0, "engine",
       "--reorder-seed (negative: a new draw each repetition, as IOR)"),
    _O("y", None, "dualMount", "flag", 0, "refused",
       "no second mount point in the engine",
       "-o PATH on the mount to measure (iolab bench --path)"),
    _O("Y", None, "fsyncPerWrite", "flag", 0, "engine", "--fsync-per-write"),
    _O("z", None, "randomOffset", "flag", 0, "engine",
       "--random (IOR's order with --random-offset-seed); '-z -z' (random with repetition: "
       "a random block per segment) --random-repeat, read lines only (IOR 4.1's write "
       "divides by zero there)"),
    _O("Z", None, "reorderTasksRandom", "flag", 0, "engine",
       "--reorder-random 1 (each rank draws whose data it reads, glibc rand as IOR); "
       "-Z -Z: --reorder-random 2 (a shuffle of the ranks)"),
    _O(None, "randomPrefill", "randomPrefill", "size", 0, "engine",
       "--random-prefill (with -z; refused with -D, where IOR prefills inside the deadline)"),
    _O(None, "random-offset-seed", "randomSeed", "int", -1, "engine",
       "--random-seed: -z and -z -z in IOR's exact order (without it -z takes the engine's "
       "own shuffle of the same kind, -z -z the clock as IOR)"),
    _O(None, "warningAsErrors", "warningAsErrors", "flag", 0, "output",
       "the -j outlier warnings stay warnings (IOR would stop the run on the first)"),
    _O(None, "dryRun", "dryRun", "flag", 0, "refused",
       "IOR's dry run prints dummy results",
       "iolab ior --dry-run (prints the runs without running them) or -a DUMMY"),
    # module options (IOR 4: --module.name)
    _O(None, "posix.odirect", "posix.odirect", "flag", 0, "engine", "--posix.mode direct"),
    _O(None, "posix.rangelocks", "posix.rangelocks", "flag", 0, "refused",
       "the engine takes no range locks",
       "iolab bench --posix.mode (buffered, sync, fsync, direct)"),
    _O(None, "dummy.delay-only-rank0", "dummy.delay-only-rank0", "flag", 0, "engine",
       "--null.delay-rank0-only (only rank 0 waits the delays)"),
    _O(None, "dummy.delay-create", "dummy.delay-create", "int", 0, "engine",
       "--null.delay-create-us (microseconds per create: each rank's open of a write phase; "
       "a read's open waits nothing, as IOR's DUMMY)"),
    _O(None, "dummy.delay-close", "dummy.delay-close", "int", 0, "engine",
       "--null.delay-close-us (microseconds per close, every phase)"),
    _O(None, "dummy.delay-sync", "dummy.delay-sync", "int", 0, "engine",
       "nothing to pass: IOR's DUMMY waits it in its sync, which ior never calls (-e and -Y "
       "call fsync, which waits nothing); mdtest's -y does"),
    _O(None, "dummy.delay-xfer", "dummy.delay-xfer", "int", 0, "engine",
       "--null.delay-us (microseconds per transfer)"),
    _O(None, "hdf5.showHints", "hdf5.showHints", "flag", 0, "output",
       "prints the effective MPI-IO hints the engine read back"),
    _O(None, "hdf5.collectiveMetadata", "hdf5.collectiveMetadata", "flag", 0, "engine",
       "--hdf5.coll-metadata"),
    _O(None, "hdf5.individualDataSets", "hdf5.individualDataSets", "flag", 0, "refused",
       "IOR marks it 'not working'; the engine writes one shared dataset",
       "-a HDF5 -F (a file per rank)"),
    _O(None, "hdf5.noFill", "hdf5.noFill", "flag", 0, "engine",
       "nothing to add: the engine never writes fill values"),
    _O(None, "hdf5.chunkSize", "hdf5.chunkSize", "int", 0, "refused",
       "IOR counts chunks in dataset elements of its own dataset shape",
       "iolab bench --api hdf5 --hdf5.chunk BYTES"),
    _O(None, "hdf5.hintsFileName", "hdf5.hintsFileName", "str", "", "engine",
       "IOR_HINT__MPI__key=value lines become --hint key=value"),
    _O(None, "hdf5.setAlignment", "hdf5.setAlignment", "size", 1, "engine",
       "--hdf5.align"),
    _O(None, "mpiio.showHints", "mpiio.showHints", "flag", 0, "output",
       "prints the effective MPI-IO hints the engine read back"),
    _O(None, "mpiio.preallocate", "mpiio.preallocate", "flag", 0, "refused",
       "no MPI_File_preallocate in the engine",
       "iolab bench --api posix --posix.preallocate"),
    _O(None, "mpiio.useStridedDatatype", "mpiio.useStridedDatatype", "flag", 0, "refused",
       "IOR's strided datatype is not the engine's file view",
       "iolab bench --file-view (one call per rank through a strided view)"),
    _O(None, "mpiio.useFileView", "mpiio.useFileView", "flag", 0, "refused",
       "IOR sets a view and still makes one call per transfer; the engine's view is one "
       "call per rank", "iolab bench --file-view"),
    _O(None, "mpiio.hintsFileName", "mpiio.hintsFileName", "str", "", "engine",
       "IOR_HINT__MPI__key=value lines become --hint key=value"),
    _O(None, "ncmpi.showHints", "ncmpi.showHints", "flag", 0, "output",
       "prints the effective MPI-IO hints the engine read back"),
    _O(None, "ncmpi.preallocate", "ncmpi.preallocate", "flag", 0, "refused",
       "no preallocation under PnetCDF in the engine",
       "iolab bench --api posix --posix.preallocate"),
    _O(None, "ncmpi.useStridedDatatype", "ncmpi.useStridedDatatype", "flag", 0, "refused",
       "IOR's strided datatype is not the engine's file view", "iolab bench --file-view"),
    _O(None, "ncmpi.useFileView", "ncmpi.useFileView", "flag", 0, "refused",
       "the engine's PnetCDF variable has its own shape", "iolab bench --file-view"),
    _O(None, "ncmpi.hintsFileName", "ncmpi.hintsFileName", "str", "", "engine",
       "IOR_HINT__MPI__key=value lines become --hint key=value"),
    _O(None, "mmap.madv_dont_need", "mmap.madv_dont_need", "flag", 0, "refused",
       "iolab has no MMAP backend", "-a POSIX (pread/pwrite)"),
    _O(None, "mmap.madv_pattern", "mmap.madv_pattern", "flag", 0, "refused",
       "iolab has no MMAP backend", "-a POSIX (pread/pwrite)"),
)

# -O and script-file directives that have no command-line letter (IOR's DecodeDirective).
DIRECTIVES: tuple[IorOption, ...] = (
    _O(None, None, "stoneWallingWearOut", "int", 0, "engine",
       "with -D: --stonewall (every rank wears out to the furthest rank's count)"),
    _O(None, None, "stoneWallingWearOutIterations", "int", 0, "refused",
       "the read phase reads what the write phase wrote in the same run",
       "-w -r -D N -O stoneWallingWearOut=1 in one line"),
    _O(None, None, "stoneWallingStatusFile", "str", "", "engine",
       "IOR's file: with -w -D N -O stoneWallingWearOut=1 -k the first repetition's write "
       "pairs (transfers per rank) are written into it at the test's end; a read run given "
       "it reads that many transfers per rank (--read-xfers N), also without -D; IOR's "
       "format, so IOR and iolab read each other's file"),
    _O(None, None, "minTimeDuration", "int", 0, "refused",
       "the engine does not repeat a phase until a minimum time",
       "-i N (more repetitions) or larger -b / -s"),
    _O(None, None, "summaryFile", "str", "", "output", "the report goes to this file"),
    _O(None, None, "summaryFormat", "str", "default", "output",
       "default (text), JSON or CSV, with IOR's keys"),
    _O(None, None, "saveRankPerformanceDetailsCSV", "str", "", "refused",
       "not written yet", "iolab results show ID --json (each rank's times)"),
    _O(None, None, "savePerOpDataCSV", "str", "", "refused",
       "the engine does not time each call",
       "iolab profile (per-call counters of any program)"),
    _O(None, None, "summaryalways", "int", 0, "output", "the report prints every test"),
    _O(None, None, "platform", "str", "", "output", "shown in the JSON's Parameters"),
    _O(None, None, "numTasksOnNode0", "int", 0, "refused",
       "the ranks per node come from the launch", "iolab ior --ppn N"),
    _O(None, None, "numNodes", "int", 0, "refused",
       "the nodes come from the launch", "iolab ior --nodes N"),
    _O(None, None, "interIODelay", "int", 0, "refused",
       "no delay between transfers in the engine",
       "-a DUMMY --dummy.delay-xfer=N (the null backend)"),
    _O(None, None, "memoryPerTask", "str", "", "refused",
       "the engine does not hog memory", "iolab bench --evict"),
    _O(None, None, "allocateBufferOnGPU", "int", 0, "refused",
       "no GPU buffers in the engine", "iolab bench (CPU buffers)"),
    _O(None, None, "GPUid", "int", -1, "refused",
       "no GPU buffers in the engine", "iolab bench (CPU buffers)"),
    _O(None, None, "GPUDirect", "int", 0, "refused",
       "no GPU buffers in the engine", "iolab bench (CPU buffers)"),
    _O(None, None, "debug", "str", "", "output", "a note printed before the options"),
)

# IOR's APIs: iolab's engine name, or why not and what is nearest.
APIS: dict[str, str] = {"POSIX": "posix", "MPIIO": "mpiio", "HDF5": "hdf5",
                        "NCMPI": "pnetcdf", "DUMMY": "null"}
MISSING_APIS: dict[str, str] = {
    "MMAP": "-a POSIX (pread/pwrite)",
    "AIO": "-a POSIX with iolab bench --posix.queue-depth N (io_uring or libaio)",
    "DAOS": "-a POSIX on a DFuse mount", "DFS": "-a POSIX on a DFuse mount",
    "S3": "none in iolab (no object store backend); -a POSIX on a file system",
    "S3-4C": "none in iolab (no object store backend); -a POSIX on a file system",
    "S3-libs3": "none in iolab (no object store backend); -a POSIX on a file system",
    "RADOS": "-a POSIX on CephFS", "CEPHFS": "-a POSIX on a CephFS mount",
    "HDFS": "-a POSIX on a mounted file system", "IME": "-a POSIX on the IME FUSE mount",
    "GFARM": "-a POSIX on a gfarm2fs mount", "LIBNFS": "-a POSIX on an NFS mount",
    "PMDK": "-a POSIX on a DAX mount", "CHFS": "-a POSIX", "FINCHFS": "-a POSIX",
    "SIONLIB": "-a MPIIO", "GPFS": "-a POSIX on GPFS",
}


def by_letter() -> dict[str, IorOption]:
    return {o.short: o for o in OPTIONS if o.short}


def by_long() -> dict[str, IorOption]:
    return {o.long: o for o in OPTIONS if o.long}


def by_key() -> dict[str, IorOption]:
    """Every parameter by its lower-cased name (what -O and script lines use)."""
    table = {o.key.lower(): o for o in (*OPTIONS, *DIRECTIVES)}
    # IOR's other names for the same parameters
    table["testfile"] = table["testfilename"]
    table["reordertasksconstant"] = table["reordertasks"]
    table["useo_direct"] = table["posix.odirect"]
    return table


def defaults() -> dict[str, int | str]:
    """IOR's defaults (``-t 256k -b 1m -s 1``, POSIX, one shared file, ...), by key."""
    return {o.key: o.default for o in (*OPTIONS, *DIRECTIVES)}
