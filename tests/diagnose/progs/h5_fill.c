/* Parallel HDF5 with fill values: one 1-D dataset of doubles, N elements per rank, a fill
 * value set and fill at allocation (early, as parallel HDF5 allocates), then each rank writes
 * its slice collectively: the file receives the fill values, then the data.
 * Usage: h5_fill PATH N fill|nofill */
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const hsize_t n = (hsize_t)atol(argv[2]), total = n * (hsize_t)size;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t fspace = H5Screate_simple(1, &total, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    double fill = -1.0;
    H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(dcpl, strcmp(argv[3], "fill") == 0 ? H5D_FILL_TIME_ALLOC
                                                         : H5D_FILL_TIME_NEVER);
    hid_t dset = H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT);
    hid_t mspace = H5Screate_simple(1, &n, NULL);
    hsize_t start = (hsize_t)rank * n;
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &n, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    double *buf = malloc(n * sizeof *buf);
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (double)(start + i);
    H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf);
    free(buf);
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(fspace);
    H5Fclose(file);
    H5Pclose(fapl);
    MPI_Finalize();
    return 0;
}
