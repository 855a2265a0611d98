/* iolab-bench: N-dimensional decompositions (see decomp.h). */
#include "decomp.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int iolab_grid_parse(const char *s, uint64_t *dims, int maxd)
{
    int n = 0;
    if (!s || !*s)
        return -1;
    for (const char *p = s;;) {
        if (*p < '0' || *p > '9' || n == maxd)
            return -1;
        errno = 0;
        char *end = NULL;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno == ERANGE || v == 0 || v > (unsigned long long)INT_MAX)
            return -1;
        dims[n++] = v;
        if (*end == '\0')
            return n;
        if (*end != 'x' && *end != 'X')
            return -1;
        p = end + 1;
    }
}

void iolab_split(uint64_t n, int p, int c, uint64_t *start, uint64_t *count)
{
    uint64_t base = n / (uint64_t)p, extra = n % (uint64_t)p, uc = (uint64_t)c;
    *count = base + (uc < extra ? 1 : 0);
    *start = uc * base + (uc < extra ? uc : extra);
}

static int isqrt_exact(int n)
{
    int q = 0;
    while ((q + 1) * (q + 1) <= n)
        q++;
    return q * q == n ? q : -1;
}

/* The array in the file: record, grid, and btio's components. */
static void set_dims(iolab_decomp_t *d)
{
    d->nd = 0;
    d->dims[d->nd++] = d->steps;
    for (int i = 0; i < d->ngrid; i++)
        d->dims[d->nd++] = d->grid[i];
    if (d->kind == IOLAB_DECOMP_BTIO)
        d->dims[d->nd++] = IOLAB_BTIO_COMPONENTS;
}

static int check_pgrid(const iolab_decomp_t *d, char *err, size_t errlen)
{
    long long prod = 1;
    for (int i = 0; i < d->ngrid; i++) {
        if (d->pgrid[i] < 1) {
            snprintf(err, errlen, "--pgrid: every dimension needs at least 1 rank");
            return -1;
        }
        prod *= d->pgrid[i];
    }
    if (prod != d->ranks) {
        snprintf(err, errlen, "--pgrid has %lld ranks but the run has %d; give as many "
                 "dimensions as --grid whose product is the number of ranks", prod, d->ranks);
        return -1;
    }
    return 0;
}

int iolab_decomp_init(iolab_decomp_t *d, int kind, int ranks, int ngrid, const uint64_t *grid,
                      const int *pgrid, uint64_t elem, uint64_t steps, char *err,
                      size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->ranks = ranks;
    d->ngrid = ngrid;
    d->elem = elem;
    d->steps = steps;
    if (ngrid < 1 || ngrid > IOLAB_GRID_MAXDIMS || elem == 0 || steps == 0 ||
        elem > INT_MAX || steps > INT_MAX) {
        snprintf(err, errlen, "--grid needs 1 to %d dimensions, --elem and --steps 1 to %d",
                 IOLAB_GRID_MAXDIMS, INT_MAX);
        return -1;
    }
    memcpy(d->grid, grid, (size_t)ngrid * sizeof *grid);
    if (kind == IOLAB_DECOMP_BTIO) {
        int q = isqrt_exact(ranks);
        if (q < 1 || ngrid != 3) {
            snprintf(err, errlen, "--workload btio needs a square number of ranks (1, 4, 9, "
                     "16 ...; got %d) and a 3-D --grid", ranks);
            return -1;
        }
        for (int i = 0; i < 3; i++)
            d->pgrid[i] = q;
    } else {
        memcpy(d->pgrid, pgrid, (size_t)ngrid * sizeof *pgrid);
        if (check_pgrid(d, err, errlen) != 0)
            return -1;
    }
    for (int i = 0; i < ngrid; i++)
        if ((uint64_t)d->pgrid[i] > grid[i]) {
            snprintf(err, errlen, "--grid dimension %d has %llu elements for %d pieces; give "
                     "it at least as many elements as pieces (or choose --pgrid)", i,
                     (unsigned long long)grid[i], d->pgrid[i]);
            return -1;
        }
    set_dims(d);
    uint64_t total = elem;
    for (int i = 0; i < d->nd; i++) {
        if (total > (UINT64_MAX / 2) / d->dims[i]) {
            snprintf(err, errlen, "--grid x --elem x --steps is more than 2^63 bytes; use "
                     "smaller sizes");
            return -1;
        }
        total *= d->dims[i];
    }
    return 0;
}

