/* iolab-bench: the backend operations table.
 *
 * A backend (posix, mpiio, hdf5, pnetcdf, null) is one .c file in backends/ that defines
 *     const iolab_backend_t iolab_backend_<name>;
 * and one line in backends.def. The core never tests a backend's name: it asks the
 * capability flags. Layouts, timing, threads, aggregation over MPI, verification, eviction and
 * output live in the core; a backend only moves bytes between a buffer and a file offset.
 *
 * Error convention: functions returning int return 0 or a positive errno; xfer returns the
 * bytes moved or a negative errno. On error the backend may write one line (what, where) into
 * err (NUL-terminated, errlen bytes). The core decides what to do (exit 2 on init, a "failed"
 * run on I/O). A backend never calls exit() or MPI_Abort(). */
#ifndef IOLAB_BACKEND_H
#define IOLAB_BACKEND_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "decomp.h"
#include "env.h"
#include "options.h"

typedef enum { IOLAB_WRITE = 0, IOLAB_READ = 1 } iolab_dir_t;

/* Capability flags: what the core may ask of a backend. */
enum {
    IOLAB_CAP_SHARED = 1u << 0,      /* many ranks may open one file together (comm size > 1) */
    IOLAB_CAP_COLLECTIVE = 1u << 1,  /* honours cfg->collective (xfer/xfer_vec are collective) */
    IOLAB_CAP_VECTOR = 1u << 2,      /* has xfer_vec: one call for a strided pattern */
    IOLAB_CAP_THREADS = 1u << 3,     /* xfer may run concurrently from threads on one handle */
    IOLAB_CAP_HINTS = 1u << 4,       /* takes MPI-IO hints; has get_info */
    IOLAB_CAP_PLAIN_FILES = 1u << 5, /* a file is a plain file at args->path: the core may
                                        fsync/fadvise/mincore/unlink/stat it */
    IOLAB_CAP_STORES_DATA = 1u << 6, /* reads return what was written (verify possible) */
    IOLAB_CAP_BOXES = 1u << 7,       /* has xfer_boxes; opens N-D files (open_args.array) */
    IOLAB_CAP_LOCAL_SYNC = 1u << 8   /* sync is not collective (a rank may sync alone) */
};

/* A strided access: count pieces of length bytes, piece i at offset + i * stride. */
typedef struct iolab_vec {
    uint64_t offset, count, length, stride;
} iolab_vec_t;

/* --posix.queue-depth: the core's side of a queue of transfers. next() fills slot s (0 ..
 * depth-1; its buffer is free again) with the next transfer and returns 1, or 0 when none
 * is left (the end, an error, an interrupt); done() gives slot s back with the bytes moved or
 * -errno. The backend calls them from the thread that called xfer_queue. */
typedef struct iolab_qslot {
    void *buf;
    uint64_t offset, len;
} iolab_qslot_t;

typedef struct iolab_queue {
    int (*next)(void *ctx, int slot, iolab_qslot_t *q);
    void (*done)(void *ctx, int slot, int64_t result);
    void *ctx;
    int depth;
} iolab_queue_t;

/* What open needs. All pointers stay valid until close returns. */
typedef struct iolab_open_args {
    const char *path;         /* file name (fpp: already suffixed with .<rank>) */
    MPI_Comm comm;            /* ranks opening this file together; open, close and (when
                                 cfg->collective) xfer/xfer_vec are collective over it.
                                 MPI_COMM_SELF for a private file */
    iolab_dir_t dir;          /* IOLAB_WRITE: create (truncate); IOLAB_READ: existing file */
    uint64_t file_bytes;      /* final logical size of the file (an HDF5 dataset's extent) */
    MPI_Info info;            /* requested hints (IOLAB_CAP_HINTS), else MPI_INFO_NULL */
    const iolab_decomp_t *array; /* subarray layout (IOLAB_CAP_BOXES): the file is this N-D
                                    array (record dimension first) of array->elem-byte
                                    elements; NULL: a 1-D array of file_bytes bytes */
} iolab_open_args_t;

/* The metadata calls of --metadata (mdtest's backend mkdir/rmdir/stat/rename and its item
 * create/open/read/write/close/unlink), as IOR's aiori table has them: posix makes the
 * system calls, null makes none and succeeds (IOR's DUMMY: a stat leaves *st zeroed, a read
 * or write moves every byte). Each returns 0 or a positive errno; open returns a descriptor
 * (>= 0) or a negative errno; read and write the bytes moved or a negative errno. */
