/* libiolab-trace-mpi: shared-file reduction at MPI_Finalize, as Darshan does it.
 *
 * A file with a record on every rank (same module, same path hash) becomes one record of
 * rank -1 on rank 0; the other ranks drop theirs. How a counter combines follows from its
 * kind in counters/iolab_counters.def: counts and bytes add up, offsets take the maximum,
 * start timestamps the earliest, end timestamps and slowest-operation times the latest,
 * times add up; the common values' counts add up over every rank's whole table (the 4 most
 * common kept, in Darshan's order); fastest/slowest rank and the population
 * variance of time and bytes over ranks are computed. src/iolab/sources/profile_reduce.py
 * applies the same rules when a profile was made without this step (IOLAB_TRACE_NO_REDUCE=1).
 */
#include <mpi.h>

#include "iolab_trace_core.h"

#include <stdlib.h>

enum { R_SUM, R_MAX, R_FIRST, R_MIN_NONZERO };

/* Distinct common values carried through the reduction: each rank's whole table (up to
 * IOLAB_CVAL_MAX values, not only its 4 most common), their counts adding up. Merging the
 * ranks' top-4 lists pairwise, as Darshan does, loses counts: a size every rank makes once
 * (4 x 1920 B on 4 ranks) falls out of each pair's list behind sizes each rank makes twice,
 * and the file showed 2 x 1968 B as its most common access. The 4 most common are picked
 * at the end, ordered as Darshan orders them (count, then value, both descending). */
#define RED_CVALS (2 * IOLAB_CVAL_MAX)

typedef struct {
    int64_t val[RED_CVALS], cnt[RED_CVALS];
    int32_t n;
} red_cv_t;

typedef struct {
    int64_t c[IOLAB_MAX_NI];
    double f[IOLAB_MAX_NF];
    double n, t_sum, t_sq, b_sum, b_sq;
    double fast_t, slow_t;
    int64_t fast_rank, slow_rank, fast_b, slow_b;
    red_cv_t acc, str; /* ACCESS1_ACCESS.. / STRIDE1_STRIDE.. (modules that have them) */
} red_t;

typedef struct {
    int ni, nf;
    const char *const *inames, *const *fnames, *const *ikinds, *const *fkinds;
    signed char irule[IOLAB_MAX_NI], frule[IOLAB_MAX_NF];
    int access, stride;                  /* index of *1_ACCESS / *1_STRIDE, or -1 */
    int max_size[2], max_time[2];        /* MAX_{READ,WRITE}_TIME_SIZE, F_MAX_{...}_TIME */
    int rtime, wtime, mtime, bread, bwritten;
    int fast, fast_b, slow, slow_b, f_fast, f_slow, var_t, var_b;
} mod_info_t;

/* X-macro lists per module and type, from the one .def file. */
static const char *const posix_in[] = {
#define IOLAB_POSIX_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const posix_ik[] = {
#define IOLAB_POSIX_I(name, kind, unit, doc) #kind,
#include "iolab_counters.def"
    NULL};
static const char *const posix_fn[] = {
#define IOLAB_POSIX_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const posix_fk[] = {
#define IOLAB_POSIX_F(name, kind, unit, doc) #kind,
#include "iolab_counters.def"
    NULL};
static const char *const stdio_in[] = {
#define IOLAB_STDIO_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const stdio_ik[] = {
#define IOLAB_STDIO_I(name, kind, unit, doc) #kind,
#include "iolab_counters.def"
    NULL};
static const char *const stdio_fn[] = {
#define IOLAB_STDIO_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const stdio_fk[] = {
#define IOLAB_STDIO_F(name, kind, unit, doc) #kind,
#include "iolab_counters.def"
    NULL};
static const char *const mpiio_in[] = {
#define IOLAB_MPIIO_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const mpiio_ik[] = {
#define IOLAB_MPIIO_I(name, kind, unit, doc) #kind,
#include "iolab_counters.def"
    NULL};
static const char *const mpiio_fn[] = {
#define IOLAB_MPIIO_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const mpiio_fk[] = {
#define IOLAB_MPIIO_F(name, kind, unit, doc) #kind,
#include "iolab_counters.def"
    NULL};

