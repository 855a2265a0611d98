/* ctest: the N-D decompositions (decomp.c). Over 1- to 4-D grids with even and uneven
 * process grids, and the BTIO multi-partition over 1, 4, 9 and 16 ranks: the union of every
 * rank's boxes over every step covers the file exactly once; a box's runs, in order, are its
 * elements in C order (the order of a packed buffer); boxes come in file order; grid
 * parsing, splitting and the refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decomp.h"

static int failures, checked;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            if (failures++ < 20) {                                         \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);       \
                fprintf(stderr, __VA_ARGS__);                              \
                fputc('\n', stderr);                                       \
            }                                                              \
            return;                                                        \
        }                                                                  \
    } while (0)

/* Byte offset of element e (C order inside the box) computed element by element. */
static uint64_t elem_offset(const iolab_decomp_t *d, const iolab_box_t *b, uint64_t e)
{
    uint64_t idx[IOLAB_DECOMP_MAXDIMS], off = 0;
    for (int i = d->nd - 1; i >= 0; i--) {
        idx[i] = e % b->count[i];
        e /= b->count[i];
    }
    for (int i = 0; i < d->nd; i++)
        off = off * d->dims[i] + b->start[i] + idx[i];
    return off * d->elem;
}

static void check_cover(const iolab_decomp_t *d, const char *what)
{
    uint64_t fb = iolab_decomp_file_bytes(d);
    unsigned char *seen = calloc(fb, 1);
    uint64_t moved = 0;
    for (int r = 0; r < d->ranks; r++) {
        int nb = iolab_decomp_nboxes(d, r);
        iolab_box_t *boxes = calloc((size_t)nb, sizeof *boxes);
        for (uint64_t s = 0; s < d->steps; s++) {
            uint64_t step_bytes = 0;
            for (int k = 0; k < nb; k++) {
                iolab_box_t *b = &boxes[k];
                iolab_decomp_box(d, r, k, s, b);
                uint64_t runs, len, e = 0;
                iolab_box_runs(d, b, &runs, &len);
                CHECK(runs * len == iolab_box_elems(d, b) * d->elem, "%s: run sizes", what);
                for (uint64_t k2 = 0; k2 < runs; k2++) {
                    uint64_t off = iolab_box_run_offset(d, b, k2);
                    CHECK(off + len <= fb, "%s: rank %d run beyond the file", what, r);
                    for (uint64_t x = 0; x < len; x += d->elem, e++)
                        CHECK(elem_offset(d, b, e) == off + x, "%s: rank %d box %d run %llu "
                              "is not the box's C order", what, r, k,
                              (unsigned long long)k2);
                    for (uint64_t x = 0; x < len; x++)
                        seen[off + x]++;
                }
                step_bytes += runs * len;
            }
            CHECK(step_bytes == iolab_decomp_step_bytes(d, r), "%s: step bytes", what);
            CHECK(iolab_boxes_ordered(d, boxes, nb), "%s: rank %d boxes not in file order",
                  what, r);
            moved += step_bytes;
        }
        free(boxes);
    }
    CHECK(moved == fb, "%s: %llu bytes moved for a file of %llu", what,
          (unsigned long long)moved, (unsigned long long)fb);
    for (uint64_t x = 0; x < fb; x++)
        CHECK(seen[x] == 1, "%s: byte %llu covered %d times", what, (unsigned long long)x,
              seen[x]);
    free(seen);
    checked++;
}

/* Every process grid of `ranks` over the grid's dimensions (all factorisations). */
static void each_pgrid(const uint64_t *grid, int nd, int ranks, int *pg, int i, uint64_t elem,
                       uint64_t steps)
{
    if (i == nd - 1) {
        pg[i] = ranks;
        iolab_decomp_t d;
        char err[256], what[128];
        int total = 1;
        for (int k = 0; k < nd; k++)
            total *= pg[k];
        int rc = iolab_decomp_init(&d, IOLAB_DECOMP_BLOCK, total, nd, grid, pg, elem, steps, err,
                               sizeof err);
        int fits = 1;
        for (int k = 0; k < nd; k++)
            fits &= (uint64_t)pg[k] <= grid[k];
        snprintf(what, sizeof what, "%dD grid %llu.. pgrid %d..%d elem %llu steps %llu", nd,
                 (unsigned long long)grid[0], pg[0], pg[nd - 1], (unsigned long long)elem,
                 (unsigned long long)steps);
        if (!fits) {
            if (rc == 0 && failures++ < 20)
                fprintf(stderr, "FAIL %s: more pieces than elements accepted\n", what);
            return;
        }
        if (rc != 0) {
            if (failures++ < 20)
                fprintf(stderr, "FAIL %s: refused: %s\n", what, err);
            return;
        }
        check_cover(&d, what);
        return;
    }
    for (int p = 1; p <= ranks; p++)
        if (ranks % p == 0) {
            pg[i] = p;
            each_pgrid(grid, nd, ranks / p, pg, i + 1, elem, steps);
        }
}

