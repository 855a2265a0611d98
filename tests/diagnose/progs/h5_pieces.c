/* Parallel HDF5, independent transfers of small pieces: one 1-D dataset of doubles, each
 * rank owning every size-th block of B doubles; "write" creates the file and writes each
 * block with its own H5Dwrite (the default, independent, transfer property), "read" opens
 * the file read-only and reads the blocks back the same way (a job that writes nothing).
 * Usage: h5_pieces PATH BLOCKS B write|read */
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
    if (argc != 5)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const hsize_t blocks = (hsize_t)atol(argv[2]), b = (hsize_t)atol(argv[3]);
    const hsize_t total = blocks * b * (hsize_t)size;
    const int writing = strcmp(argv[4], "write") == 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file, dset, fspace;
    if (writing) {
        file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        fspace = H5Screate_simple(1, &total, NULL);
        dset = H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    } else {
        file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
        dset = H5Dopen2(file, "data", H5P_DEFAULT);
        fspace = H5Dget_space(dset);
    }
    hid_t mspace = H5Screate_simple(1, &b, NULL);
    double *buf = malloc(b * sizeof *buf);
    for (hsize_t k = 0; k < blocks; k++) {
        hsize_t start = (k * (hsize_t)size + (hsize_t)rank) * b;
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &b, NULL);
        if (writing) {
            for (hsize_t i = 0; i < b; i++)
                buf[i] = (double)(start + i);
            H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, buf);
        } else {
            H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, buf);
        }
    }
    free(buf);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Dclose(dset);
    H5Fclose(file);
    H5Pclose(fapl);
    MPI_Finalize();
    return 0;
}
