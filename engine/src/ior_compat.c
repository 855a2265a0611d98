/* iolab-bench: IOR 4.1's behaviours the iolab ior front end asks for (see ior_compat.h). */
#define _DEFAULT_SOURCE
#include "ior_compat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t iolab_ior_order_seed(const iolab_run_t *run)
{
    int64_t seed = run->cfg.random_seed;
    if (seed < 0 && run->cfg.random_repeat) {
        seed = (int64_t)time(NULL);
        MPI_Bcast(&seed, 1, MPI_INT64_T, 0, run->world);
    }
    return seed;
}

/* glibc's random() stream of srandom(seed), on a state of its own (TYPE_3, 128 bytes, as
 * the process-wide one that IOR's srandom/rand use). */
typedef struct glibc_rand {
    struct random_data data;
    char state[128];
} glibc_rand_t;

static void rand_seed(glibc_rand_t *g, unsigned seed)
{
    memset(g, 0, sizeof *g);
    initstate_r(seed, g->state, sizeof g->state, &g->data);
}

static int64_t rand_next(glibc_rand_t *g)
{
    int32_t r = 0;
    random_r(&g->data, &r);
    return r;
}

uint64_t iolab_ior_rand64(iolab_ior_cursor_t *c)
{
    static const uint64_t mul_hi = 0x0fc94e3bf4e9ab32ull, mul_lo = 0x866458cd56f5e605ull;
    uint64_t lo = c->lo * mul_lo;
    uint64_t hi = c->hi * mul_hi + (lo >> 32);
    c->lo = lo;
    c->hi = hi;
    return hi;
}

/* -z: IOR's GetOffsetArrayRandom for logical rank lr. Returns the count or -1. */
static int64_t permutation(const iolab_run_t *run, int lr, int64_t seed, iolab_ior_order_t *o)
{
    const iolab_layout_t *l = &run->layout;
    int fpp = l->kind == IOLAB_LAYOUT_FPP;
    glibc_rand_t g;
    rand_seed(&g, (unsigned)(fpp ? seed + lr : seed));
    uint64_t n = 0, slots = (uint64_t)l->ranks * l->block / l->transfer;
    if (fpp)
        n = l->block / l->transfer;
    else
        for (uint64_t k = 0; k < slots; k++)
            n += rand_next(&g) % l->ranks == lr;
    o->offs = malloc((n ? n : 1) * sizeof *o->offs);
    if (!o->offs)
        return -1;
    if (fpp) {
        for (uint64_t i = 0; i < n; i++)
            o->offs[i] = i * l->transfer;
    } else {
        rand_seed(&g, (unsigned)seed);  /* IOR deals again from the same seed */
        uint64_t m = 0;
        for (uint64_t k = 0; k < slots; k++)
            if (rand_next(&g) % l->ranks == lr)
                o->offs[m++] = k * l->transfer;
    }
    for (uint64_t i = 0; i < n; i++) {  /* IOR's shuffle: swap i with rand() % n */
        uint64_t v = (uint64_t)rand_next(&g) % n, tmp = o->offs[v];
        o->offs[v] = o->offs[i];
        o->offs[i] = tmp;
    }
    o->n = n;
    return (int64_t)n;
}

int64_t iolab_ior_order_make(const iolab_run_t *run, int op, int lr, int64_t seed,
                             uint64_t file_bytes, iolab_ior_order_t *o)
{
    const iolab_layout_t *l = &run->layout;
    int fpp = l->kind == IOLAB_LAYOUT_FPP;
    memset(o, 0, sizeof *o);
    if (!run->cfg.random_repeat && (!run->cfg.random || seed < 0))
        return 0;
    o->on = 1;
    o->per_block = l->block / l->transfer;
    o->seg_bytes = fpp ? l->block : (uint64_t)l->ranks * l->block;
    if (!run->cfg.random_repeat)
        return permutation(run, lr, seed, o);
    o->repeat = 1;
    uint64_t s = (uint64_t)(fpp ? seed + lr : seed);
    o->state = s * (uint64_t)(lr + 1);
    o->nblocks = file_bytes / l->block ? file_bytes / l->block : 1;
    o->last_first = op == IOLAB_WRITE && (fpp || run->rank == 0);
    o->n = o->per_block;
    return (int64_t)o->n;
}

void iolab_ior_order_free(iolab_ior_order_t *o)
{
    free(o->offs);
    o->offs = NULL;
}

