/* iolab-bench: the resolved run configuration (the core's options). */
#ifndef IOLAB_CONFIG_H
#define IOLAB_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

typedef enum {
    IOLAB_LAYOUT_FPP = 0,    /* file per process */
    IOLAB_LAYOUT_SEGMENTED,  /* shared file, each rank one contiguous block per segment */
    IOLAB_LAYOUT_STRIDED,    /* shared file, ranks' transfers interleave */
    IOLAB_LAYOUT_SERIAL,     /* rank 0 gathers everything over MPI and does all the I/O */
    IOLAB_LAYOUT_SUBSET,     /* one aggregator per group of k ranks (N:M) */
    IOLAB_LAYOUT_SUBARRAY    /* shared file: an N-D array, each rank its boxes (decomp.h) */
} iolab_layout_kind_t;

typedef enum { IOLAB_WORKLOAD_LAYOUT = 0, IOLAB_WORKLOAD_BTIO } iolab_workload_t;

typedef enum { IOLAB_METADATA_OFF = 0, IOLAB_METADATA_EASY, IOLAB_METADATA_HARD } iolab_metadata_t;
typedef enum { IOLAB_MD_DIR_PRESET = 0, IOLAB_MD_DIR_SHARED, IOLAB_MD_DIR_UNIQUE } iolab_md_dir_t;
typedef enum { IOLAB_MD_PHASES_FILES = 0, IOLAB_MD_PHASES_DIRS, IOLAB_MD_PHASES_BOTH } iolab_md_phases_t;
/* metadata: every file phase, or one of them with the files left for the next run (mdtest
 * -C, -T, -E, -r; IO500 runs each as its own phase, hours apart) */
typedef enum { IOLAB_MD_STEP_ALL = 0, IOLAB_MD_STEP_CREATE, IOLAB_MD_STEP_STAT, IOLAB_MD_STEP_READ,
               IOLAB_MD_STEP_REMOVE } iolab_md_step_t;

/* metadata: where the items live and how they are named (iolab's <path>.md/file.iolab.R.I, or
 * mdtest's <path>/test-dir.<rep>-0/mdtest_tree.0/.../file.mdtest.R.I, trees included) */
typedef enum { IOLAB_MD_LAYOUT_IOLAB = 0, IOLAB_MD_LAYOUT_MDTEST } iolab_md_layout_t;

typedef enum { IOLAB_GROUP_FILES_AGGREGATOR = 0, IOLAB_GROUP_FILES_SHARED } iolab_group_files_t;

