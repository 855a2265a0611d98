/* As Darshan's pnc_par: 4 ranks, ncmpi_create(NC_CLOBBER|NC_64BIT_DATA), dims y = 256 x 4,
 * x = 1024; float temp(y, x) and double pres(y, x); rank r writes rows [r*256, r*256+256):
 * temp collectively, then pres in independent data mode. Usage: mpi_pnetcdf PATH */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, nc, dims[2], temp, pres;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc);
    ncmpi_def_dim(nc, "y", (MPI_Offset)256 * size, &dims[0]);
    ncmpi_def_dim(nc, "x", 1024, &dims[1]);
    ncmpi_def_var(nc, "temp", NC_FLOAT, 2, dims, &temp);
    ncmpi_def_var(nc, "pres", NC_DOUBLE, 2, dims, &pres);
    ncmpi_enddef(nc);
    MPI_Offset start[2] = {(MPI_Offset)rank * 256, 0}, count[2] = {256, 1024};
    float *t = calloc(256 * 1024, sizeof *t);
    double *p = calloc(256 * 1024, sizeof *p);
    ncmpi_put_vara_float_all(nc, temp, start, count, t);
    ncmpi_begin_indep_data(nc);
    ncmpi_put_vara_double(nc, pres, start, count, p);
    ncmpi_end_indep_data(nc);
    ncmpi_close(nc);
    free(t);
    free(p);
    MPI_Finalize();
    return 0;
}
