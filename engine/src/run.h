/* iolab-bench: one run: its configuration, environment, backend and the result tree that the
 * JSON and table renderers walk. */
#ifndef IOLAB_RUN_H
#define IOLAB_RUN_H

#include <mpi.h>
#include <signal.h>
#include <stdint.h>

#include "backend.h"
#include "config.h"
#include "env.h"
#include "hints.h"
#include "layout.h"
#include "options.h"
#include "placement.h"

#define IOLAB_ERRLEN 1024

/* One rank's part of a phase; times in seconds from the phase's barrier. */
typedef struct iolab_rank_stat {
    uint64_t bytes, ops;
    double open_s, xfer_s, close_s;
    double start, end;
} iolab_rank_stat_t;

typedef struct iolab_minmax {
    double min, max;
} iolab_minmax_t;

/* One write phase or one read pass of one repetition (complete on rank 0 only). */
typedef struct iolab_phase {
    int op;                   /* iolab_dir_t */
    int rep, pass;
    const char *cache;        /* "n/a" | "warm" | "cold" | "unknown" */
    int evict_attempted, evict_verified;
    double resident_fraction; /* of the files' pages before the pass; < 0 unknown */
    int reorder_shift;        /* ranks between reader and writer; 0 = own data */
    int stonewall_hit;        /* --stonewall: a rank reached the deadline */
    uint64_t sw_min, sw_max;  /* --stonewall: fewest / most transfers a rank had done at its
                                 deadline (sw_max = every rank's count after wear-out) */
    uint64_t warnings;        /* --md-warn: failed calls of all ranks (the phase went on) */
    char warning[IOLAB_ERRLEN];  /* the first of them (lowest rank) */
    int queue_depth;          /* --posix.queue-depth: requests in flight per rank; 0 none */
    const char *queue_engine; /* the engine that kept them ("io_uring", "libaio") */
    uint64_t bytes, ops;
    double time_s, bw, iops;
    iolab_minmax_t open_s, xfer_s, close_s;
    iolab_rank_stat_t *per_rank;  /* ranks entries */
} iolab_phase_t;

/* The first failure of the run (an I/O error, a verify mismatch, an interrupt). */
typedef struct iolab_failure {
    int set;
    const char *phase;        /* "write" | "read" | "open" ... */
    int rank, err;            /* err: errno, 0 for a verify mismatch */
    char message[IOLAB_ERRLEN];
    uint64_t bytes_done;
} iolab_failure_t;

typedef struct iolab_verify_result {
    uint64_t errors;          /* transfers with at least one wrong byte, all ranks */
    int bad;                  /* first_bad below is set */
    int rank, reader;         /* whose data was wrong, who read it */
    uint64_t offset;          /* file offset of the first wrong byte */
    char file[4096];
} iolab_verify_result_t;

/* A transfer buffer and the bytes allocated for it. */
typedef struct iolab_buf {
    void *p;
    uint64_t cap;
} iolab_buf_t;

typedef struct iolab_run {
    MPI_Comm world;
    int rank, ranks;
    iolab_cfg_t cfg;
    iolab_optgroup_t *groups;  /* core + every built backend */
    size_t ngroups;
    const iolab_backend_t *be;
    const void *be_opts;       /* the selected backend's options struct */
    void *be_state;
    iolab_env_t env;
    iolab_layout_t layout;
    iolab_decomp_t decomp;     /* subarray layout / btio: the N-D array and its boxes */
    uint64_t sw_written;       /* --stonewall: transfers per rank the last write moved (reads
                                  read as many); 0 = all */
    int sw_stopped;            /* --stonewall-stop: sw_written is this rank's, even 0 */
    iolab_hints_t hints;
    MPI_Comm group_comm;       /* aggregated layouts: my group, aggregator = rank 0 */
    MPI_Comm agg_comm;         /* subset to one shared file: the aggregators */
    int reorder_shift;
    int64_t ior_seed;          /* --random-seed / --random-repeat: the seed all ranks use */
    int cur_rep;               /* the repetition running (--file-per-rep names) */
    uint64_t buf_align;
    iolab_buf_t *bufs;         /* transfer buffers kept for the whole run (phase.c) */
    int nbufs;
    iolab_phase_t *phases;     /* rank 0 */
    size_t nphases, phases_cap;
    const char *status;        /* "ok" | "failed" | "interrupted" */
    iolab_failure_t fail;
    iolab_verify_result_t verify;
    iolab_placement_t place;   /* where this rank ran (start and end samples) */
    iolab_placement_t *placements; /* rank 0: every rank's, gathered after the run */
    int files_exist;           /* the run created files that may need removing */
    int dirs_made;             /* --unique-dir: this rank created its directory */
    int argc;                  /* the command line, recorded in the JSON */
    char **argv;
} iolab_run_t;