static mod_info_t mods[IOLAB_NMODS];
static int cur_mod; /* module of the reduction in progress (the MPI_Op has no context) */

static int find(const char *const *names, const char *prefix, const char *suffix)
{
    char want[96];
    snprintf(want, sizeof want, "%s_%s", prefix, suffix);
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], want) == 0)
            return i;
    return -1;
}

static void info_init(mod_info_t *m, const char *p, const char *const *in, const char *const *ik,
                      const char *const *fn, const char *const *fk)
{
    m->inames = in, m->ikinds = ik, m->fnames = fn, m->fkinds = fk;
    for (m->ni = 0; in[m->ni]; m->ni++) {
        const char *k = ik[m->ni];
        m->irule[m->ni] = (!strcmp(k, "count") || !strcmp(k, "bytes")) ? R_SUM
                          : !strcmp(k, "offset")                        ? R_MAX
                                                                        : R_FIRST;
    }
    for (m->nf = 0; fn[m->nf]; m->nf++) {
        const char *k = fk[m->nf], *n = fn[m->nf];
        m->frule[m->nf] = !strcmp(k, "timestamp") ? (strstr(n, "_START_") ? R_MIN_NONZERO : R_MAX)
                          : strstr(n, "_F_MAX_")   ? R_MAX
                                                   : R_SUM;
    }
    m->access = find(in, p, "ACCESS1_ACCESS");
    m->stride = find(in, p, "STRIDE1_STRIDE");
    m->max_size[0] = find(in, p, "MAX_READ_TIME_SIZE");
    m->max_size[1] = find(in, p, "MAX_WRITE_TIME_SIZE");
    m->max_time[0] = find(fn, p, "F_MAX_READ_TIME");
    m->max_time[1] = find(fn, p, "F_MAX_WRITE_TIME");
    m->rtime = find(fn, p, "F_READ_TIME"), m->wtime = find(fn, p, "F_WRITE_TIME");
    m->mtime = find(fn, p, "F_META_TIME");
    m->bread = find(in, p, "BYTES_READ"), m->bwritten = find(in, p, "BYTES_WRITTEN");
    m->fast = find(in, p, "FASTEST_RANK"), m->fast_b = find(in, p, "FASTEST_RANK_BYTES");
    m->slow = find(in, p, "SLOWEST_RANK"), m->slow_b = find(in, p, "SLOWEST_RANK_BYTES");
    m->f_fast = find(fn, p, "F_FASTEST_RANK_TIME"), m->f_slow = find(fn, p, "F_SLOWEST_RANK_TIME");
    m->var_t = find(fn, p, "F_VARIANCE_RANK_TIME"), m->var_b = find(fn, p, "F_VARIANCE_RANK_BYTES");
}

/* Whether (v, n) comes before (w, k) in Darshan's order of common values. */
static int cv_before(int64_t n, int64_t v, int64_t k, int64_t w)
{
    return n > k || (n == k && v > w);
}

/* Count n more of value v (0 is never listed). Beyond RED_CVALS distinct values the least
 * common is given up for a more common one: the only case where a count is lost. */
static void cv_add(red_cv_t *t, int64_t v, int64_t n)
{
    if (v == 0 || n <= 0)
        return;
    for (int i = 0; i < t->n; i++)
        if (t->val[i] == v) {
            t->cnt[i] += n;
            return;
        }
    if (t->n < RED_CVALS) {
        t->val[t->n] = v, t->cnt[t->n++] = n;
        return;
    }
    int least = 0;
    for (int i = 1; i < t->n; i++)
        if (cv_before(t->cnt[least], t->val[least], t->cnt[i], t->val[i]))
            least = i;
    if (cv_before(n, v, t->cnt[least], t->val[least]))
        t->val[least] = v, t->cnt[least] = n;
}

/* A rank's values: its whole table, or its 4 counters when the table holds none. */
static void cv_load(red_cv_t *t, const iolab_cval_t *table, const int64_t *c4)
{
    memset(t, 0, sizeof *t);
    if (table->n > 0)
        for (int i = 0; i < table->n; i++)
            cv_add(t, table->val[i], table->freq[i]);
    else
        for (int i = 0; i < 4; i++)
            cv_add(t, c4[i], c4[4 + i]);
}

