/* HDF5 with the MPI-IO driver, every kind of access the H5D counters tell apart. A 2-D
 * dataset "grid" of ints, (4 x nprocs) x 256, chunked 4 x 64, never filled; rank r owns rows
 * 4r..4r+3.
 *   1. collective write of its rows (regular hyperslab, count 4 x 256: 4096 B)
 *   2. independent write of every other column of its rows (stride 1 x 2, count 4 x 128: 2048 B)
 *   3. H5Fflush, then independent read of the whole dataset (H5S_ALL: nprocs x 4096 B)
 *   4. independent read of 3 points (12 B)
 *   5. close; H5Fopen, H5Dopen2, collective read of its rows (4096 B), close
 * Usage: mpi_hdf5_rw FILE */
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>

#define COLS 256

static void check(int ok)
{
    if (!ok)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    hsize_t dims[2] = {4 * (hsize_t)size, COLS}, chunk[2] = {4, 64};
    int *rows = malloc(4 * COLS * sizeof(int)), *all = malloc(dims[0] * COLS * sizeof(int));
    for (int i = 0; i < 4 * COLS; i++)
        rows[i] = rank * 100000 + i;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t coll = H5Pcreate(H5P_DATASET_XFER), indep = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE);
    H5Pset_dxpl_mpio(indep, H5FD_MPIO_INDEPENDENT);
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    /* No fill at creation: parallel HDF5 allocates the chunks there, and its collective fill
     * write makes MPICH's ROMIO read each aggregator's domain first, 0 or 4096 bytes
     * depending on whether the other aggregator has already extended the file (timing). */
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    hid_t dset = H5Dcreate2(file, "grid", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    check(file >= 0 && dset >= 0);

    hsize_t start[2] = {4 * (hsize_t)rank, 0}, count[2] = {4, COLS};
    hsize_t mdims[2] = {4, COLS};
    hid_t mem = H5Screate_simple(2, mdims, NULL), fs = H5Dget_space(dset);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    check(H5Dwrite(dset, H5T_NATIVE_INT, mem, fs, coll, rows) >= 0);

    hsize_t stride[2] = {1, 2}, half[2] = {4, COLS / 2}, hdims[1] = {4 * COLS / 2};
    hid_t hmem = H5Screate_simple(1, hdims, NULL);
    int *evens = malloc(4 * COLS / 2 * sizeof(int)); /* the same values again: data unchanged */
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < COLS / 2; k++)
            evens[j * COLS / 2 + k] = rows[j * COLS + 2 * k];
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, stride, half, NULL);
    check(H5Dwrite(dset, H5T_NATIVE_INT, hmem, fs, indep, evens) >= 0);

    check(H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0);
    MPI_Barrier(MPI_COMM_WORLD);
    check(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, indep, all) >= 0);

    hsize_t pts[3][2] = {{0, 0}, {1, 5}, {dims[0] - 1, COLS - 1}}, pdims[1] = {3};
    hid_t pmem = H5Screate_simple(1, pdims, NULL);
    int got[3];
    H5Sselect_elements(fs, H5S_SELECT_SET, 3, &pts[0][0]);
    check(H5Dread(dset, H5T_NATIVE_INT, pmem, fs, indep, got) >= 0);
    check(H5Dclose(dset) >= 0 && H5Fclose(file) >= 0);

    file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    dset = H5Dopen2(file, "grid", H5P_DEFAULT);
    check(file >= 0 && dset >= 0);
    H5Sclose(fs);
    fs = H5Dget_space(dset);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    check(H5Dread(dset, H5T_NATIVE_INT, mem, fs, coll, rows) >= 0);
    for (int i = 0; i < 4 * COLS; i++)
        check(rows[i] == rank * 100000 + i);
    check(H5Dclose(dset) >= 0 && H5Fclose(file) >= 0);
    H5Sclose(fs), H5Sclose(mem), H5Sclose(hmem), H5Sclose(pmem), H5Sclose(space);
    H5Pclose(dcpl), H5Pclose(fapl), H5Pclose(coll), H5Pclose(indep);
    free(rows), free(all), free(evens);
    MPI_Finalize();
    return 0;
}