/* Set by SIGINT/SIGTERM; checked between transfers. */
extern volatile sig_atomic_t iolab_interrupted;

/* --unique-dir: the directory of rank f's file (<dir of --path>/<f>). */
void iolab_run_dir_path(const iolab_run_t *run, int f, char *buf, size_t len);

/* Path of file f of the layout into buf (fpp: <path>.<f>, f with --fpp-digits digits,
 * then .<repetition> with --file-per-rep;
 * with --unique-dir
 * <dir>/<f>/<name>.<f>; subset aggregator files <path>.a<f>, else <path>). */
void iolab_run_file_path(const iolab_run_t *run, int f, char *buf, size_t len);

/* Run one phase (collective over run->world). Appends the result to run->phases on rank 0
 * and records failures in run->fail / run->verify (identical on all ranks). Returns 0, or 1
 * when the run must stop (failure or interrupt, agreed by all ranks). */
int iolab_phase_run(iolab_run_t *run, int op, int rep, int pass);

/* Phase ops beyond iolab_dir_t: the metadata benchmark's (metadata.c). */
enum { IOLAB_MD_CREATE = 2, IOLAB_MD_STAT, IOLAB_MD_READ, IOLAB_MD_REMOVE,
       IOLAB_MD_DIR_CREATE, IOLAB_MD_DIR_STAT, IOLAB_MD_DIR_RENAME, IOLAB_MD_DIR_REMOVE,
       IOLAB_MD_TREE_CREATE, IOLAB_MD_TREE_REMOVE };
#define IOLAB_MD_MAX_OPS 10

/* "write", "read", "create", "stat", "open_read", "remove", "dir_create", "dir_stat",
 * "dir_rename", "dir_remove", "tree_create", "tree_remove". */
const char *iolab_op_name(int op);

/* Pieces of a phase shared with the metadata benchmark (collective over run->world):
 * everyone learns the lowest failing rank's errno and message; rank 0 gathers every rank's
 * numbers into ph (time = latest end - earliest start) and appends it to run->phases. */
void iolab_phase_agree_failure(iolab_run_t *run, int op, int err, const char *why,
                               uint64_t bytes_done);
void iolab_phase_collect(iolab_run_t *run, iolab_phase_t *ph, const iolab_rank_stat_t *me);
void iolab_phase_append(iolab_run_t *run, const iolab_phase_t *ph);

/* --metadata: the metadata benchmark's repetitions (create, stat, open+read, remove of
 * --md-files files per rank). Stops at the first failure or interrupt. */
void iolab_metadata_run(iolab_run_t *run);
/* The metadata benchmark's resolved shape: a directory per rank (*unique) and file size. */
void iolab_metadata_plan(const iolab_run_t *run, int *unique, uint64_t *size);
/* The metadata options' own checks (trees, stride, seeds; metadata.c): 0, or -1 with the
 * one-line reason in err. */
int iolab_metadata_check(const iolab_run_t *run, char *err, size_t len);
/* The metadata phases a repetition runs, in mdtest's order (directories, then files), into
 * ops (room for IOLAB_MD_MAX_OPS); returns how many. */
int iolab_metadata_ops(const iolab_run_t *run, int *ops);

/* Evict (when asked) and measure the page-cache residency of the run's files before a read
 * pass (collective). Fills the cache fields of *ph on every rank. */
void iolab_phase_cache(iolab_run_t *run, int pass, iolab_phase_t *ph);
/* The transfer buffers the phases kept (at the end of the run). */
void iolab_phase_free_buffers(iolab_run_t *run);

#include "stats.h"

typedef enum { IOLAB_METRIC_BW = 0, IOLAB_METRIC_IOPS, IOLAB_METRIC_TIME } iolab_metric_t;

/* Statistics over repetitions of one metric of the phases with this op and pass (rank 0).
 * The one place the summary numbers are computed; both renderers use it. */
iolab_stats_t iolab_run_stats(const iolab_run_t *run, int op, int pass, iolab_metric_t m);

/* Render the result (rank 0). */
void iolab_report_json(const iolab_run_t *run, FILE *out);
void iolab_report_table(const iolab_run_t *run, FILE *out);

#endif
