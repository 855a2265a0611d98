/* iolab-bench backend "null": no files, each transfer only waits --null.delay-us. It tests
 * the driver, layouts, aggregation over MPI, timing and output without a disk. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "backend.h"

typedef struct null_opts {
    double delay_us;
} null_opts_t;

static const iolab_option_t null_options[] = {
    {"null.delay-us", "null_delay_us", IOLAB_OPT_DOUBLE, "0", "us", NULL,
     "null api: microseconds each transfer takes", offsetof(null_opts_t, delay_us)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

static int null_init(void **state, const void *opts, const iolab_cfg_t *cfg,
                     const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen)
{
    (void)cfg, (void)env, (void)world;
    const null_opts_t *o = opts;
    if (o->delay_us < 0) {
        snprintf(err, errlen, "--null.delay-us must not be negative (got %g)", o->delay_us);
        return EINVAL;
    }
    *state = (void *)opts;
    return 0;
}

static void null_fini(void *state) { (void)state; }

static int null_open(void *state, const iolab_open_args_t *args, void **fh, char *err,
                     size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    *fh = state;
    return 0;
}

static void wait_us(double us)
{
    if (us <= 0)
        return;
    struct timespec ts = {(time_t)(us / 1e6), (long)((us - (double)(time_t)(us / 1e6) * 1e6) *
                                                     1e3)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int64_t null_xfer(void *fh, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len)
{
    (void)dir, (void)buf, (void)offset;
    if (len)
        wait_us(((const null_opts_t *)fh)->delay_us);
    return (int64_t)len;
}

static int64_t null_xfer_vec(void *fh, iolab_dir_t dir, void *buf, const iolab_vec_t *v)
{
    (void)dir, (void)buf;
    if (v->count)
        wait_us(((const null_opts_t *)fh)->delay_us);
    return (int64_t)(v->count * v->length);
}

static int null_sync(void *fh) { (void)fh; return 0; }
static int null_close(void *fh) { (void)fh; return 0; }
static int null_remove(void *state, const char *path) { (void)state, (void)path; return 0; }

const iolab_backend_t iolab_backend_null = {
    .name = "null",
    .summary = "no I/O: each transfer sleeps --null.delay-us (tests the driver)",
    .caps = IOLAB_CAP_SHARED | IOLAB_CAP_COLLECTIVE | IOLAB_CAP_VECTOR | IOLAB_CAP_THREADS |
            IOLAB_CAP_LOCAL_SYNC,
    .md = &iolab_md_null,
    .options = null_options,
    .options_size = sizeof(null_opts_t),
    .init = null_init,
    .fini = null_fini,
    .open = null_open,
    .xfer = null_xfer,
    .xfer_vec = null_xfer_vec,
    .sync = null_sync,
    .get_info = NULL,
    .close = null_close,
    .remove = null_remove,
};
