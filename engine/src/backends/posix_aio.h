/* The posix backend's asynchronous engines (--posix.queue-depth N > 1, --posix.aio): io_uring
 * through liburing and Linux native AIO through libaio, each built only when its library was
 * found (IOLAB_WITH_LIBURING, IOLAB_WITH_LIBAIO). One loop keeps N requests in flight and
 * refills every slot that completes; an engine only prepares, submits and reaps, as fio's
 * ioengine_ops do. */
#ifndef IOLAB_POSIX_AIO_H
#define IOLAB_POSIX_AIO_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

typedef enum iolab_aio_kind {
    IOLAB_AIO_AUTO = 0,  /* per operation: see iolab_aio_resolve */
    IOLAB_AIO_IO_URING,
    IOLAB_AIO_LIBAIO,
} iolab_aio_kind_t;

/* The choices of --posix.aio, in iolab_aio_kind_t order. */
#define IOLAB_AIO_CHOICES "auto|io_uring|libaio"

typedef struct iolab_aio iolab_aio_t;

/* How the file is accessed, for auto's choice: IOLAB_AIO_DIRECT (O_DIRECT), IOLAB_AIO_RESERVED
 * (writes land on blocks reserved before, --posix.preallocate). */
enum { IOLAB_AIO_DIRECT = 1u, IOLAB_AIO_RESERVED = 2u };

/* The engine that runs for dir: kind itself, or for auto the one chosen for that operation
 * (how: IOLAB_AIO_* bits) among those built. IOLAB_AIO_AUTO when kind (or, for auto, every
 * engine) is not built. */
iolab_aio_kind_t iolab_aio_resolve(iolab_aio_kind_t kind, iolab_dir_t dir, unsigned how);

/* "io_uring", "libaio", NULL for IOLAB_AIO_AUTO. */
const char *iolab_aio_name(iolab_aio_kind_t kind);

/* Queues kept between the timed phases, one per engine: set up before the first phase
 * (iolab_aio_check) and torn down after the last (iolab_aio_spares_free), as fio sets its
 * engine up before its timed part and down after it. A phase is timed from open to close,
 * and Linux AIO's io_destroy waits for an RCU grace period (29-34 ms under strace here:
 * 2% of a 1.7 s QD32 phase), which fio never counts. */
typedef struct iolab_aio_spares {
    iolab_aio_t *q[IOLAB_AIO_LIBAIO + 1];  /* by kind; NULL: none kept */
} iolab_aio_spares_t;

/* Bad input: kind not built, or its setup refused here (seccomp, aio-max-nr). Sets up one
 * queue of depth entries for every engine auto may choose: kept in keep when given (owned
 * there), else torn down. 0 or EINVAL with one line in err. */
int iolab_aio_check(iolab_aio_kind_t kind, int depth, unsigned how, iolab_aio_spares_t *keep,
                    char *err, size_t errlen);

/* A queue of depth entries on fd (kind resolved, not auto): the one spares keeps for kind
 * and depth when there is one (taken out of spares), else a new one. spares may be NULL.
 * 0 or an errno with err. */
int iolab_aio_open(iolab_aio_kind_t kind, int fd, int depth, iolab_aio_spares_t *spares,
                   iolab_aio_t **out, char *err, size_t errlen);

/* Done with a: back into spares when its last run left nothing in the queue and spares has
 * none of its kind, else torn down. spares may be NULL. */
void iolab_aio_close(iolab_aio_t *a, iolab_aio_spares_t *spares);

/* Tears down the queues spares keeps. */
void iolab_aio_spares_free(iolab_aio_spares_t *spares);

/* The core's transfers (q) with q->depth requests in flight; 0 or the queue's errno (an
 * I/O error of one request goes to q->done). */
int iolab_aio_run(iolab_aio_t *a, iolab_dir_t dir, const iolab_queue_t *q);

/* pread/pwrite of buf[done..len) at offset+done until all of it moved, the end of the file
 * (a short read) or an error: the bytes done, or -errno. The synchronous path and a queued
 * request that completed short both finish through it. */
int64_t iolab_pio_rest(int fd, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len,
                       uint64_t done);

#endif
