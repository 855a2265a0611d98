/* iolab-bench: N-dimensional arrays decomposed over ranks, as pure functions (no I/O, no MPI;
 * unit-tested by ctest).
 *
 * The file holds one array in C order (slowest dimension first) whose first dimension is the
 * record (time step): dims = {steps, grid..., [components]}. Each rank owns one or more boxes
 * of it per step (start and count per dimension); a box is written with one file view
 * (MPI_Type_create_subarray), one HDF5 hyperslab or one PnetCDF vara call.
 *
 *  - block (--layout subarray): the grid (1-4 dimensions) is split over a process grid, one
 *    box per rank, uneven sizes allowed (the first n % p ranks of a dimension get one more);
 *  - btio (--workload btio): NAS BT's diagonal multi-partition over q*q ranks: the 3-D grid is
 *    cut into q*q*q cells, rank (row, col) owns q cells, one in every z-slab, each followed
 *    by the 5 solution components (NPB BT's make_set: x = col + c, y = row - c, z = c). */
#ifndef IOLAB_DECOMP_H
#define IOLAB_DECOMP_H

#include <stddef.h>
#include <stdint.h>

#define IOLAB_GRID_MAXDIMS 4
#define IOLAB_DECOMP_MAXDIMS (IOLAB_GRID_MAXDIMS + 2) /* record + grid + btio's components */
#define IOLAB_BTIO_COMPONENTS 5

typedef enum { IOLAB_DECOMP_BLOCK = 0, IOLAB_DECOMP_BTIO } iolab_decomp_kind_t;

typedef struct iolab_decomp {
    int kind;                       /* iolab_decomp_kind_t */
    int ranks;
    int ngrid;                      /* grid dimensions (btio: 3) */
    uint64_t grid[IOLAB_GRID_MAXDIMS];
    int pgrid[IOLAB_GRID_MAXDIMS];  /* block: ranks per dimension; btio: q per dimension */
    uint64_t elem;                  /* bytes per element */
    uint64_t steps;                 /* records */
    int nd;                         /* dimensions of the array in the file */
    uint64_t dims[IOLAB_DECOMP_MAXDIMS];
} iolab_decomp_t;

/* One box of the array: count[d] elements from start[d] in each dimension. */
typedef struct iolab_box {
    uint64_t start[IOLAB_DECOMP_MAXDIMS], count[IOLAB_DECOMP_MAXDIMS];
} iolab_box_t;

/* "2048x1024x256" -> dims (at most maxd, each >= 1). Returns the number of dimensions, or -1
 * on bad syntax, a zero, too many dimensions or overflow. */
int iolab_grid_parse(const char *s, uint64_t *dims, int maxd);

/* Piece c of n split into p: start and count (the first n % p pieces get one more). */
void iolab_split(uint64_t n, int p, int c, uint64_t *start, uint64_t *count);

/* Fill d. block: pgrid gives ranks per dimension (product = ranks); btio: ranks must be a
 * square q*q and ngrid 3 (pgrid ignored). Returns 0, or -1 with one line in err (what, how to
 * fix): a process grid that does not match, more pieces than elements in a dimension, sizes
 * past what MPI's int arguments or 2^63 bytes can describe. */
int iolab_decomp_init(iolab_decomp_t *d, int kind, int ranks, int ngrid, const uint64_t *grid,
                      const int *pgrid, uint64_t elem, uint64_t steps, char *err,
                      size_t errlen);

/* Boxes rank r owns in one step (block 1, btio q), and box k of them for step `step`, in
 * file order. */
int iolab_decomp_nboxes(const iolab_decomp_t *d, int r);
void iolab_decomp_box(const iolab_decomp_t *d, int r, int k, uint64_t step, iolab_box_t *b);

/* Elements of a box; bytes rank r moves per step; bytes of the whole file. */
uint64_t iolab_box_elems(const iolab_decomp_t *d, const iolab_box_t *b);
uint64_t iolab_decomp_step_bytes(const iolab_decomp_t *d, int r);
uint64_t iolab_decomp_file_bytes(const iolab_decomp_t *d);

/* A box is nruns contiguous runs of runlen bytes in the file (trailing dimensions the box
 * covers whole are merged into one run); run k (in the box's C order, which is its order in
 * a packed buffer) starts at byte run_offset. */
void iolab_box_runs(const iolab_decomp_t *d, const iolab_box_t *b, uint64_t *nruns,
                    uint64_t *runlen);
uint64_t iolab_box_run_offset(const iolab_decomp_t *d, const iolab_box_t *b, uint64_t k);

/* 1 when every byte of box i lies before every byte of box i+1 (a file view made of the
 * boxes is then monotonic, as MPI requires). */
int iolab_boxes_ordered(const iolab_decomp_t *d, const iolab_box_t *b, int n);

#endif
