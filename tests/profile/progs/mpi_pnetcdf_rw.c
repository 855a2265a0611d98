/* PnetCDF, every kind of access the PNETCDF counters tell apart. Dimensions t (unlimited),
 * y = 4 x nprocs, x = 16; variables int grid(y, x) and double series(t, x) (a record
 * variable); rank r owns rows 4r..4r+3 of grid and record r of series.
 *   grid:   put_vara_int_all (4 x 16: 256 B), then independently put_vars_int (4 x 8,
 *           stride 1 x 2: 128 B) and put_var1_int (4 B)
 *   series: iput_vara_double (1 x 16: 128 B) + ncmpi_wait_all
 *   file:   ncmpi_redef + ncmpi_enddef, ncmpi_sync
 *   grid:   independently iget_vara_int (256 B) + ncmpi_wait
 *   series: get_var_double_all (every record: nprocs x 128 B)
 *   grid:   put_varn_int_all of 2 requests (1 x 4 and 2 x 2: 32 B)
 *   close; ncmpi_open, ncmpi_inq_varid(grid), get_vara_int_all of its rows (256 B), close
 * Usage: mpi_pnetcdf_rw FILE */
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
    int rank, size, nc, dims[3], grid, series, req, st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int rows[64], back[64];
    double rec[16], *all = malloc((size_t)size * 16 * sizeof(double));
    for (int i = 0; i < 64; i++)
        rows[i] = rank * 1000 + i;
    for (int i = 0; i < 16; i++)
        rec[i] = rank + i / 100.0;
    check(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
    check(ncmpi_def_dim(nc, "t", NC_UNLIMITED, &dims[0]));
    check(ncmpi_def_dim(nc, "y", (MPI_Offset)4 * size, &dims[1]));
    check(ncmpi_def_dim(nc, "x", 16, &dims[2]));
    check(ncmpi_def_var(nc, "grid", NC_INT, 2, &dims[1], &grid));
    int sdims[2] = {dims[0], dims[2]};
    check(ncmpi_def_var(nc, "series", NC_DOUBLE, 2, sdims, &series));
    check(ncmpi_enddef(nc));

    MPI_Offset start[2] = {(MPI_Offset)4 * rank, 0}, count[2] = {4, 16};
    check(ncmpi_put_vara_int_all(nc, grid, start, count, rows));
    check(ncmpi_begin_indep_data(nc));
    MPI_Offset half[2] = {4, 8}, stride[2] = {1, 2}, one[2] = {(MPI_Offset)4 * rank, 1};
    int evens[32];
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 8; k++)
            evens[j * 8 + k] = rows[j * 16 + 2 * k];
    check(ncmpi_put_vars_int(nc, grid, start, half, stride, evens));
    check(ncmpi_put_var1_int(nc, grid, one, &rows[1]));
    check(ncmpi_end_indep_data(nc));

    MPI_Offset rstart[2] = {rank, 0}, rcount[2] = {1, 16};
    check(ncmpi_iput_vara_double(nc, series, rstart, rcount, rec, &req));
    check(ncmpi_wait_all(nc, 1, &req, &st));
    check(ncmpi_redef(nc));
    check(ncmpi_enddef(nc));
    check(ncmpi_sync(nc));

    check(ncmpi_begin_indep_data(nc));
    check(ncmpi_iget_vara_int(nc, grid, start, count, back, &req));
    check(ncmpi_wait(nc, 1, &req, &st));
    check(ncmpi_end_indep_data(nc));
    for (int i = 0; i < 64; i++)
        if (back[i] != rows[i])
            MPI_Abort(MPI_COMM_WORLD, 3);
    check(ncmpi_get_var_double_all(nc, series, all));

    MPI_Offset s0[2] = {(MPI_Offset)4 * rank, 0}, c0[2] = {1, 4};
    MPI_Offset s1[2] = {(MPI_Offset)4 * rank + 1, 0}, c1[2] = {2, 2};
    MPI_Offset *starts[2] = {s0, s1}, *counts[2] = {c0, c1};
    int vals[8] = {rows[0], rows[1], rows[2], rows[3], rows[16], rows[17], rows[32], rows[33]};
    check(ncmpi_put_varn_int_all(nc, grid, 2, starts, counts, vals));
    check(ncmpi_close(nc));

    check(ncmpi_open(MPI_COMM_WORLD, argv[1], NC_NOWRITE, MPI_INFO_NULL, &nc));
    check(ncmpi_inq_varid(nc, "grid", &grid));
    check(ncmpi_get_vara_int_all(nc, grid, start, count, back));
    for (int i = 0; i < 64; i++)
        if (back[i] != rows[i])
            MPI_Abort(MPI_COMM_WORLD, 4);
    check(ncmpi_close(nc));
    free(all);
    MPI_Finalize();
    return 0;
}