typedef struct iolab_md_calls {
    int (*mkdir)(const char *path, mode_t mode);
    int (*rmdir)(const char *path);
    int (*stat)(const char *path, struct stat *st);
    int (*rename)(const char *from, const char *to);
    int (*unlink)(const char *path);
    int (*mknod)(const char *path, mode_t mode);
    int (*open)(const char *path, int flags, mode_t mode);
    int64_t (*read)(int fd, void *buf, size_t len);
    int64_t (*write)(int fd, const void *buf, size_t len);
    int (*fsync)(int fd);
    int (*close)(int fd);
    void (*sync)(void);
} iolab_md_calls_t;

extern const iolab_md_calls_t iolab_md_posix, iolab_md_null;  /* md_calls.c */

typedef struct iolab_backend {
    const char *name;
    const char *summary;            /* one line for --help */
    unsigned caps;                  /* IOLAB_CAP_* */
    const iolab_option_t *options;  /* "<name>.<opt>" rows, NULL-name terminated, or NULL */
    size_t options_size;            /* size of the struct those rows' offsets point into; the
                                       core allocates it, fills defaults and parses into it */
    uint64_t max_call_bytes;        /* most bytes one xfer/xfer_vec can move (0: no limit);
                                       the core refuses larger calls as bad input */
    const char *max_call_why;       /* why, for that message */
    const iolab_md_calls_t *md;     /* --metadata's calls; NULL: --metadata refuses it */

    /* Check the configuration and set up. Called on every rank, also for a run that will
     * stop on bad input elsewhere. opts: this backend's filled options struct (read-only,
     * owned by the core). On bad input return EINVAL (or the errno) with one line in err:
     * what is wrong, where, how to fix. *state is passed to every other call. */
    int (*init)(void **state, const void *opts, const iolab_cfg_t *cfg,
                const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen);
    void (*fini)(void *state);

    /* Optional: make a file ready before a phase's barrier, outside the timing (posix:
     * preallocate). Same arguments as open, called where open will be (collective over
     * a->comm). Returns 0 or an errno with one line in err. NULL: nothing to do. */
    int (*prepare)(void *state, const iolab_open_args_t *a, char *err, size_t errlen);

    /* Open (or create) one file; *fh is the handle for the other calls. */
    int (*open)(void *state, const iolab_open_args_t *args, void **fh, char *err, size_t errlen);

    /* Move len bytes between buf and the file at offset. len may be 0 (a collective call
     * a rank must still make). Returns bytes moved, or -errno. */
    int64_t (*xfer)(void *fh, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len);

    /* IOLAB_CAP_VECTOR: one call for v->count pieces; buf holds them back to back.
     * v->count may be 0. Returns bytes moved, or -errno. NULL when not capable. */
    int64_t (*xfer_vec)(void *fh, iolab_dir_t dir, void *buf, const iolab_vec_t *v);

    /* IOLAB_CAP_BOXES: one call for n boxes of the N-D array (in file order); buf holds them
     * back to back, each packed in C order. A box may have no elements (count 0: a rank's
     * empty part of a call the others make). Every rank of the file makes the same calls,
     * also with --collective off (setting a view is collective). Returns bytes moved, or
     * -errno. NULL when not capable. */
    int64_t (*xfer_boxes)(void *fh, iolab_dir_t dir, void *buf, const iolab_box_t *boxes,
                          int n);

    /* Optional: transfers with up to q->depth requests in flight (io_uring), each slot
     * refilled as it completes, until next() has none. Returns 0, or an errno when the
     * queue itself failed. NULL when not capable. */
    int (*xfer_queue)(void *fh, iolab_dir_t dir, const iolab_queue_t *q);
    /* Optional: requests kept in flight per rank (the backend's option; 1: one at a time,
     * through xfer). Called after init. */
    int (*queue_depth)(const void *state);
    /* Optional: the name of the engine that keeps that queue for dir ("io_uring", "libaio"),
     * recorded with each phase. NULL when not capable. */
    const char *(*queue_engine)(const void *state, iolab_dir_t dir);

    /* Flush written data to stable storage (fsync, MPI_File_sync, H5Fflush). */
    int (*sync)(void *fh);

    /* IOLAB_CAP_HINTS: the effective hints (MPI_File_get_info); the core frees *info with
     * MPI_Info_free. NULL when not capable. */
    int (*get_info)(void *fh, MPI_Info *info);

    /* Close and free the handle (collective over the comm given to open). */
    int (*close)(void *fh);

    /* Delete a file the run created. Called by one rank per file; ENOENT is not an error. */
    int (*remove)(void *state, const char *path);
} iolab_backend_t;

/* The backends built into this binary (backends.def), in list order. */
const iolab_backend_t *const *iolab_backends_all(size_t *n);

/* The backend named name, or NULL when it is not built. */
const iolab_backend_t *iolab_backend_find(const char *name);

#endif
