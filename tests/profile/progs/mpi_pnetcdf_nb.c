/* PnetCDF non-blocking writes, the way checkpoint codes do them: each rank posts one
 * ncmpi_iput_vara_double of N doubles (its slice of a 1-D variable) and the data moves in
 * ncmpi_wait_all, so nearly all of the PnetCDF time is wait time. Then one more slice the
 * same way with ncmpi_wait (independent mode).
 * Usage: mpi_pnetcdf_nb FILE [N] (N doubles a rank, default 2 Mi: 16 MiB) */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdlib.h>

static void check(int err)
{
    if (err != NC_NOERR)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    int rank, size, nc, dim, var, req, st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Offset n = argc > 2 ? atoll(argv[2]) : (MPI_Offset)2 << 20;
    double *buf = malloc((size_t)n * sizeof *buf);
    for (MPI_Offset i = 0; i < n; i++)
        buf[i] = rank + (double)i;
    check(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
    check(ncmpi_def_dim(nc, "x", 2 * n * size, &dim));
    check(ncmpi_def_var(nc, "field", NC_DOUBLE, 1, &dim, &var));
    check(ncmpi_enddef(nc));
    MPI_Offset start = n * rank, count = n;
    check(ncmpi_iput_vara_double(nc, var, &start, &count, buf, &req));
    check(ncmpi_wait_all(nc, 1, &req, &st));
    check(st);
    check(ncmpi_begin_indep_data(nc));
    start = n * (size + rank);
    check(ncmpi_iput_vara_double(nc, var, &start, &count, buf, &req));
    check(ncmpi_wait(nc, 1, &req, &st));
    check(st);
    check(ncmpi_end_indep_data(nc));
    check(ncmpi_close(nc));
    free(buf);
    MPI_Finalize();
    return 0;
}