/* The 4 most common of t into the 8 counters at c4 (values, then counts). */
static void cv_store(const red_cv_t *t, int64_t *c4)
{
    int taken[RED_CVALS] = {0};
    for (int k = 0; k < 4; k++) {
        int best = -1;
        for (int i = 0; i < t->n; i++)
            if (!taken[i] && (best < 0 || cv_before(t->cnt[i], t->val[i], t->cnt[best],
                                                    t->val[best])))
                best = i;
        c4[k] = best < 0 ? 0 : t->val[best];
        c4[4 + k] = best < 0 ? 0 : t->cnt[best];
        if (best >= 0)
            taken[best] = 1;
    }
}

/* r = l o r, l being the lower ranks (the operation is not commutative). */
static void merge(const mod_info_t *m, const red_t *l, red_t *r)
{
    for (int i = 0; i < l->acc.n; i++)
        cv_add(&r->acc, l->acc.val[i], l->acc.cnt[i]);
    for (int i = 0; i < l->str.n; i++)
        cv_add(&r->str, l->str.val[i], l->str.cnt[i]);
    for (int d = 0; d < 2; d++) /* the slowest operation's size goes with its time */
        if (m->max_size[d] >= 0 && l->f[m->max_time[d]] >= r->f[m->max_time[d]])
            r->c[m->max_size[d]] = l->c[m->max_size[d]];
    for (int i = 0; i < m->ni; i++) {
        if (i == m->max_size[0] || i == m->max_size[1])
            continue;
        if (m->irule[i] == R_SUM)
            r->c[i] += l->c[i];
        else if (m->irule[i] == R_MAX)
            r->c[i] = l->c[i] > r->c[i] ? l->c[i] : r->c[i];
        else if (l->c[i])
            r->c[i] = l->c[i];
    }
    for (int i = 0; i < m->nf; i++) {
        double a = l->f[i], b = r->f[i];
        r->f[i] = m->frule[i] == R_SUM   ? a + b
                  : m->frule[i] == R_MAX ? (a > b ? a : b)
                                         : ((a > 0 && (b == 0 || a < b)) ? a : b);
    }
    r->n += l->n, r->t_sum += l->t_sum, r->t_sq += l->t_sq, r->b_sum += l->b_sum;
    r->b_sq += l->b_sq;
    if (l->fast_t <= r->fast_t)
        r->fast_t = l->fast_t, r->fast_rank = l->fast_rank, r->fast_b = l->fast_b;
    if (l->slow_t >= r->slow_t)
        r->slow_t = l->slow_t, r->slow_rank = l->slow_rank, r->slow_b = l->slow_b;
}

static void red_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        merge(&mods[cur_mod], (red_t *)in + i, (red_t *)inout + i);
}

/* This rank's record, in seconds since the job's first rank started. */
static void load(const mod_info_t *m, const iolab_rec_t *rec, int rank, double tick,
                 double shift, red_t *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->c, rec->c, sizeof out->c);
    for (int i = 0; i < m->nf; i++) {
        out->f[i] = rec->f[i] * tick;
        if (!strcmp(m->fkinds[i], "timestamp") && out->f[i] > 0)
            out->f[i] += shift;
    }
    double t = out->f[m->rtime] + out->f[m->wtime] + out->f[m->mtime];
    double b = (double)(out->c[m->bread] + out->c[m->bwritten]);
    out->n = 1, out->t_sum = t, out->t_sq = t * t, out->b_sum = b, out->b_sq = b * b;
    out->fast_t = out->slow_t = t;
    out->fast_rank = out->slow_rank = rank;
    out->fast_b = out->slow_b = (int64_t)b;
    if (m->access >= 0)
        cv_load(&out->acc, &rec->access, &rec->c[m->access]);
    if (m->stride >= 0)
        cv_load(&out->str, &rec->stride, &rec->c[m->stride]);
}

