/* PnetCDF time steps: T steps, each writing V variables (N doubles per rank, one record).
 * Usage: pnc_steps PATH T V N iput|put_all
 *   iput:    V ncmpi_iput_vara_double requests completed by one ncmpi_wait_all per step,
 *            which PnetCDF turns into one collective MPI-IO write: already non-blocking.
 *   put_all: V blocking collective ncmpi_put_vara_double_all calls per step. */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(e) do { int err_ = (e); if (err_ != NC_NOERR) { \
    fprintf(stderr, "%s\n", ncmpi_strerror(err_)); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

int main(int argc, char **argv)
{
    int rank, size, nc, dims[2], st[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 6)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int nb = strcmp(argv[5], "iput") == 0;
    if (!nb && strcmp(argv[5], "put_all") != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int steps = atoi(argv[2]), nv = atoi(argv[3]);
    MPI_Offset n = atol(argv[4]);
    if (nv < 1 || nv > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int *var = malloc(sizeof *var * (size_t)nv), *req = malloc(sizeof *req * (size_t)nv);
    double *buf = malloc(sizeof *buf * (size_t)n);
    for (MPI_Offset i = 0; i < n; i++)
        buf[i] = rank + 0.5;
    CHECK(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
    CHECK(ncmpi_set_fill(nc, NC_NOFILL, NULL));
    CHECK(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dims[0]));
    CHECK(ncmpi_def_dim(nc, "x", n * size, &dims[1]));
    for (int v = 0; v < nv; v++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", v);
        CHECK(ncmpi_def_var(nc, name, NC_DOUBLE, 2, dims, &var[v]));
    }
    CHECK(ncmpi_enddef(nc));
    for (int t = 0; t < steps; t++) {
        MPI_Offset start[2] = {t, rank * n}, count[2] = {1, n};
        for (int v = 0; v < nv; v++) {
            if (nb)
                CHECK(ncmpi_iput_vara_double(nc, var[v], start, count, buf, &req[v]));
            else
                CHECK(ncmpi_put_vara_double_all(nc, var[v], start, count, buf));
        }
        if (nb)
            CHECK(ncmpi_wait_all(nc, nv, req, st));
    }
    CHECK(ncmpi_close(nc));
    free(buf);
    free(req);
    free(var);
    MPI_Finalize();
    return 0;
}
