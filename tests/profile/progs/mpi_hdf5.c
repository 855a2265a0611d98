/* As Darshan's h5_par: 4 ranks, HDF5 with the MPI-IO driver, one 1-D dataset of doubles
 * "data" of 2^20 x 4 x 8 elements; 8 steps, in step s rank r writes the hyperslab starting at
 * (s*4 + r) * 2^20, 2^20 elements, with a collective transfer. Usage: mpi_hdf5 PATH [STEPS
 * [ELEMENTS]] (defaults 8 and 2^20: bench/trace_overhead scales them down for a smoke run) */
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int steps = argc > 2 ? atoi(argv[2]) : 8;
    const hsize_t chunk = argc > 3 ? (hsize_t)atoll(argv[3]) : 1 << 20;
    const hsize_t total = chunk * (hsize_t)size * (hsize_t)steps;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t fspace = H5Screate_simple(1, &total, NULL);
    hid_t dset = H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    hid_t mspace = H5Screate_simple(1, &chunk, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    double *buf = calloc(chunk, sizeof *buf);
    for (int s = 0; s < steps; s++) {
        hsize_t start = ((hsize_t)s * (hsize_t)size + (hsize_t)rank) * chunk;
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &chunk, NULL);
        H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf);
    }
    free(buf);
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Dclose(dset);
    H5Sclose(fspace);
    H5Fclose(file);
    H5Pclose(fapl);
    MPI_Finalize();
    return 0;
}