/* Every core option; filled from iolab_config_options (config.c). Read-only for backends. */
typedef struct iolab_cfg {
    char *api;                 /* backend name */
    int layout;                /* iolab_layout_kind_t */
    uint64_t transfer;         /* bytes per I/O call */
    uint64_t block;            /* bytes per rank per segment */
    uint64_t segments;
    bool write, read;          /* resolved: neither given means both */
    int64_t reps;
    char *path;                /* file path prefix; fpp appends .<rank> */
    bool collective;           /* collective transfers (backends with IOLAB_CAP_COLLECTIVE) */
    bool file_view;            /* one call per rank through a strided view (IOLAB_CAP_VECTOR) */
    iolab_strlist_t hint;      /* "key=value" MPI-IO hints */
    char *hints_file;
    int64_t threads;           /* threads per rank (IOLAB_CAP_THREADS) */
    bool reorder;              /* read what another rank wrote */
    int64_t read_times;        /* read passes per repetition */
    bool evict;                /* evict files from the page cache before the first read pass */
    bool verify;
    bool keep;                 /* keep the files at the end */
    bool fsync;                /* sync before close after writing */
    int64_t group;             /* subset: ranks per aggregator; 0 = ranks per host */
    int group_files;           /* iolab_group_files_t */
    int workload;              /* iolab_workload_t */
    char *grid, *pgrid;        /* subarray/btio: "2048x1024x256"; process grid (NULL: MPI's) */
    uint64_t elem;             /* subarray/btio: bytes per element */
    uint64_t steps;            /* subarray/btio: records (0: the workload's default) */
    bool random;               /* transfers of a rank in a random order (IOR -z) */
    bool fsync_per_write;      /* sync after every write call (IOR -Y) */
    double stonewall;          /* seconds; stop, then wear out to the furthest rank (IOR -D) */
    bool unique_dir;           /* fpp: each rank's file in its own directory (IOR -u) */
    /* --- IOR compatibility (ior_compat.c, phase.c; the iolab ior front end's options) --- */
    int64_t random_seed;       /* --random: IOR's shuffle seeded so (-1: the engine's own) */
    bool random_repeat;        /* IOR -z -z: a random block per segment, repeats allowed */
    uint64_t random_prefill;   /* IOR --randomPrefill: bytes per prefill call (0: none) */
    int64_t fpp_digits;        /* fpp file names <path>.<rank> with this many digits */
    bool remove_each_rep;      /* IOR: remove before each write and after each repetition */
    bool use_existing;         /* IOR -E: no removal before a write */
    bool file_per_rep;         /* IOR -m: names get .<repetition> */
    double phase_delay;        /* IOR -d: seconds every rank sleeps before a phase */
    bool step_barriers;        /* IOR -g: barriers after open and after the transfers */
    double max_time;           /* IOR -T: no phase starts after this many seconds (0: off) */
    int64_t reorder_nodes;     /* IOR -C -Q: read the ranks this many hosts on (0: own) */
    int64_t reorder_random;    /* IOR -Z: 1 each rank draws a rank to read, 2 a shuffle */
    int64_t reorder_seed;      /* IOR -X: their seed (negative: -X + repetition) */
    bool stonewall_stop;       /* IOR -D without wear-out: each rank stops at the deadline */
    bool check_write;          /* IOR -W: after each write, a read pass checking it */
    int64_t read_xfers;        /* IOR stoneWallingStatusFile: transfers each rank reads per
                                  read phase (0: all; -1: unset, a stonewalled write's) */
    /* --- end IOR compatibility --- */
    int metadata;              /* iolab_metadata_t: the metadata benchmark instead of I/O */
    uint64_t md_files;         /* metadata: files per rank */
    uint64_t md_size;          /* metadata: bytes per file (0: the preset's) */
    int md_dir;                /* metadata: iolab_md_dir_t */
    int md_phases;             /* metadata: iolab_md_phases_t (mdtest -F, -D, neither) */
    int md_step;               /* metadata: iolab_md_step_t (mdtest -C, -T, -E, -r) */
    char *md_only;             /* metadata: mdtest's phase letters as words (-C -T -E -U -r) */
    /* --- metadata: mdtest's layout, trees and per-item options (metadata.c) --- */
    int md_layout;             /* iolab_md_layout_t */
    int64_t md_stride;         /* ranks between creator and stat/read/remove (mdtest -N) */
    int64_t md_depth;          /* tree depth below the top directory (mdtest -z) */
    int64_t md_branch;         /* subdirectories per tree directory (mdtest -b) */
    uint64_t md_per_dir;       /* items per tree directory (mdtest -I; 0: all in one) */
    bool md_leaf_only;         /* items only in the tree's leaves (mdtest -L) */
    int64_t md_random_seed;    /* stat and read in mdtest's shuffled order (mdtest -R) */
    bool md_seed_per_rank;     /* the seed plus the rank, as mdtest -R (not --random-seed) */
    bool md_mknod;             /* create with mknod, no data (mdtest -k) */
    bool md_sync;              /* sync() after each phase's loop, timed (mdtest -Y) */
    double md_pre_delay;       /* rank 0 sleeps before each block of phases (mdtest -p) */
    int64_t md_dir_loops;      /* test directories each phase runs over (mdtest -n / -I) */
    bool md_collective;        /* rank 0 creates and removes for all (mdtest -c) */
    bool md_warn;              /* a failing call warns and the phase goes on (mdtest) */
    /* --- end of metadata block --- */
    char *json;                /* JSON output file; NULL/"-" = stdout */
    bool quiet, progress;
} iolab_cfg_t;

/* The core option table (terminated by a NULL name row). */
extern const iolab_option_t iolab_config_options[];

#endif
