/* iolab-bench backend "posix": open/pread/pwrite/close on plain files.
 * Modes: buffered (page cache), sync (O_DSYNC: every write reaches storage), fsync (buffered,
 * fsync before close, inside the timing) and direct (O_DIRECT: no page cache; the core's
 * buffers are aligned to the logical block size, sizes and offsets are checked here).
 * --posix.preallocate reserves each file's blocks with posix_fallocate before the timed
 * writes (as fio does): without it, O_DIRECT writes that extend a file are serialised by
 * ext4's inode lock. --posix.queue-depth N keeps N requests in flight per rank through
 * io_uring (liburing), each slot refilled as it completes, like fio's io_uring engine; the
 * backend is built without it when liburing is missing. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef IOLAB_WITH_LIBURING
#include <liburing.h>
#endif

#include "backend.h"

enum { MODE_BUFFERED = 0, MODE_SYNC, MODE_FSYNC, MODE_DIRECT };

typedef struct posix_opts {
    int mode;
    bool preallocate;
    int64_t queue_depth;
} posix_opts_t;

static const iolab_option_t posix_options[] = {
    {"posix.mode", "posix_mode", IOLAB_OPT_ENUM, "buffered", NULL, "buffered|sync|fsync|direct",
     "posix api: page cache, O_DSYNC, fsync before close, or O_DIRECT",
     offsetof(posix_opts_t, mode)},
    {"posix.preallocate", "posix_preallocate", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "posix api: posix_fallocate each file to its final size before the timed writes",
     offsetof(posix_opts_t, preallocate)},
    {"posix.queue-depth", "posix_queue_depth", IOLAB_OPT_INT, "1", "count", NULL,
     "posix api: requests in flight per rank through io_uring (liburing), like fio's iodepth; "
     "1 = pread/pwrite one at a time", offsetof(posix_opts_t, queue_depth)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

typedef struct posix_file {
    int fd, mode, wrote;
#ifdef IOLAB_WITH_LIBURING
    struct io_uring ring;
    int have_ring;
#endif
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

/* --posix.queue-depth > 1: the patterns a queue can keep full, and an io_uring the kernel
 * (or a container's seccomp filter) lets this process create. */
