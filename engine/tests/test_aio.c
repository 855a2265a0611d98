/* ctest: the posix backend's asynchronous engines (backends/posix_aio.c), built three times:
 * with the engines this machine has, with io_uring only and with none (engine/CMakeLists.txt),
 * as on machines that lack libaio-dev or liburing-dev. Checks which
 * engine auto takes per operation, the refusal of an engine not built (naming the package),
 * and, for every engine built, a real file written and read back through the queue with
 * random offsets, more transfers than slots, every byte compared: once through a new queue
 * per pass, once through the queue iolab_aio_check kept, reused by both passes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/posix_aio.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "FAIL line %d: ", __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

enum { XFER = 4096, NXFER = 100, DEPTH = 8 };

/* The core's side of the queue: transfer i goes to block perm[i]; each slot has its buffer,
 * filled (writes) or checked (reads) with a byte pattern of the block. */
typedef struct ctx {
    iolab_dir_t dir;
    int next, done, bad, perm[NXFER], slot_xfer[DEPTH];
    unsigned char *bufs;
} ctx_t;

static unsigned char byte_of(int block, size_t i) { return (unsigned char)(block * 7 + i * 13); }

static int next(void *c_, int slot, iolab_qslot_t *q)
{
    ctx_t *c = c_;
    if (c->next == NXFER)
        return 0;
    int x = c->next++, block = c->perm[x];
    unsigned char *buf = c->bufs + (size_t)slot * XFER;
    for (size_t i = 0; i < XFER; i++)
        buf[i] = c->dir == IOLAB_WRITE ? byte_of(block, i) : 0;
    c->slot_xfer[slot] = x;
    *q = (iolab_qslot_t){buf, (uint64_t)block * XFER, XFER};
    return 1;
}

static void done(void *c_, int slot, int64_t result)
{
    ctx_t *c = c_;
    int block = c->perm[c->slot_xfer[slot]];
    const unsigned char *buf = c->bufs + (size_t)slot * XFER;
    c->done++;
    if (result != XFER)
        c->bad++;
    for (size_t i = 0; c->dir == IOLAB_READ && i < XFER; i++)
        if (buf[i] != byte_of(block, i)) {
            c->bad++;
            break;
        }
}

/* Write, then read back, on one file. spares: the queues kept (both passes must get the same
 * one back), or NULL (a new queue per pass). */
static void round_trip(iolab_aio_kind_t kind, iolab_aio_spares_t *spares)
{
    char path[] = "/tmp/iolab-test-aio.XXXXXX", err[512] = "";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
    if (fd < 0)
        return;
    unlink(path);
    ctx_t c = {0};
    c.bufs = malloc((size_t)DEPTH * XFER);
    for (int i = 0; i < NXFER; i++)
        c.perm[i] = (i * 37) % NXFER;  /* 37 is prime to 100: every block once */
    for (int d = 0; d < 2; d++) {
        c.dir = d ? IOLAB_READ : IOLAB_WRITE;
        c.next = c.done = 0;
        iolab_aio_t *a = NULL, *kept = spares ? spares->q[kind] : NULL;
        int e = iolab_aio_open(kind, fd, DEPTH, spares, &a, err, sizeof err);
        CHECK(e == 0, "%s open: %s", iolab_aio_name(kind), err);
        if (e)
            break;
        CHECK(!spares || (kept && a == kept && !spares->q[kind]), "%s: the kept queue %p "
              "was not the one opened (%p)", iolab_aio_name(kind), (void *)kept, (void *)a);
        iolab_queue_t q = {next, done, &c, DEPTH};
        CHECK(iolab_aio_run(a, c.dir, &q) == 0, "%s run", iolab_aio_name(kind));
        iolab_aio_close(a, spares);
        CHECK(!spares || spares->q[kind] == a, "%s: the queue was not kept at close",
              iolab_aio_name(kind));
        CHECK(c.done == NXFER && c.bad == 0, "%s %s: %d done, %d bad", iolab_aio_name(kind),
              d ? "read" : "write", c.done, c.bad);
    }
    CHECK(lseek(fd, 0, SEEK_END) == (off_t)NXFER * XFER, "file size");
    close(fd);
    free(c.bufs);
}

int main(void)
{
    char err[512] = "";
    const unsigned both = IOLAB_AIO_DIRECT | IOLAB_AIO_RESERVED;
    iolab_aio_kind_t w = iolab_aio_resolve(IOLAB_AIO_AUTO, IOLAB_WRITE, both);
    iolab_aio_kind_t wb = iolab_aio_resolve(IOLAB_AIO_AUTO, IOLAB_WRITE, IOLAB_AIO_RESERVED);
    iolab_aio_kind_t r = iolab_aio_resolve(IOLAB_AIO_AUTO, IOLAB_READ, both);
#if defined(IOLAB_WITH_LIBURING) && defined(IOLAB_WITH_LIBAIO)
    CHECK(w == IOLAB_AIO_LIBAIO, "auto O_DIRECT write into reserved blocks: %d", w);
    CHECK(iolab_aio_resolve(IOLAB_AIO_AUTO, IOLAB_WRITE, IOLAB_AIO_DIRECT) == IOLAB_AIO_IO_URING,
          "auto O_DIRECT write, nothing reserved");
    CHECK(wb == IOLAB_AIO_IO_URING && r == IOLAB_AIO_IO_URING, "auto: %d %d", wb, r);
#elif defined(IOLAB_WITH_LIBURING)
    CHECK(w == IOLAB_AIO_IO_URING && wb == w && r == w, "auto without libaio: %d %d %d", w, wb,
          r);
    CHECK(iolab_aio_resolve(IOLAB_AIO_LIBAIO, IOLAB_WRITE, both) == IOLAB_AIO_AUTO, "libaio");
    CHECK(iolab_aio_check(IOLAB_AIO_LIBAIO, DEPTH, both, NULL, err, sizeof err) == EINVAL &&
          strstr(err, "built without libaio") && strstr(err, "libaio-dev"), "refusal: %s", err);
#elif !defined(IOLAB_WITH_LIBAIO)
    CHECK(w == IOLAB_AIO_AUTO && r == IOLAB_AIO_AUTO && wb == IOLAB_AIO_AUTO, "no engine");
    CHECK(iolab_aio_check(IOLAB_AIO_AUTO, DEPTH, both, NULL, err, sizeof err) == EINVAL &&
          strstr(err, "needs liburing or libaio"), "refusal: %s", err);
    CHECK(iolab_aio_check(IOLAB_AIO_IO_URING, DEPTH, both, NULL, err, sizeof err) == EINVAL &&
          strstr(err, "liburing-dev"), "refusal: %s", err);
#endif
    for (int k = IOLAB_AIO_IO_URING; k <= IOLAB_AIO_LIBAIO; k++) {
        if ((int)iolab_aio_resolve((iolab_aio_kind_t)k, IOLAB_WRITE, 0) != k)
            continue;  /* not built */
        iolab_aio_spares_t spares = {{NULL}};
        if (iolab_aio_check((iolab_aio_kind_t)k, DEPTH, 0, &spares, err, sizeof err) != 0) {
            printf("skip %s: %s\n", iolab_aio_name((iolab_aio_kind_t)k), err);
            continue;  /* refused by this kernel or container */
        }
        CHECK(spares.q[k] != NULL, "%s: check kept no queue", iolab_aio_name((iolab_aio_kind_t)k));
        round_trip((iolab_aio_kind_t)k, NULL);
        round_trip((iolab_aio_kind_t)k, &spares);
        iolab_aio_spares_free(&spares);
        CHECK(spares.q[k] == NULL, "spares freed");
    }
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
