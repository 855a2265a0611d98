/* The posix backend's asynchronous engines: one loop (iolab_aio_run) over a small table of
 * operations per engine (setup, prepare one request, submit the prepared ones, reap the
 * completed ones), like fio's ioengine_ops. See posix_aio.h. */
#include "posix_aio.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef IOLAB_WITH_LIBURING
#include <liburing.h>
#endif
#ifdef IOLAB_WITH_LIBAIO
#include <libaio.h>
#endif

typedef struct aio_done {
    int slot;
    int64_t res;  /* bytes, or -errno */
} aio_done_t;

typedef struct aio_ops {
    const char *name;
    int (*setup)(void **eng, int depth);  /* 0 or -errno */
    void (*teardown)(void *eng);
    void (*prep)(void *eng, int fd, iolab_dir_t dir, int slot, const iolab_qslot_t *s);
    int (*submit)(void *eng);             /* the prepared requests: how many went in, or -errno
                                             when none did */
    int (*reap)(void *eng, aio_done_t *out, int max);  /* wait for >= 1: count, or -errno */
} aio_ops_t;

struct iolab_aio {
    const aio_ops_t *ops;
    void *eng;
    int fd, depth;
    iolab_aio_kind_t kind;
    int clean;  /* the last run left nothing prepared or in flight: the queue can be reused */
};

#ifdef IOLAB_WITH_LIBURING
static int uring_setup(void **eng, int depth)
{
    struct io_uring *r = malloc(sizeof *r);
    if (!r)
        return -ENOMEM;
    /* As fio 3.33's io_uring engine sets up its ring (seen in strace): completions run as
     * task work only when this thread waits for them (DEFER_TASKRUN, which needs
     * SINGLE_ISSUER: one thread submits here), without an interrupt to this thread
     * (COOP_TASKRUN). Kernels before 6.1 refuse those flags: then a plain ring. */
    int rc = io_uring_queue_init((unsigned)depth, r, IORING_SETUP_SINGLE_ISSUER |
                                                     IORING_SETUP_DEFER_TASKRUN |
                                                     IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL)
        rc = io_uring_queue_init((unsigned)depth, r, 0);
    if (rc < 0)
        free(r);
    else
        *eng = r;
    return rc < 0 ? rc : 0;
}

static void uring_teardown(void *eng)
{
    io_uring_queue_exit(eng);
    free(eng);
}

/* Never more than depth requests are prepared or in flight, so an SQE is always free. */
static void uring_prep(void *eng, int fd, iolab_dir_t dir, int slot, const iolab_qslot_t *s)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(eng);
    if (dir == IOLAB_WRITE)
        io_uring_prep_write(sqe, fd, s->buf, (unsigned)s->len, (__u64)s->offset);
    else
        io_uring_prep_read(sqe, fd, s->buf, (unsigned)s->len, (__u64)s->offset);
    io_uring_sqe_set_data64(sqe, (__u64)slot);
}

/* Submit and, in the same call, run the completions already there (fio's io_uring engine:
 * one io_uring_enter(n, 0, GETEVENTS) per submit). Under DEFER_TASKRUN a plain submit
 * leaves finished requests unposted until the next wait, so the queue ran emptier. */
static int uring_submit(void *eng)
{
#ifdef IOLAB_URING_GET_EVENTS
    return io_uring_submit_and_get_events(eng);
#else
    return io_uring_submit(eng);
#endif
}

/* At least one completion (waiting for it), up to max of those already there. */
static int uring_reap(void *eng, aio_done_t *out, int max)
{
    struct io_uring_cqe *cqe;
    int rc = io_uring_wait_cqe(eng, &cqe), n = 0;
    if (rc < 0)
        return rc;
    do {
        out[n].slot = (int)io_uring_cqe_get_data64(cqe);
        out[n++].res = cqe->res;
        io_uring_cqe_seen(eng, cqe);
    } while (n < max && io_uring_peek_cqe(eng, &cqe) == 0);
    return n;
}

static const aio_ops_t uring_ops = {"io_uring", uring_setup, uring_teardown, uring_prep,
                                    uring_submit, uring_reap};
#endif