static int check_queue(const posix_opts_t *o, const iolab_cfg_t *cfg, char *err,
                       size_t errlen)
{
    if (o->queue_depth < 1 || o->queue_depth > 4096) {
        snprintf(err, errlen, "--posix.queue-depth %lld: give 1 to 4096",
                 (long long)o->queue_depth);
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
#ifdef IOLAB_WITH_LIBURING
    struct io_uring ring;
    int rc = io_uring_queue_init((unsigned)o->queue_depth, &ring, 0);
    if (rc < 0) {
        snprintf(err, errlen, "--posix.queue-depth: io_uring is not available here (%s): the "
                 "kernel or a container's seccomp filter refuses io_uring_setup; use "
                 "--posix.queue-depth 1 or --threads", strerror(-rc));
        return EINVAL;
    }
    io_uring_queue_exit(&ring);
    return 0;
#else
    snprintf(err, errlen, "--posix.queue-depth needs liburing, and this iolab-bench was built "
             "without it; install liburing-dev (Debian) and re-run ./setup");
    return EINVAL;
#endif
}

static int posix_init(void **state, const void *opts, const iolab_cfg_t *cfg,
                      const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen)
{
    (void)world;
    const posix_opts_t *o = opts;
    *state = (void *)opts;
    int e = check_queue(o, cfg, err, errlen);
    if (!e && o->mode == MODE_DIRECT)
        e = check_direct(cfg, env, err, errlen);
    return e;
}

static int posix_queue_depth(const void *state)
{
    return (int)((const posix_opts_t *)state)->queue_depth;
}

static void posix_fini(void *state) { (void)state; }

static int posix_open(void *state, const iolab_open_args_t *a, void **fh, char *err,
                      size_t errlen)
{
    const posix_opts_t *o = state;
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
     * O_TRUNC would cut data another rank already wrote (or, preallocated, its blocks). */
    if (a->dir == IOLAB_WRITE && crank == 0) {
        fd = open(a->path, flags | (o->preallocate ? 0 : O_TRUNC), 0644);
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
    *f = (posix_file_t){.fd = fd, .mode = o->mode, .wrote = a->dir == IOLAB_WRITE};
#ifdef IOLAB_WITH_LIBURING
    if (o->queue_depth > 1) {
        int rc = io_uring_queue_init((unsigned)o->queue_depth, &f->ring, 0);
        if (rc < 0) {
            snprintf(err, errlen, "io_uring_queue_init(%lld): %s", (long long)o->queue_depth,
                     strerror(-rc));
            close(fd);
            free(f);
            return -rc;
        }
        f->have_ring = 1;
    }
#endif
    *fh = f;
    return 0;
}

/* --posix.preallocate, before the phase's barrier: the file's first rank creates it afresh
 * and reserves its final size (collective over a->comm). */
static int posix_prepare(void *state, const iolab_open_args_t *a, char *err, size_t errlen)
{
    const posix_opts_t *o = state;
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
    const posix_file_t *f = fh;
    uint64_t done = 0;
    while (done < len) {
        ssize_t n = dir == IOLAB_WRITE
                        ? pwrite(f->fd, (char *)buf + done, len - done, (off_t)(offset + done))
                        : pread(f->fd, (char *)buf + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;  /* end of file: the core reports a short read */
        done += (uint64_t)n;
    }
    return (int64_t)done;
}

#ifdef IOLAB_WITH_LIBURING
/* A request that moved only done of its bytes: the rest with pread/pwrite, so that the real
 * cause (ENOSPC) or the end of the file shows as with the synchronous path. */
static int64_t finish_short(int fd, iolab_dir_t dir, const iolab_qslot_t *q, int64_t done)
{
    posix_file_t tmp = {.fd = fd};
    int64_t n = posix_xfer(&tmp, dir, (char *)q->buf + done, q->offset + (uint64_t)done,
                           q->len - (uint64_t)done);
    return n < 0 ? n : done + n;
}

/* Keep q->depth requests in flight: fill every free slot, wait for one completion, give it
 * back, fill again, until the core has nothing left and nothing is in flight. */
static int posix_xfer_queue(void *fh, iolab_dir_t dir, const iolab_queue_t *q)
{
    posix_file_t *f = fh;
    int *free_slots = malloc((size_t)q->depth * sizeof *free_slots), nfree = q->depth;
    iolab_qslot_t *slots = malloc((size_t)q->depth * sizeof *slots);
    int inflight = 0, more = 1, e = 0;
    if (!free_slots || !slots) {
        free(free_slots);
        free(slots);
        return ENOMEM;
    }
    for (int s = 0; s < q->depth; s++)
        free_slots[s] = q->depth - 1 - s;
    while (!e) {
        int queued = 0;
        while (more && nfree > 0) {
            int s = free_slots[nfree - 1];
            if (!(more = q->next(q->ctx, s, &slots[s])))
                break;
            iolab_qslot_t slot = slots[s];
            struct io_uring_sqe *sqe = io_uring_get_sqe(&f->ring);
            if (dir == IOLAB_WRITE)
                io_uring_prep_write(sqe, f->fd, slot.buf, (unsigned)slot.len,
                                    (__u64)slot.offset);
            else
                io_uring_prep_read(sqe, f->fd, slot.buf, (unsigned)slot.len,
                                   (__u64)slot.offset);
            io_uring_sqe_set_data64(sqe, (__u64)s);
            nfree--;
            queued++;
        }
        if (queued && io_uring_submit(&f->ring) < 0)
            e = EIO;
        inflight += queued;
        if (!inflight || e)
            break;
        struct io_uring_cqe *cqe;
        int rc = io_uring_wait_cqe(&f->ring, &cqe);
        if (rc == -EINTR)
            continue;
        if (rc < 0) {
            e = -rc;
            break;
        }
        int s = (int)io_uring_cqe_get_data64(cqe);
        int64_t res = cqe->res;  /* bytes, or -errno */
        if (res >= 0 && (uint64_t)res < slots[s].len)
            res = finish_short(f->fd, dir, &slots[s], res);
        q->done(q->ctx, s, res);
        io_uring_cqe_seen(&f->ring, cqe);
        free_slots[nfree++] = s;
        inflight--;
    }
    while (inflight > 0) {  /* after a failure: let the kernel finish with the buffers */
        struct io_uring_cqe *cqe;
        if (io_uring_wait_cqe(&f->ring, &cqe) < 0)
            break;
        io_uring_cqe_seen(&f->ring, cqe);
        inflight--;
    }
    free(free_slots);
    free(slots);
    return e;
}
#endif

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
#ifdef IOLAB_WITH_LIBURING
    if (f->have_ring)
        io_uring_queue_exit(&f->ring);
#endif
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
    .options = posix_options,
    .options_size = sizeof(posix_opts_t),
    .init = posix_init,
    .fini = posix_fini,
    .prepare = posix_prepare,
    .open = posix_open,
    .xfer = posix_xfer,
    .xfer_vec = NULL,
#ifdef IOLAB_WITH_LIBURING
    .xfer_queue = posix_xfer_queue,
#endif
    .queue_depth = posix_queue_depth,
    .sync = posix_sync,
    .get_info = NULL,
    .close = posix_close,
    .remove = posix_remove,
};