uint64_t iolab_ior_order_offset(const iolab_ior_order_t *o, iolab_ior_cursor_t *c,
                                uint64_t transfer, uint64_t i)
{
    uint64_t s = i / o->n, j = i % o->n;
    if (!o->repeat)
        return s * o->seg_bytes + o->offs[j];
    if (c->seg < 0) {
        c->hi = 0;
        c->lo = o->state;
    }
    while (c->seg < (int64_t)s) {  /* one draw per segment, in order, as IOR */
        uint64_t r = iolab_ior_rand64(c);
        c->seg++;
        c->block = c->seg == 0 && o->last_first ? o->nblocks - 1 : r % o->nblocks;
    }
    return c->block * o->per_block * transfer + j * transfer;
}

int iolab_ior_prefill(iolab_run_t *run, void *fh, int lr)
{
    const iolab_layout_t *l = &run->layout;
    uint64_t size = run->cfg.random_prefill;
    int e = 0;
    unsigned char *buf = fh ? malloc(size) : NULL;
    if (fh && !buf)
        e = ENOMEM;
    if (buf)
        memset(buf, 0xff, size);  /* IOR's "invalid data" */
    for (uint64_t s = 0; buf && !e && s < l->segments; s++)
        for (uint64_t j = 0; !e && j < l->block / size; j++) {
            uint64_t off = iolab_layout_offset(l, lr, s * (l->block / l->transfer)) + j * size;
            int64_t n = run->be->xfer(fh, IOLAB_WRITE, buf, off, size);
            e = n < 0 ? (int)-n : (uint64_t)n != size ? EIO : 0;
        }
    free(buf);
    MPI_Barrier(run->world);  /* IOR: no rank runs ahead of the others' prefill */
    return e;
}

int iolab_ior_read_rank(const iolab_run_t *run, int rep)
{
    const iolab_cfg_t *c = &run->cfg;
    int n = run->ranks;
    unsigned seed0 = c->reorder_seed < 0 ? (unsigned)(-c->reorder_seed + rep)
                                         : (unsigned)c->reorder_seed;
    glibc_rand_t g;
    if (c->reorder_random == 1) {  /* IOR: srand(rank + seed), redraw while too near */
        int q = c->reorder_nodes > 0 ? (int)c->reorder_nodes : 1;
        int node_off = q < run->env.nhosts ? q : run->env.nhosts - 1;
        long min = (long)node_off * run->env.host_ranks[0];
        rand_seed(&g, (unsigned)run->rank + seed0);
        long off = rand_next(&g) % n;
        while (off < min)
            off = rand_next(&g) % n;
        return (int)((run->rank + off) % n);
    }
    int *perm = malloc((size_t)n * sizeof *perm), mine = run->rank;
    if (!perm)
        return run->rank;
    rand_seed(&g, seed0);  /* IOR: srand(seed), the same shuffle on every rank */
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = 0; i < n; i++) {
        int tgt = i + (int)(rand_next(&g) % (n - i)), tmp = perm[tgt];
        perm[tgt] = perm[i];
        perm[i] = tmp;
    }
    mine = perm[run->rank];
    free(perm);
    return mine;
}

int iolab_ior_reorder_shift(const iolab_run_t *run, int extra)
{
    /* IOR's QueryNodeMapping: ranks placed by blocks when rank 1 shares rank 0's host;
     * then one node is the first host's ranks, else (round robin) one rank */
    int block = run->ranks < 2 || run->env.rank_host[1] == run->env.rank_host[0];
    long shift = (long)(run->cfg.reorder_nodes + extra) * (block ? run->env.host_ranks[0] : 1);
    return (int)(shift % run->ranks);
}

/* --- the options' checks (called by the driver's validation) --- */
/* Every rank must make every call: collective transfers, or a collective sync per write
 * (the driver's lockstep_calls). */
static int ior_lockstep(const iolab_run_t *run)
{
    return run->cfg.collective ||
           (run->cfg.fsync_per_write && !(run->be->caps & IOLAB_CAP_LOCAL_SYNC));
}