#ifdef IOLAB_WITH_LIBAIO
typedef struct laio {
    io_context_t ctx;
    struct iocb *iocbs;     /* one per slot */
    struct iocb **pending;  /* prepared, not yet submitted */
    struct io_event *events;
    int npending, depth;
} laio_t;

static void laio_teardown(void *eng)
{
    laio_t *l = eng;
    if (l->ctx)
        io_destroy(l->ctx);
    free(l->iocbs);
    free(l->pending);
    free(l->events);
    free(l);
}

static int laio_setup(void **eng, int depth)
{
    laio_t *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    l->depth = depth;
    l->iocbs = calloc((size_t)depth, sizeof *l->iocbs);
    l->pending = calloc((size_t)depth, sizeof *l->pending);
    l->events = calloc((size_t)depth, sizeof *l->events);
    int rc = l->iocbs && l->pending && l->events ? io_setup(depth, &l->ctx) : -ENOMEM;
    if (rc < 0) {
        l->ctx = 0;
        laio_teardown(l);
        return rc;
    }
    *eng = l;
    return 0;
}

static void laio_prep(void *eng, int fd, iolab_dir_t dir, int slot, const iolab_qslot_t *s)
{
    laio_t *l = eng;
    struct iocb *cb = &l->iocbs[slot];
    if (dir == IOLAB_WRITE)
        io_prep_pwrite(cb, fd, s->buf, (size_t)s->len, (long long)s->offset);
    else
        io_prep_pread(cb, fd, s->buf, (size_t)s->len, (long long)s->offset);
    cb->data = (void *)(intptr_t)slot;
    l->pending[l->npending++] = cb;
}

/* io_submit may take fewer than given: the rest again, until one call fails. */
static int laio_submit(void *eng)
{
    laio_t *l = eng;
    int done = 0, rc = 0;
    while (done < l->npending) {
        rc = io_submit(l->ctx, l->npending - done, l->pending + done);
        if (rc == -EINTR)
            continue;
        if (rc <= 0)
            break;
        done += rc;
    }
    l->npending = 0;
    return done ? done : rc < 0 ? rc : -EIO;
}

static int laio_reap(void *eng, aio_done_t *out, int max)
{
    laio_t *l = eng;
    int n = io_getevents(l->ctx, 1, max < l->depth ? max : l->depth, l->events, NULL);
    for (int i = 0; i < n; i++) {
        out[i].slot = (int)(intptr_t)l->events[i].data;
        out[i].res = (int64_t)(long)l->events[i].res;  /* bytes, or -errno */
    }
    return n;
}

static const aio_ops_t laio_ops = {"libaio", laio_setup, laio_teardown, laio_prep,
                                   laio_submit, laio_reap};
#endif

static const aio_ops_t *engine_ops(iolab_aio_kind_t kind)
{
#ifdef IOLAB_WITH_LIBURING
    if (kind == IOLAB_AIO_IO_URING)
        return &uring_ops;
#endif
#ifdef IOLAB_WITH_LIBAIO
    if (kind == IOLAB_AIO_LIBAIO)
        return &laio_ops;
#endif
    (void)kind;
    return NULL;
}

const char *iolab_aio_name(iolab_aio_kind_t kind)
{
    return kind == IOLAB_AIO_IO_URING ? "io_uring" : kind == IOLAB_AIO_LIBAIO ? "libaio" : NULL;
}

/* auto: libaio for O_DIRECT writes into reserved blocks, io_uring for everything else.
 * There (unwritten extents on ext4, converted as each write completes) fio's libaio engine
 * wrote 1.23x the IOPS of its io_uring engine at QD32 on the idle development VM
 * (docs/benchmarks.md, "Queue depth 32"), while iolab's io_uring matched fio's io_uring.
 * Reads showed no clear winner (fio io_uring 1.06x libaio) and stay on io_uring, as do
 * writes that extend a file or overwrite written blocks (nothing measured there) and
 * buffered writes (libaio's io_submit performs those synchronously). Not the cause: on
 * Linux 6.18 io_uring punts none of those writes to its io-wq workers (tracepoint
 * io_uring_queue_async_work: 0 of 4096, as for fio), only writes that extend a file. */
