/* iolab-bench: the core option table. The one declaration of every core option: the
 * parser, --help, --list-options, docs/engine.md and the result's "config" read it. */
#include "config.h"

#include <stddef.h>

#define O(field) offsetof(iolab_cfg_t, field)

const iolab_option_t iolab_config_options[] = {
    {"api", "api", IOLAB_OPT_STR, "posix", NULL, NULL,
     "I/O interface (backend); --list-options shows the ones built", O(api)},
    {"layout", "layout", IOLAB_OPT_ENUM, "fpp", NULL,
     "fpp|segmented|strided|serial|subset|subarray",
     "file per process, shared file segmented / strided, rank 0 does all I/O, N:M aggregation, "
     "an N-D array split over a process grid (--grid)", O(layout)},
    {"workload", "workload", IOLAB_OPT_ENUM, "layout", NULL, "layout|btio",
     "layout: the pattern --layout describes; btio: NAS BTIO's output (diagonal multi-partition "
     "over a square number of ranks, a 5-D record variable; --grid default 64x64x64, --steps 5)",
     O(workload)},
    {"grid", "grid", IOLAB_OPT_STR, NULL, NULL, NULL,
     "subarray and btio: the global array, 1-4 dimensions, slowest first (2048x1024x256)",
     O(grid)},
    {"pgrid", "pgrid", IOLAB_OPT_STR, NULL, NULL, NULL,
     "subarray: ranks per grid dimension (4x2x1; product = ranks); default MPI_Dims_create",
     O(pgrid)},
    {"elem", "elem_bytes", IOLAB_OPT_SIZE, "8", "bytes", NULL,
     "subarray and btio: bytes per array element (hdf5, pnetcdf: 1, 2, 4 or 8)", O(elem)},
    {"steps", "steps", IOLAB_OPT_COUNT, "0", "count", NULL,
     "subarray and btio: records appended one after another, like a time series (0: 1; btio 5)",
     O(steps)},
    {"transfer", "transfer_bytes", IOLAB_OPT_SIZE, "1M", "bytes", NULL,
     "bytes per I/O call (K/M/G suffixes)", O(transfer)},
    {"block", "block_bytes", IOLAB_OPT_SIZE, "4M", "bytes", NULL,
     "bytes per rank per segment; a multiple of --transfer", O(block)},
    {"segments", "segments", IOLAB_OPT_COUNT, "1", "count", NULL,
     "segments (each rank writes one block per segment)", O(segments)},
    {"write", "write", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "run the write phase (neither --write nor --read: both)", O(write)},
    {"read", "read", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "run the read phase (neither --write nor --read: both)", O(read)},
    {"reps", "repetitions", IOLAB_OPT_INT, "1", "count", NULL,
     "repetitions of the whole write/read sequence", O(reps)},
    {"path", "path", IOLAB_OPT_STR, "./iolab-bench.dat", NULL, NULL,
     "test file path (prefix: fpp appends .<rank>, subset aggregator files .a<group>)",
     O(path)},
    {"collective", "collective", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "collective transfers (MPI-IO *_at_all, HDF5 H5FD_MPIO_COLLECTIVE)", O(collective)},
    {"file-view", "file_view", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "one call per rank through a strided file view instead of one call per transfer",
     O(file_view)},
    {"hint", "hint", IOLAB_OPT_LIST, NULL, NULL, NULL,
     "MPI-IO hint key=value (repeatable)", O(hint)},
    {"hints-file", "hints_file", IOLAB_OPT_STR, NULL, NULL, NULL,
     "file of 'key value' hint lines (ROMIO_HINTS format)", O(hints_file)},
    {"threads", "threads", IOLAB_OPT_INT, "1", "count", NULL,
     "threads per rank, each doing pread/pwrite on its own part (posix)", O(threads)},
    {"reorder", "reorder", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "read what another rank wrote (one on another host when the run spans several)", O(reorder)},
    {"read-times", "read_times", IOLAB_OPT_INT, "1", "count", NULL,
     "read passes per repetition (the 'read 3 times' experiment)", O(read_times)},
    {"evict", "evict", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "evict the files from the page cache before the first read pass (fsync + "
     "posix_fadvise DONTNEED, checked with mincore)", O(evict)},
    {"verify", "verify", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "write a pattern from (rank, offset, repetition) and check it on reads", O(verify)},
    {"keep", "keep", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "keep the test files at the end (also after a failure)", O(keep)},
    {"fsync", "fsync", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "flush to storage before close after writing (fsync, MPI_File_sync), inside the timing",
     O(fsync)},
    {"random", "random", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "random order as IOR -z: fpp visits each block's transfers shuffled; the segmented "
     "shared file deals each segment's transfers to random ranks; strided shuffles each "
     "rank's own", 
     O(random)},
    {"fsync-per-write", "fsync_per_write", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "flush after every write call (fsync, MPI_File_sync; IOR -Y)", O(fsync_per_write)},
    {"stonewall", "stonewall_s", IOLAB_OPT_DOUBLE, "0", "s", NULL,
     "each rank stops after this many seconds, then all wear out to the furthest rank's count "
     "so every rank moves the same amount; reads read what was written; with --collective "
     "rank 0 decides for all after every call, as IOR -D -c (IOR -D; 0 = off)",
     O(stonewall)},
    {"unique-dir", "unique_dir", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "fpp: each rank's file in its own directory <dir>/<rank>/ (created and removed; IOR -u)",
     O(unique_dir)},
    /* --- IOR compatibility (the iolab ior front end's; see ior_compat.h) --- */
    {"random-seed", "random_seed", IOLAB_OPT_INT, "-1", NULL, NULL,
     "--random in IOR's exact order (IOR --random-offset-seed): glibc random() seeded with "
     "this (+ rank for fpp) shuffles as IOR does; -1: the engine's own order", O(random_seed)},
    {"random-repeat", "random_repeat", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "IOR -z -z (random with repetition): per segment each rank moves one block drawn at "
     "random from the whole file (its size on disk for reads), blocks may repeat; seeded by "
     "--random-seed (-1: the clock)", O(random_repeat)},
    {"random-prefill", "random_prefill_bytes", IOLAB_OPT_SIZE, "0", "bytes", NULL,
     "with --random writes: first write each rank's blocks in order, this many bytes a call, "
     "inside the timing but not counted (IOR --randomPrefill; divides --block; 0 = off)",
     O(random_prefill)},
    {"fpp-digits", "fpp_digits", IOLAB_OPT_INT, "0", "count", NULL,
     "fpp: the rank in file names with at least this many digits (IOR: 8, "
     "<path>.00000000; 0: <path>.0)", O(fpp_digits)},
    {"remove-each-rep", "remove_each_rep", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "as IOR between repetitions: remove the files before each write (untimed; not with "
     "--use-existing) and, unless --keep, after each repetition of a run that wrote them",
     O(remove_each_rep)},
    {"use-existing", "use_existing", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "with --remove-each-rep: write into the existing files, no removal first; posix "
     "does not truncate, mpiio empties the file with MPI_File_set_size(0) (IOR -E)",
     O(use_existing)},
    {"file-per-rep", "file_per_rep", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "each repetition its own files: names end in .<repetition> (IOR -m)", O(file_per_rep)},
    {"phase-delay", "phase_delay_s", IOLAB_OPT_DOUBLE, "0", "s", NULL,
     "every rank sleeps this long before each phase's starting barrier, untimed (IOR -d)",
     O(phase_delay)},
    {"step-barriers", "step_barriers", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "a barrier after the open and after the transfers of each phase, inside the timing "
     "(IOR -g)", O(step_barriers)},
    {"max-time", "max_time_s", IOLAB_OPT_DOUBLE, "0", "s", NULL,
     "no phase starts once this many seconds have passed since the first (IOR -T, given "
     "there in minutes; 0 = off)", O(max_time)},
    {"reorder-nodes", "reorder_nodes", IOLAB_OPT_INT, "0", "count", NULL,
     "with --reorder, IOR's -C -Q N: read the data of rank (r + N * ranks on the first host) "
     "mod ranks, so on one host each rank's own (0: the engine's own shift)",
     O(reorder_nodes)},
    {"reorder-random", "reorder_random", IOLAB_OPT_INT, "0", "count", NULL,
     "reads of other ranks' data as IOR -Z: 1 each rank draws the rank to read (glibc rand "
     "seeded rank + --reorder-seed, at least --reorder-nodes hosts on, repeats allowed), 2 "
     "(-Z -Z) a shuffle of the ranks seeded --reorder-seed; 0 off", O(reorder_random)},
    {"reorder-seed", "reorder_seed", IOLAB_OPT_INT, "0", NULL, NULL,
     "seed of --reorder-random (IOR -X; negative: -seed + repetition, a new draw each "
     "repetition)", O(reorder_seed)},
    {"stonewall-stop", "stonewall_stop", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "with --stonewall: each rank stops at the deadline and keeps what it moved, no wear-out; "
     "a later read reads as many transfers as the rank wrote (IOR -D without "
     "stoneWallingWearOut)", O(stonewall_stop)},
    {"check-write", "check_write", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "after each write, read the files back and check them (needs --verify; recorded as read "
     "pass -1, not in the read statistics; with --reorder-nodes Q it reads Q + 1 hosts on; "
     "IOR -W)", O(check_write)},
    {"read-xfers", "read_xfers", IOLAB_OPT_INT, "-1", "count", NULL,
     "transfers each rank reads in every read phase, in its usual order, then stops (IOR's "
     "-O stoneWallingStatusFile count); 0: all of them, even after a stonewalled write of "
     "the same run; -1: unset (a stonewalled write's count)", O(read_xfers)},
    /* --- end IOR compatibility --- */
    {"metadata", "metadata", IOLAB_OPT_ENUM, "off", NULL, "off|easy|hard",
     "metadata benchmark instead of data I/O (as mdtest): per rank create, stat, open+read, "
     "remove --md-files files; easy: empty files, a directory per rank; hard: 3901-byte files "
     "in one shared directory (IO500); api posix", O(metadata)},
    {"md-files", "md_files", IOLAB_OPT_COUNT, "1000", "count", NULL,
     "metadata: files per rank", O(md_files)},
    {"md-size", "md_file_bytes", IOLAB_OPT_SIZE, "0", "bytes", NULL,
     "metadata: bytes written to each file at creation and read back (0: the preset's, easy 0, "
     "hard 3901)", O(md_size)},
    {"md-dir", "md_dir", IOLAB_OPT_ENUM, "preset", NULL, "preset|shared|unique",
     "metadata: all files in one shared directory, or one directory per rank (preset: easy "
     "unique, hard shared)", O(md_dir)},
    {"md-phases", "md_phases", IOLAB_OPT_ENUM, "files", NULL, "files|dirs|both",
     "metadata: the file phases, the directory phases (mkdir, stat, rename, rmdir of "
     "--md-files directories per rank), or both, directories first (mdtest -F, -D, neither)",
     O(md_phases)},
    {"md-step", "md_step", IOLAB_OPT_ENUM, "all", NULL, "all|create|stat|read|remove",
     "metadata: every file phase (the files removed after), or one of them, leaving the files "
     "for the next run's (mdtest -C, -T, -E, -r; IO500's separate phases); create takes "
     "--stonewall (mdtest -W: stop, then wear out to the furthest rank's count)",
     O(md_step)},
    {"md-only", "md_only", IOLAB_OPT_STR, NULL, NULL, NULL,
     "metadata: a comma list of create,stat,read,rename,remove (mdtest -C -T -E -U -r): only "
     "those phases, of every kind --md-phases runs (create also makes the tree, remove removes "
     "it); without remove the items stay for the next run", O(md_only)},
    /* --- metadata: mdtest's layout, trees and per-item options (metadata.c) --- */
    {"md-layout", "md_layout", IOLAB_OPT_ENUM, "iolab", NULL, "iolab|mdtest",
     "metadata: iolab: <path>.md/[<rank>/]file.iolab.<rank>.<i>; mdtest: mdtest's own names, "
     "<path>/test-dir.<rep>-0/mdtest_tree.0/file.mdtest.<rank>.<i> (--md-dir unique: "
     "mdtest_tree.<rank>.0), trees, and the timed tree_create and tree_remove phases",
     O(md_layout)},
    {"md-stride", "md_stride", IOLAB_OPT_INT, "0", "count", NULL,
     "metadata: rank r stats the files of rank r+N, reads those of r+2N and removes those of "
     "r+3N (mod ranks), so no rank touches what its own cache holds (mdtest -N)",
     O(md_stride)},
    {"md-depth", "md_depth", IOLAB_OPT_INT, "0", "count", NULL,
     "metadata, --md-layout mdtest: levels of directories below the top one (mdtest -z)",
     O(md_depth)},
    {"md-branch", "md_branch", IOLAB_OPT_INT, "1", "count", NULL,
     "metadata, --md-layout mdtest: subdirectories of each tree directory (mdtest -b)",
     O(md_branch)},
    {"md-items-per-dir", "md_items_per_dir", IOLAB_OPT_COUNT, "0", "count", NULL,
     "metadata: items in each tree directory; --md-files must be this times the directories "
     "that hold items (mdtest -I; 0: --md-files in the one directory)", O(md_per_dir)},
    {"md-leaf-only", "md_leaf_only", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "metadata: items only in the deepest tree directories (mdtest -L)", O(md_leaf_only)},
    {"md-random-seed", "md_random_seed", IOLAB_OPT_INT, "0", "count", NULL,
     "metadata: stat and read the items in mdtest's shuffled order from srand(seed) "
     "(mdtest --random-seed; 0: in order)", O(md_random_seed)},
    {"md-seed-per-rank", "md_seed_per_rank", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "metadata: each rank seeds with --md-random-seed plus its rank (mdtest -R)",
     O(md_seed_per_rank)},
    {"md-mknod", "md_mknod", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "metadata: create files with mknod instead of open+close; --md-size 0 (mdtest -k)",
     O(md_mknod)},
    {"md-sync", "md_sync", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "metadata: each rank calls sync() after its loop of every create, stat, read, remove and "
     "directory phase, inside the phase's time (mdtest -Y, its POSIX backend's sync command)",
     O(md_sync)},
    {"md-pre-delay", "md_pre_delay_s", IOLAB_OPT_DOUBLE, "0", "s", NULL,
     "metadata: rank 0 sleeps this long before the directory phases and before the file "
     "phases of each repetition, untimed; the others wait at the phase's barrier (mdtest -p)",
     O(md_pre_delay)},
    {"md-dir-loops", "md_dir_loops", IOLAB_OPT_INT, "1", "count", NULL,
     "metadata, --md-layout mdtest: each phase runs over this many test directories "
     "(test-dir.<rep>-0 .. -<K-1>), --md-files items per rank in each (mdtest -n beyond -I)",
     O(md_dir_loops)},
    {"md-collective", "md_collective", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "metadata, --md-layout mdtest: rank 0 makes and removes every rank's items and trees "
     "(creates each file empty, then every rank opens its own and writes it), as mdtest -c",
     O(md_collective)},
    {"md-warn", "md_warn", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "metadata: a call that fails is a warning (counted, the first one reported) and the "
     "phase goes on, as mdtest's WARNING lines; the run ends ok (without it the run stops)",
     O(md_warn)},
    /* --- end of metadata block --- */
    {"group", "group", IOLAB_OPT_INT, "0", "count", NULL,
     "subset layout: ranks per aggregator (0 = ranks per host)", O(group)},
    {"group-files", "group_files", IOLAB_OPT_ENUM, "aggregator", NULL, "aggregator|shared",
     "subset layout: one file per aggregator or one shared file", O(group_files)},
    {"json", "json", IOLAB_OPT_STR, NULL, NULL, NULL,
     "write the JSON result to this file; without it the JSON goes to stdout and the table to stderr", O(json)},
    {"quiet", "quiet", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "no table (only the JSON)", O(quiet)},
    {"progress", "progress", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "print 'progress <rep> <op> <pass> <done>/<total>' on stderr after each phase, and within "
     "a phase at most every 0.5 s 'progress-bytes <rep> <op> <pass> <bytes>/<total> <seconds>' "
     "(rank 0's own share scaled to all ranks)",
     O(progress)},
    {"list-options", NULL, IOLAB_OPT_ACTION, NULL, NULL, NULL,
     "print this option table as JSON and exit", 0},
    {"help", NULL, IOLAB_OPT_ACTION, NULL, NULL, NULL, "print help and exit", 0},
    {"version", NULL, IOLAB_OPT_ACTION, NULL, NULL, NULL, "print the version and exit", 0},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};