int iolab_ior_check_options(const iolab_run_t *run, char *err, size_t len)
{
    const iolab_cfg_t *c = &run->cfg;
    int ior_order = c->random_repeat || (c->random && c->random_seed >= 0);
    int fpp = c->layout == IOLAB_LAYOUT_FPP, seg = c->layout == IOLAB_LAYOUT_SEGMENTED;
    if (c->random_seed < -1 || c->random_seed > 0x7fffffff)
        snprintf(err, len, "--random-seed %lld: give 0 to 2147483647 (-1: the engine's own "
                 "order)", (long long)c->random_seed);
    else if (ior_order && (!(fpp || seg) || c->file_view))
        snprintf(err, len, "--random-seed and --random-repeat follow IOR's order, which IOR "
                 "has for --layout fpp and segmented (one call per transfer) only");
    else if (ior_order && (c->threads > 1 || ior_lockstep(run)))
        snprintf(err, len, "--random-seed and --random-repeat make IOR's calls one after "
                 "another on each rank: drop --threads and --collective (and the collective "
                 "sync per write of api %s)", run->be->name);
    else if (c->random_prefill && !(c->random || c->random_repeat))
        snprintf(err, len, "--random-prefill fills the file before random writes: add "
                 "--random (IOR refuses randomPrefill without -z too)");
    else if (c->random_prefill && c->block % c->random_prefill)
        snprintf(err, len, "--random-prefill %llu must divide --block %llu",
                 (unsigned long long)c->random_prefill, (unsigned long long)c->block);
    else if (c->random_prefill && c->stonewall > 0)
        snprintf(err, len, "--random-prefill with --stonewall: IOR prefills segment by "
                 "segment inside the deadline there, the engine does not; drop one of them");
    else if (c->fpp_digits < 0 || c->fpp_digits > 32)
        snprintf(err, len, "--fpp-digits %lld: give 0 to 32", (long long)c->fpp_digits);
    else if (c->use_existing && !c->remove_each_rep)
        snprintf(err, len, "--use-existing only keeps --remove-each-rep from removing the "
                 "files before a write: add --remove-each-rep or drop it");
    else if (c->reorder_random < 0 || c->reorder_random > 2)
        snprintf(err, len, "--reorder-random %lld: 0 (off), 1 (IOR -Z) or 2 (IOR -Z -Z)",
                 (long long)c->reorder_random);
    else if (c->reorder_random && (c->reorder || (c->layout != IOLAB_LAYOUT_FPP &&
                                                  c->layout != IOLAB_LAYOUT_SEGMENTED)))
        snprintf(err, len, "--reorder-random reads other ranks' data as IOR -Z: with "
                 "--layout fpp or segmented and without --reorder (IOR refuses -C with -Z)");
    else if (c->check_write && (!c->verify || !c->write))
        snprintf(err, len, "--check-write reads back and checks a write: add --verify (the "
                 "pattern it checks) and a write phase");
    else if (c->read_xfers < -1)
        snprintf(err, len, "--read-xfers %lld: give a count, 0 for all (-1: unset)",
                 (long long)c->read_xfers);
    else if (c->read_xfers >= 0 && (c->file_view || iolab_layout_aggregated(&run->layout) ||
                                    c->layout == IOLAB_LAYOUT_SUBARRAY))
        snprintf(err, len, "--read-xfers counts single transfers: it applies to the fpp, "
                 "segmented and strided layouts without --file-view");
    else if (c->stonewall_stop && c->stonewall <= 0)
        snprintf(err, len, "--stonewall-stop changes what --stonewall does: add --stonewall S");
    else if (c->reorder_nodes < 0)
        snprintf(err, len, "--reorder-nodes %lld: 0 or more hosts",
                 (long long)c->reorder_nodes);
    else if (c->phase_delay < 0 || c->max_time < 0)
        snprintf(err, len, "--phase-delay and --max-time take seconds, 0 or more");
    else
        return 0;
    return -1;
}

/* --- IOR's repetitions: --remove-each-rep, --max-time, --file-per-rep --- */
/* Remove the layout's files (collective, untimed): rank f % ranks removes file f. */
void iolab_ior_remove_files(iolab_run_t *run)
{
    MPI_Barrier(run->world);
    for (int f = 0; f < iolab_layout_nfiles(&run->layout); f++)
        if (f % run->ranks == run->rank) {
            char path[4096];
            iolab_run_file_path(run, f, path, sizeof path);
            run->be->remove(run->be_state, path);
        }
    MPI_Barrier(run->world);
}

/* --max-time: rank 0's clock decides for all (collective). */
int iolab_ior_time_is_up(const iolab_run_t *run, double start)
{
    if (run->cfg.max_time <= 0)
        return 0;
    int up = MPI_Wtime() - start >= run->cfg.max_time;
    MPI_Bcast(&up, 1, MPI_INT, 0, run->world);
    return up;
}

/* After a repetition, as IOR: its files go unless kept (only files this run wrote). */
void iolab_ior_end_rep(iolab_run_t *run)
{
    int mine = run->files_exist, any = 0;
    if (!run->cfg.remove_each_rep || run->cfg.keep)
        return;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, run->world);
    if (!any)
        return;
    iolab_ior_remove_files(run);
    run->files_exist = 0;
}