/* The reduced values into rank 0's record. */
static void store(const mod_info_t *m, const red_t *v, iolab_rec_t *rec, double base)
{
    memcpy(rec->c, v->c, sizeof rec->c);
    memcpy(rec->f, v->f, sizeof rec->f);
    if (m->access >= 0)
        cv_store(&v->acc, &rec->c[m->access]);
    if (m->stride >= 0)
        cv_store(&v->str, &rec->c[m->stride]);
    rec->c[m->fast] = v->fast_rank, rec->c[m->fast_b] = v->fast_b;
    rec->c[m->slow] = v->slow_rank, rec->c[m->slow_b] = v->slow_b;
    rec->f[m->f_fast] = v->fast_t, rec->f[m->f_slow] = v->slow_t;
    double mt = v->t_sum / v->n, mb = v->b_sum / v->n;
    rec->f[m->var_t] = v->t_sq / v->n - mt * mt;
    rec->f[m->var_b] = v->b_sq / v->n - mb * mb;
    rec->reduced = 1;
    rec->time_base = base;
}

/* Records of module mod that every rank has, in rank 0's order; returns their count. */
static int shared_records(int mod, int rank, iolab_rec_t ***out)
{
    iolab_pool_t *p = &iolab_core.pool[mod];
    int n = 0;
    uint64_t *ids = NULL;
    if (rank == 0) {
        ids = malloc((p->n + 1) * sizeof *ids);
        for (uint32_t i = 0; ids && i < p->n; i++)
            if (p->recs[i].used && !p->recs[i].reduced)
                ids[n++] = p->recs[i].id;
    }
    PMPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0)
        ids = malloc((size_t)(n + 1) * sizeof *ids);
    int *have = calloc((size_t)n + 1, sizeof *have), *all = calloc((size_t)n + 1, sizeof *all);
    iolab_rec_t **recs = calloc((size_t)n + 1, sizeof *recs);
    PMPI_Bcast(ids, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    for (int j = 0; j < n; j++)
        for (uint32_t i = 0; i < p->n && !have[j]; i++)
            if (p->recs[i].id == ids[j] && p->recs[i].used && !p->recs[i].reduced)
                have[j] = 1, recs[j] = &p->recs[i];
    PMPI_Allreduce(have, all, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int k = 0;
    for (int j = 0; j < n; j++)
        if (all[j])
            recs[k++] = recs[j];
    free(ids), free(have), free(all);
    *out = recs;
    return k;
}

void iolab_mpi_reduce_shared(void)
{
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return;
    info_init(&mods[IOLAB_MOD_POSIX], "POSIX", posix_in, posix_ik, posix_fn, posix_fk);
    info_init(&mods[IOLAB_MOD_STDIO], "STDIO", stdio_in, stdio_ik, stdio_fn, stdio_fk);
    info_init(&mods[IOLAB_MOD_MPIIO], "MPIIO", mpiio_in, mpiio_ik, mpiio_fn, mpiio_fk);
    double base, start = iolab_core.start_unix, tick = iolab_core_seconds_per_tick();
    PMPI_Allreduce(&start, &base, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Datatype type;
    MPI_Op op;
    PMPI_Type_contiguous((int)sizeof(red_t), MPI_BYTE, &type);
    PMPI_Type_commit(&type);
    PMPI_Op_create(red_op, 0, &op);
    /* POSIX, STDIO, MPI-IO; the HDF5 layer's records are reduced by the loader. */
    for (int mod = 0; mod <= IOLAB_MOD_MPIIO; mod++) {
        iolab_rec_t **recs;
        int k = shared_records(mod, rank, &recs);
        red_t *mine = calloc((size_t)k + 1, sizeof *mine), *sum = calloc((size_t)k + 1, sizeof *sum);
        for (int j = 0; j < k; j++) {
            pthread_mutex_lock(&recs[j]->lock);
            load(&mods[mod], recs[j], rank, tick, start - base, &mine[j]);
        }
        cur_mod = mod;
        if (k)
            PMPI_Reduce(mine, sum, k, type, op, 0, MPI_COMM_WORLD);
        for (int j = 0; j < k; j++) {
            if (rank == 0)
                store(&mods[mod], &sum[j], recs[j], base);
            else
                recs[j]->used = 0, recs[j]->merged = 1; /* rank 0 writes the reduced record */
            pthread_mutex_unlock(&recs[j]->lock);
        }
        free(mine), free(sum), free(recs);
    }
    PMPI_Op_free(&op);
    PMPI_Type_free(&type);
}