int iolab_decomp_nboxes(const iolab_decomp_t *d, int r)
{
    (void)r;
    return d->kind == IOLAB_DECOMP_BTIO ? d->pgrid[0] : 1;
}

void iolab_decomp_box(const iolab_decomp_t *d, int r, int k, uint64_t step, iolab_box_t *b)
{
    memset(b, 0, sizeof *b);
    b->start[0] = step;
    b->count[0] = 1;
    if (d->kind == IOLAB_DECOMP_BTIO) {
        int q = d->pgrid[0], row = r / q, col = r % q;
        /* cell k of rank (row, col): z = k, y = row - k, x = col + k (all mod q); C order
         * puts z first, so the cells come in file order */
        int cell[3] = {k, ((row - k) % q + q) % q, (col + k) % q};
        for (int i = 0; i < 3; i++)
            iolab_split(d->grid[i], q, cell[i], &b->start[1 + i], &b->count[1 + i]);
        b->start[4] = 0;
        b->count[4] = IOLAB_BTIO_COMPONENTS;
        return;
    }
    /* rank coordinates in row-major order, last dimension fastest (as MPI_Cart_create) */
    int rest = r;
    for (int i = d->ngrid - 1; i >= 0; i--) {
        int c = rest % d->pgrid[i];
        rest /= d->pgrid[i];
        iolab_split(d->grid[i], d->pgrid[i], c, &b->start[1 + i], &b->count[1 + i]);
    }
}

uint64_t iolab_box_elems(const iolab_decomp_t *d, const iolab_box_t *b)
{
    uint64_t n = 1;
    for (int i = 0; i < d->nd; i++)
        n *= b->count[i];
    return n;
}

uint64_t iolab_decomp_step_bytes(const iolab_decomp_t *d, int r)
{
    uint64_t bytes = 0;
    iolab_box_t b;
    for (int k = 0; k < iolab_decomp_nboxes(d, r); k++) {
        iolab_decomp_box(d, r, k, 0, &b);
        bytes += iolab_box_elems(d, &b) * d->elem;
    }
    return bytes;
}

uint64_t iolab_decomp_file_bytes(const iolab_decomp_t *d)
{
    uint64_t n = d->elem;
    for (int i = 0; i < d->nd; i++)
        n *= d->dims[i];
    return n;
}

/* The first dimension of a run: every later dimension is covered whole, this one is not
 * (or it is the first). */
static int run_dim(const iolab_decomp_t *d, const iolab_box_t *b)
{
    int j = d->nd - 1;
    while (j > 0 && b->count[j] == d->dims[j])
        j--;
    return j;
}

void iolab_box_runs(const iolab_decomp_t *d, const iolab_box_t *b, uint64_t *nruns,
                    uint64_t *runlen)
{
    int j = run_dim(d, b);
    uint64_t len = d->elem * b->count[j], n = 1;
    for (int i = j + 1; i < d->nd; i++)
        len *= d->dims[i];
    for (int i = 0; i < j; i++)
        n *= b->count[i];
    *nruns = n;
    *runlen = len;
}

uint64_t iolab_box_run_offset(const iolab_decomp_t *d, const iolab_box_t *b, uint64_t k)
{
    int j = run_dim(d, b);
    uint64_t idx[IOLAB_DECOMP_MAXDIMS];
    for (int i = j - 1; i >= 0; i--) {  /* run k's position in the box's leading dims */
        idx[i] = k % b->count[i];
        k /= b->count[i];
    }
    uint64_t off = 0;
    for (int i = 0; i < d->nd; i++)
        off = off * d->dims[i] + b->start[i] + (i < j ? idx[i] : 0);
    return off * d->elem;
}

int iolab_boxes_ordered(const iolab_decomp_t *d, const iolab_box_t *b, int n)
{
    for (int i = 0; i + 1 < n; i++) {
        uint64_t runs, len;
        iolab_box_runs(d, &b[i], &runs, &len);
        if (runs == 0 || iolab_box_elems(d, &b[i + 1]) == 0)
            continue;
        uint64_t last = iolab_box_run_offset(d, &b[i], runs - 1) + len;
        if (last > iolab_box_run_offset(d, &b[i + 1], 0))
            return 0;
    }
    return 1;
}
