/* iolab-bench backend "null": no files, each transfer only waits --null.delay-us. It tests
 * the driver, layouts, aggregation over MPI, timing and output without a disk. The create
 * and close delays are IOR's aiori-DUMMY's (--dummy.delay-create, --dummy.delay-close): a
 * wait on each rank's create (a write phase's open; a read's open waits nothing, as
 * DUMMY_Open) and on each close, on every rank or only on rank 0. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "backend.h"

typedef struct null_opts {
    double delay_us, create_us, close_us;
    bool rank0_only;
} null_opts_t;

/* The options and whether this rank waits (--null.delay-rank0-only on the others: no). */
typedef struct null_state {
    const null_opts_t *o;
    int waits;
} null_state_t;

static const iolab_option_t null_options[] = {
    {"null.delay-us", "null_delay_us", IOLAB_OPT_DOUBLE, "0", "us", NULL,
     "null api: microseconds each transfer takes", offsetof(null_opts_t, delay_us)},
    {"null.delay-create-us", "null_delay_create_us", IOLAB_OPT_DOUBLE, "0", "us", NULL,
     "null api: microseconds each rank's create (a write phase's open) takes (IOR "
     "--dummy.delay-create)", offsetof(null_opts_t, create_us)},
    {"null.delay-close-us", "null_delay_close_us", IOLAB_OPT_DOUBLE, "0", "us", NULL,
     "null api: microseconds each close takes (IOR --dummy.delay-close)",
     offsetof(null_opts_t, close_us)},
    {"null.delay-rank0-only", "null_delay_rank0_only", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "null api: only rank 0 waits the delays (IOR --dummy.delay-only-rank0)",
     offsetof(null_opts_t, rank0_only)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

static int null_init(void **state, const void *opts, const iolab_cfg_t *cfg,
                     const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen)
{
    (void)cfg, (void)env;
    const null_opts_t *o = opts;
    const struct { const char *name; double v; } delays[] = {
        {"--null.delay-us", o->delay_us}, {"--null.delay-create-us", o->create_us},
        {"--null.delay-close-us", o->close_us}};
    for (size_t i = 0; i < sizeof delays / sizeof *delays; i++)
        if (delays[i].v < 0) {
            snprintf(err, errlen, "%s must not be negative (got %g)", delays[i].name,
                     delays[i].v);
            return EINVAL;
        }
    null_state_t *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    *s = (null_state_t){o, !o->rank0_only || rank == 0};
    *state = s;
    return 0;
}

static void null_fini(void *state) { free(state); }

static void wait_us(double us)
{
    if (us <= 0)
        return;
    struct timespec ts = {(time_t)(us / 1e6), (long)((us - (double)(time_t)(us / 1e6) * 1e6) *
                                                     1e3)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int null_open(void *state, const iolab_open_args_t *args, void **fh, char *err,
                     size_t errlen)
{
    (void)err, (void)errlen;
    const null_state_t *s = state;
    if (args->dir == IOLAB_WRITE && s->waits)
        wait_us(s->o->create_us);
    *fh = state;
    return 0;
}

static int64_t null_xfer(void *fh, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len)
{
    (void)dir, (void)buf, (void)offset;
    const null_state_t *s = fh;
    if (len && s->waits)
        wait_us(s->o->delay_us);
    return (int64_t)len;
}

static int64_t null_xfer_vec(void *fh, iolab_dir_t dir, void *buf, const iolab_vec_t *v)
{
    (void)dir, (void)buf;
    const null_state_t *s = fh;
    if (v->count && s->waits)
        wait_us(s->o->delay_us);
    return (int64_t)(v->count * v->length);
}

static int null_sync(void *fh) { (void)fh; return 0; }
static int null_close(void *fh)
{
    const null_state_t *s = fh;
    if (s->waits)
        wait_us(s->o->close_us);
    return 0;
}
static int null_remove(void *state, const char *path) { (void)state, (void)path; return 0; }

const iolab_backend_t iolab_backend_null = {
    .name = "null",
    .summary = "no I/O: each transfer sleeps --null.delay-us, creates and closes their own delays (tests the driver)",
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
