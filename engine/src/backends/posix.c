/* iolab-bench backend "posix": open/pread/pwrite/close on plain files.
 * Modes: buffered (page cache), sync (O_DSYNC: every write reaches storage), fsync (buffered,
 * fsync before close, inside the timing) and direct (O_DIRECT: no page cache; the core's
 * buffers are aligned to the logical block size, sizes and offsets are checked here).
 * --posix.preallocate reserves each file's blocks with posix_fallocate before the timed
 * writes (as fio does): without it, O_DIRECT writes that extend a file are serialised by
 * ext4's inode lock. --posix.queue-depth N keeps N requests in flight per rank, each slot
 * refilled as it completes, like fio's io_uring and libaio engines; --posix.aio chooses the
 * engine (posix_aio.c: io_uring through liburing, Linux AIO through libaio, each built when
 * its library is found). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend.h"
#include "posix_aio.h"

enum { MODE_BUFFERED = 0, MODE_SYNC, MODE_FSYNC, MODE_DIRECT };

typedef struct posix_opts {
    int mode;
    bool preallocate;
    int64_t queue_depth;
    int aio;  /* iolab_aio_kind_t */
} posix_opts_t;

static const iolab_option_t posix_options[] = {
    {"posix.mode", "posix_mode", IOLAB_OPT_ENUM, "buffered", NULL, "buffered|sync|fsync|direct",
     "posix api: page cache, O_DSYNC, fsync before close, or O_DIRECT",
     offsetof(posix_opts_t, mode)},
    {"posix.preallocate", "posix_preallocate", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "posix api: posix_fallocate each file to its final size before the timed writes",
     offsetof(posix_opts_t, preallocate)},
    {"posix.queue-depth", "posix_queue_depth", IOLAB_OPT_INT, "1", "count", NULL,
     "posix api: requests in flight per rank (engine: --posix.aio), like fio's iodepth; "
     "1 = pread/pwrite one at a time", offsetof(posix_opts_t, queue_depth)},
    {"posix.aio", "posix_aio", IOLAB_OPT_ENUM, "auto", NULL, IOLAB_AIO_CHOICES,
     "posix api, --posix.queue-depth > 1: the asynchronous engine, io_uring (liburing) or "
     "libaio (Linux AIO, asynchronous with --posix.mode direct only); auto = libaio for "
     "O_DIRECT writes with --posix.preallocate, io_uring otherwise (falling back to the one "
     "built)",
     offsetof(posix_opts_t, aio)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

/* The backend's state: its options, and the queues kept between phases (posix_aio.h). */
typedef struct posix_state {
    const posix_opts_t *o;
    iolab_aio_spares_t spares;
    int overwrite;  /* --use-existing: write into the file as it is, no truncation */
} posix_state_t;

typedef struct posix_file {
    int fd, mode, wrote;
    iolab_aio_t *queue;  /* --posix.queue-depth > 1 */
    posix_state_t *st;   /* where the queue goes back at close */
} posix_file_t;

/* O_DIRECT: sizes must be whole logical blocks, and the file system must accept the flag. */
static int check_direct(const iolab_cfg_t *cfg, const iolab_env_t *env, char *err,
                        size_t errlen)
{
    uint64_t lbs = env->logical_block_size ? env->logical_block_size : 512;
    if (cfg->layout == IOLAB_LAYOUT_SUBARRAY) {
        snprintf(err, errlen, "--posix.mode direct does not apply to --layout subarray or "
                 "--workload btio: their pieces are rows of elements, not aligned blocks");
        return EINVAL;
    }
    if (cfg->transfer % lbs != 0) {
        snprintf(err, errlen, "--posix.mode direct: --transfer %llu is not a multiple of the "
                 "logical block size %llu of %s (%s); O_DIRECT needs aligned sizes and offsets: "
                 "use a multiple of %llu or --posix.mode buffered",
                 (unsigned long long)cfg->transfer, (unsigned long long)lbs, env->dir,
                 env->fs_type, (unsigned long long)lbs);
        return EINVAL;
    }
    if (!env->dir_exists)
        return 0;  /* the core reports the missing directory */
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.iolab-odirect-probe.%d", env->dir, env->rank);
    int fd = open(probe, O_CREAT | O_RDWR | O_DIRECT, 0600);
    if (fd < 0) {
        int e = errno;
        unlink(probe);  /* some file systems create the file, then refuse the flag */
        if (e == EINVAL || e == EOPNOTSUPP) {
            snprintf(err, errlen, "the %s file system at %s refuses O_DIRECT (%s); use "
                     "--posix.mode buffered or sync, or a --path on another file system",
                     env->fs_type, env->dir, strerror(e));
            return EINVAL;
        }
        return 0;  /* permission problems are reported by the core's own checks */
    }
    close(fd);
    unlink(probe);
    return 0;
}

/* How the files are accessed, for --posix.aio auto's choice of engine. */
static unsigned aio_how(const posix_opts_t *o)
{
    return (o->mode == MODE_DIRECT ? IOLAB_AIO_DIRECT : 0u) |
           (o->preallocate ? IOLAB_AIO_RESERVED : 0u);
}

/* --posix.queue-depth > 1: the patterns a queue can keep full, and an engine built and
 * allowed here (a kernel or a container's seccomp filter may refuse io_uring or AIO). */
static int check_queue(const posix_opts_t *o, const iolab_cfg_t *cfg,
                       iolab_aio_spares_t *keep, char *err, size_t errlen)
{
    if (o->queue_depth < 1 || o->queue_depth > 4096) {
        snprintf(err, errlen, "--posix.queue-depth %lld: give 1 to 4096",
                 (long long)o->queue_depth);
        return EINVAL;
    }
    if (o->queue_depth == 1 && o->aio != IOLAB_AIO_AUTO) {
        snprintf(err, errlen, "--posix.aio %s applies with --posix.queue-depth 2 or more "
                 "(1 = pread/pwrite one at a time); add --posix.queue-depth N",
                 iolab_aio_name((iolab_aio_kind_t)o->aio));
        return EINVAL;
    }
    if (o->queue_depth == 1)
        return 0;
    if (cfg->threads > 1 || cfg->fsync_per_write || cfg->stonewall > 0 ||
        (cfg->layout != IOLAB_LAYOUT_FPP && cfg->layout != IOLAB_LAYOUT_SEGMENTED &&
         cfg->layout != IOLAB_LAYOUT_STRIDED) || cfg->metadata) {
        snprintf(err, errlen, "--posix.queue-depth applies to the fpp, segmented and strided "
                 "layouts, without --threads, --fsync-per-write or --stonewall");
        return EINVAL;
    }
    return iolab_aio_check((iolab_aio_kind_t)o->aio, (int)o->queue_depth, aio_how(o), keep,
                           err, errlen);
}

static void posix_fini(void *state)
{
    posix_state_t *st = state;
    iolab_aio_spares_free(&st->spares);
    free(st);
}

/* The queues --posix.queue-depth uses are set up here, before any timed phase. */
static int posix_init(void **state, const void *opts, const iolab_cfg_t *cfg,
                      const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen)
{
    (void)world;
    posix_state_t *st = calloc(1, sizeof *st);
    if (!st)
        return ENOMEM;
    st->o = opts;
    st->overwrite = cfg->use_existing;
    int e = check_queue(st->o, cfg, &st->spares, err, errlen);
    if (!e && st->o->mode == MODE_DIRECT)
        e = check_direct(cfg, env, err, errlen);
    if (e)
        posix_fini(st);  /* the core calls fini only after a successful init */
    else
        *state = st;
    return e;
}

static int posix_queue_depth(const void *state)
{
    return (int)((const posix_state_t *)state)->o->queue_depth;
}

static int posix_open(void *state, const iolab_open_args_t *a, void **fh, char *err,
                      size_t errlen)
{
    posix_state_t *st = state;
    const posix_opts_t *o = st->o;
    int flags = a->dir == IOLAB_WRITE ? O_WRONLY | O_CREAT : O_RDONLY;
    if (o->mode == MODE_SYNC)
        flags |= O_DSYNC;
    if (o->mode == MODE_DIRECT)
        flags |= O_DIRECT;
    int crank = 0, csize = 1;
    MPI_Comm_rank(a->comm, &crank);
    MPI_Comm_size(a->comm, &csize);
    int fd = -1, e = 0;
    /* A shared file is truncated once, by the first rank, before the others open it: a late
     * O_TRUNC would cut data another rank already wrote (or, preallocated, its blocks).
     * --use-existing (IOR -E) overwrites in place as IOR's POSIX create does (O_CREAT, never
     * O_TRUNC): a truncated file's pages and blocks are freed and allocated again, and ext4
     * flushes a file truncated and rewritten at its close (auto_da_alloc), which IOR's -E
     * write never pays. */
    if (a->dir == IOLAB_WRITE && crank == 0) {
        fd = open(a->path, flags | (o->preallocate || st->overwrite ? 0 : O_TRUNC), 0644);
        e = fd < 0 ? errno : 0;
    }
    if (csize > 1 && a->dir == IOLAB_WRITE)
        MPI_Barrier(a->comm);
    if (!(a->dir == IOLAB_WRITE && crank == 0)) {
        fd = open(a->path, flags, 0644);
        e = fd < 0 ? errno : 0;
    }
    if (fd < 0) {
        snprintf(err, errlen, "open %s: %s", a->path, strerror(e));
        return e;
    }
    posix_file_t *f = malloc(sizeof *f);
    if (!f) {
        close(fd);
        return ENOMEM;
    }
    *f = (posix_file_t){.fd = fd, .mode = o->mode, .wrote = a->dir == IOLAB_WRITE, .st = st};
    if (o->queue_depth > 1) {
        iolab_aio_kind_t k = iolab_aio_resolve((iolab_aio_kind_t)o->aio, a->dir, aio_how(o));
        int rc = iolab_aio_open(k, fd, (int)o->queue_depth, &st->spares, &f->queue, err,
                                errlen);
        if (rc) {
            close(fd);
            free(f);
            return rc;
        }
    }
    *fh = f;
    return 0;
}

/* --posix.preallocate, before the phase's barrier: the file's first rank creates it afresh
 * and reserves its final size (collective over a->comm). */
static int posix_prepare(void *state, const iolab_open_args_t *a, char *err, size_t errlen)
{
    const posix_opts_t *o = ((const posix_state_t *)state)->o;
    int crank = 0, e = 0;
    if (!o->preallocate || a->dir != IOLAB_WRITE)
        return 0;
    MPI_Comm_rank(a->comm, &crank);
    if (crank == 0) {
        int fd = open(a->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        e = fd < 0 ? errno : posix_fallocate(fd, 0, (off_t)a->file_bytes);
        if (fd >= 0 && close(fd) != 0 && !e)
            e = errno;
        if (e)
            snprintf(err, errlen, "posix_fallocate %s (%llu bytes): %s", a->path,
                     (unsigned long long)a->file_bytes, strerror(e));
    }
    MPI_Bcast(&e, 1, MPI_INT, 0, a->comm);
    return e;
}

static int64_t posix_xfer(void *fh, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len)
{
    return iolab_pio_rest(((const posix_file_t *)fh)->fd, dir, buf, offset, len, 0);
}

static int posix_xfer_queue(void *fh, iolab_dir_t dir, const iolab_queue_t *q)
{
    posix_file_t *f = fh;
    return f->queue ? iolab_aio_run(f->queue, dir, q) : EINVAL;
}

/* The engine --posix.queue-depth runs for dir (JSON: each phase's "queue"). */
static const char *posix_queue_engine(const void *state, iolab_dir_t dir)
{
    const posix_opts_t *o = ((const posix_state_t *)state)->o;
    return iolab_aio_name(iolab_aio_resolve((iolab_aio_kind_t)o->aio, dir, aio_how(o)));
}

static int posix_sync(void *fh)
{
    const posix_file_t *f = fh;
    return fsync(f->fd) == 0 ? 0 : errno;
}

static int posix_close(void *fh)
{
    posix_file_t *f = fh;
    int e = 0;
    if (f->mode == MODE_FSYNC && f->wrote && fsync(f->fd) != 0)
        e = errno;
    iolab_aio_close(f->queue, &f->st->spares);
    if (close(f->fd) != 0 && !e)
        e = errno;
    free(f);
    return e;
}

static int posix_remove(void *state, const char *path)
{
    (void)state;
    return unlink(path) == 0 || errno == ENOENT ? 0 : errno;
}

const iolab_backend_t iolab_backend_posix = {
    .name = "posix",
    .summary = "open/pread/pwrite/close: buffered, O_DSYNC, fsync before close, O_DIRECT",
    .caps = IOLAB_CAP_SHARED | IOLAB_CAP_THREADS | IOLAB_CAP_PLAIN_FILES |
            IOLAB_CAP_STORES_DATA | IOLAB_CAP_LOCAL_SYNC,
    .md = &iolab_md_posix,
    .options = posix_options,
    .options_size = sizeof(posix_opts_t),
    .init = posix_init,
    .fini = posix_fini,
    .prepare = posix_prepare,
    .open = posix_open,
    .xfer = posix_xfer,
    .xfer_vec = NULL,
    .xfer_queue = posix_xfer_queue,
    .queue_depth = posix_queue_depth,
    .queue_engine = posix_queue_engine,
    .sync = posix_sync,
    .get_info = NULL,
    .close = posix_close,
    .remove = posix_remove,
};