static void block_grids(void)
{
    static const uint64_t grids[][IOLAB_GRID_MAXDIMS] = {
        {1}, {7}, {16}, {13},
        {5, 3}, {4, 4}, {7, 9}, {1, 6},
        {3, 5, 2}, {4, 4, 4}, {5, 1, 7},
        {2, 3, 4, 5}, {3, 3, 2, 2}};
    static const int nds[] = {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4};
    for (size_t g = 0; g < sizeof nds / sizeof *nds; g++)
        for (int ranks = 1; ranks <= 7; ranks++)
            for (uint64_t elem = 1; elem <= 8; elem *= 8)
                for (uint64_t steps = 1; steps <= 2; steps++) {
                    int pg[IOLAB_GRID_MAXDIMS];
                    each_pgrid(grids[g], nds[g], ranks, pg, 0, elem, steps);
                }
}

static void btio_grids(void)
{
    static const uint64_t grids[][3] = {{4, 4, 4}, {5, 7, 6}, {12, 12, 12}, {4, 9, 5}};
    for (size_t g = 0; g < sizeof grids / sizeof *grids; g++)
        for (int q = 1; q <= 4; q++)
            for (uint64_t steps = 1; steps <= 2; steps++) {
                iolab_decomp_t d;
                char err[256], what[128];
                snprintf(what, sizeof what, "btio %llux%llux%llu q %d steps %llu",
                         (unsigned long long)grids[g][0], (unsigned long long)grids[g][1],
                         (unsigned long long)grids[g][2], q, (unsigned long long)steps);
                int rc = iolab_decomp_init(&d, IOLAB_DECOMP_BTIO, q * q, 3, grids[g], NULL, 8,
                                           steps, err, sizeof err);
                if (rc != 0) {
                    if (grids[g][0] >= (uint64_t)q && grids[g][1] >= (uint64_t)q &&
                        grids[g][2] >= (uint64_t)q && failures++ < 20)
                        fprintf(stderr, "FAIL %s refused: %s\n", what, err);
                    continue;
                }
                if (d.nd != 5 || d.dims[4] != IOLAB_BTIO_COMPONENTS ||
                    iolab_decomp_nboxes(&d, 0) != q) {
                    if (failures++ < 20)
                        fprintf(stderr, "FAIL %s: shape\n", what);
                    continue;
                }
                check_cover(&d, what);
            }
}

/* BTIO's multi-partition: each rank has one cell in every slab of every direction. */
static void btio_diagonal(void)
{
    uint64_t grid[3] = {8, 8, 8};
    iolab_decomp_t d;
    char err[256];
    CHECK(iolab_decomp_init(&d, IOLAB_DECOMP_BTIO, 16, 3, grid, NULL, 8, 1, err,
                            sizeof err) == 0, "btio 16: %s", err);
    for (int r = 0; r < 16; r++)
        for (int dim = 1; dim <= 3; dim++) {
            unsigned seen = 0;
            for (int k = 0; k < 4; k++) {
                iolab_box_t b;
                iolab_decomp_box(&d, r, k, 0, &b);
                seen |= 1u << (b.start[dim] / 2);
            }
            CHECK(seen == 0xf, "btio rank %d dimension %d: slabs %x", r, dim, seen);
        }
    checked++;
}

static void parsing_and_refusals(void)
{
    uint64_t g[IOLAB_GRID_MAXDIMS];
    CHECK(iolab_grid_parse("2048x1024x256", g, 4) == 3 && g[0] == 2048 && g[2] == 256, "3-D");
    CHECK(iolab_grid_parse("17", g, 4) == 1 && g[0] == 17, "1-D");
    CHECK(iolab_grid_parse("1X2x3x4", g, 4) == 4 && g[3] == 4, "4-D");
    const char *bad[] = {"", "x", "4x", "x4", "0x4", "4x-1", "1x2x3x4x5", "4k", "3000000000",
                         "4 x4"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(iolab_grid_parse(bad[i], g, 4) < 0, "'%s' accepted", bad[i]);
    uint64_t s, c;
    iolab_split(10, 3, 0, &s, &c);
    CHECK(s == 0 && c == 4, "split 10/3 piece 0");
    iolab_split(10, 3, 2, &s, &c);
    CHECK(s == 7 && c == 3, "split 10/3 piece 2");
    iolab_decomp_t d;
    char err[256] = "";
    uint64_t grid[2] = {4, 4};
    int pg[2] = {2, 3};
    CHECK(iolab_decomp_init(&d, IOLAB_DECOMP_BLOCK, 4, 2, grid, pg, 8, 1, err, sizeof err) != 0
          && strstr(err, "--pgrid"), "pgrid of 6 for 4 ranks: %s", err);
    uint64_t g3[3] = {4, 4, 4};
    CHECK(iolab_decomp_init(&d, IOLAB_DECOMP_BTIO, 6, 3, g3, NULL, 8, 1, err, sizeof err) != 0
          && strstr(err, "square"), "btio over 6 ranks: %s", err);
    uint64_t huge[4] = {2000000000, 2000000000, 2000000000, 8};
    int p1[4] = {1, 1, 1, 1};
    CHECK(iolab_decomp_init(&d, IOLAB_DECOMP_BLOCK, 1, 4, huge, p1, 8, 1, err, sizeof err) != 0
          && strstr(err, "2^63"), "overflow: %s", err);
    checked++;
}

int main(void)
{
    parsing_and_refusals();
    block_grids();
    btio_grids();
    btio_diagonal();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("decomp: %d decompositions checked\n", checked);
    return 0;
}