iolab_aio_kind_t iolab_aio_resolve(iolab_aio_kind_t kind, iolab_dir_t dir, unsigned how)
{
    if (kind != IOLAB_AIO_AUTO)
        return engine_ops(kind) ? kind : IOLAB_AIO_AUTO;
    unsigned want = IOLAB_AIO_DIRECT | IOLAB_AIO_RESERVED;
    iolab_aio_kind_t first = dir == IOLAB_WRITE && (how & want) == want ? IOLAB_AIO_LIBAIO
                                                                          : IOLAB_AIO_IO_URING;
    iolab_aio_kind_t second = first == IOLAB_AIO_LIBAIO ? IOLAB_AIO_IO_URING
                                                         : IOLAB_AIO_LIBAIO;
    return engine_ops(first) ? first : engine_ops(second) ? second : IOLAB_AIO_AUTO;
}

static int check_one(iolab_aio_kind_t kind, int depth, iolab_aio_spares_t *keep, char *err,
                     size_t errlen)
{
    if (keep && keep->q[kind])
        return 0;
    void *eng = NULL;
    const aio_ops_t *ops = engine_ops(kind);
    int rc = ops->setup(&eng, depth);
    if (rc == 0) {
        iolab_aio_t *a = keep ? malloc(sizeof *a) : NULL;
        if (a) {
            *a = (iolab_aio_t){ops, eng, -1, depth, kind, 1};
            keep->q[kind] = a;
        } else {
            ops->teardown(eng);
        }
        return 0;
    }
    if (kind == IOLAB_AIO_IO_URING)
        snprintf(err, errlen, "--posix.queue-depth: io_uring is not available here (%s): the "
                 "kernel or a container's seccomp filter refuses io_uring_setup; use "
                 "--posix.aio libaio, --posix.queue-depth 1 or --threads", strerror(-rc));
    else
        snprintf(err, errlen, "--posix.queue-depth: libaio's io_setup(%d) is refused here "
                 "(%s): /proc/sys/fs/aio-max-nr too low, or the kernel or a container's seccomp "
                 "filter refuses it; use --posix.aio io_uring, --posix.queue-depth 1 or "
                 "--threads", depth, strerror(-rc));
    return EINVAL;
}

int iolab_aio_check(iolab_aio_kind_t kind, int depth, unsigned how, iolab_aio_spares_t *keep,
                    char *err, size_t errlen)
{
    if (kind != IOLAB_AIO_AUTO && !engine_ops(kind)) {
        int aio = kind == IOLAB_AIO_LIBAIO;
        snprintf(err, errlen, "--posix.aio %s: this iolab-bench was built without %s; install "
                 "%s (Debian) and re-run ./setup, or use --posix.aio auto",
                 aio ? "libaio" : "io_uring", aio ? "libaio" : "liburing",
                 aio ? "libaio-dev" : "liburing-dev");
        return EINVAL;
    }
    iolab_aio_kind_t w = iolab_aio_resolve(kind, IOLAB_WRITE, how);
    iolab_aio_kind_t r = iolab_aio_resolve(kind, IOLAB_READ, how);
    if (w == IOLAB_AIO_AUTO) {
        snprintf(err, errlen, "--posix.queue-depth needs liburing or libaio, and this "
                 "iolab-bench was built without either; install liburing-dev or libaio-dev "
                 "(Debian) and re-run ./setup");
        return EINVAL;
    }
    int e = check_one(w, depth, keep, err, errlen);
    return e || r == w ? e : check_one(r, depth, keep, err, errlen);
}

int iolab_aio_open(iolab_aio_kind_t kind, int fd, int depth, iolab_aio_spares_t *spares,
                   iolab_aio_t **out, char *err, size_t errlen)
{
    iolab_aio_t *kept = spares && engine_ops(kind) ? spares->q[kind] : NULL;
    if (kept && kept->depth == depth) {
        spares->q[kind] = NULL;
        kept->fd = fd;
        *out = kept;
        return 0;
    }
    const aio_ops_t *ops = engine_ops(kind);
    iolab_aio_t *a = ops ? malloc(sizeof *a) : NULL;
    if (!a)
        return ops ? ENOMEM : EINVAL;
    *a = (iolab_aio_t){ops, NULL, fd, depth, kind, 1};
    int rc = ops->setup(&a->eng, depth);
    if (rc < 0) {
        snprintf(err, errlen, "%s setup of %d entries: %s", ops->name, depth, strerror(-rc));
        free(a);
        return -rc;
    }
    *out = a;
    return 0;
}

void iolab_aio_close(iolab_aio_t *a, iolab_aio_spares_t *spares)
{
    if (!a)
        return;
    if (spares && a->clean && !spares->q[a->kind]) {
        a->fd = -1;
        spares->q[a->kind] = a;
        return;
    }
    a->ops->teardown(a->eng);
    free(a);
}

void iolab_aio_spares_free(iolab_aio_spares_t *spares)
{
    for (size_t k = 0; k < sizeof spares->q / sizeof *spares->q; k++) {
        iolab_aio_close(spares->q[k], NULL);
        spares->q[k] = NULL;
    }
}

int64_t iolab_pio_rest(int fd, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len,
                       uint64_t done)
{
    while (done < len) {
        char *p = (char *)buf + done;
        ssize_t n = dir == IOLAB_WRITE ? pwrite(fd, p, len - done, (off_t)(offset + done))
                                       : pread(fd, p, len - done, (off_t)(offset + done));
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

/* A request that moved only done of its bytes: the rest with pread/pwrite, so that the real
 * cause (ENOSPC) or the end of the file shows as with the synchronous path. */
static int64_t finish_short(int fd, iolab_dir_t dir, const iolab_qslot_t *s, int64_t done)
{
    return iolab_pio_rest(fd, dir, s->buf, s->offset, s->len, (uint64_t)done);
}

/* Keep q->depth requests in flight: fill every free slot, submit them together, reap what
 * has completed (at least one), give those slots back, fill again, until the core has
 * nothing left and nothing is in flight. */
int iolab_aio_run(iolab_aio_t *a, iolab_dir_t dir, const iolab_queue_t *q)
{
    int *free_slots = malloc((size_t)q->depth * sizeof *free_slots), nfree = q->depth;
    iolab_qslot_t *slots = malloc((size_t)q->depth * sizeof *slots);
    aio_done_t *done = malloc((size_t)q->depth * sizeof *done);
    int inflight = 0, more = 1, e = 0;
    if (!free_slots || !slots || !done)
        e = ENOMEM;
    for (int s = 0; !e && s < q->depth; s++)
        free_slots[s] = q->depth - 1 - s;
    while (!e) {
        int queued = 0;
        while (more && nfree > 0) {
            int s = free_slots[nfree - 1];
            if (!(more = q->next(q->ctx, s, &slots[s])))
                break;
            a->ops->prep(a->eng, a->fd, dir, s, &slots[s]);
            nfree--;
            queued++;
        }
        if (queued) {
            int n = a->ops->submit(a->eng);
            if (n < queued)
                e = n < 0 ? -n : EIO;
            inflight += n > 0 ? n : 0;
        }
        if (!inflight || e)
            break;
        /* One completion at a time, refilled at once (fio's iodepth_batch_complete_max=1
         * default): reaping all that are done and refilling them together let the queue
         * drain towards empty between refills (strace: 32 reaped, 32 submitted, every
         * time) and cost 15-20% of fio's IOPS at QD32. */
        int n = a->ops->reap(a->eng, done, 1);
        if (n == -EINTR)
            continue;
        if (n < 0) {
            e = -n;
            break;
        }
        for (int i = 0; i < n; i++) {
            int s = done[i].slot;
            int64_t res = done[i].res;
            if (res >= 0 && (uint64_t)res < slots[s].len)
                res = finish_short(a->fd, dir, &slots[s], res);
            q->done(q->ctx, s, res);
            free_slots[nfree++] = s;
        }
        inflight -= n;
    }
    while (inflight > 0) {  /* after a failure: let the kernel finish with the buffers */
        int n = a->ops->reap(a->eng, done, q->depth);
        if (n == -EINTR)
            continue;
        if (n < 0)
            break;
        inflight -= n;
    }
    a->clean = !e;  /* after a failure requests may be left prepared or in flight */
    free(free_slots);
    free(slots);
    free(done);
    return e;
}
