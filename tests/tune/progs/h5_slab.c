/* An HDF5 I/O kernel written the way application benchmarks write theirs (one 1-D dataset of
 * doubles in one shared file, independent transfers, the default file access apart from the
 * MPI-IO driver), for the proof tests of real programs (tests/tune/test_proof_programs.py)
 * and bench/advice_speedup.py. Three shapes, chosen on the command line:
 *   contig-write FILE N      each rank writes its N doubles as one contiguous block;
 *   strided-write FILE N B   each rank writes N doubles as N/B blocks of B doubles, the
 *                            ranks' blocks interleaved (a strided hyperslab selection);
 *   strided-read FILE N B    the same selection read back from FILE (written by
 *                            strided-write with the same N, B and ranks).
 * Options before the shape, as I/O kernels offer them: --collective (collective transfers,
 * H5FD_MPIO_COLLECTIVE), --coll-metadata (H5Pset_all_coll_metadata_ops and
 * H5Pset_coll_metadata_write): bench/advice_speedup.py applies diagnose's code fixes with them.
 * Writes are repeated ITER times (env H5SLAB_ITER, default 1) to make a run long enough to
 * time. Prints "<shape>: <bytes> bytes in <s> s, <MiB/s> MiB/s" on rank 0. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const char *file)
{
    fprintf(stderr, "h5_slab: %s failed on %s\n", what, file);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int collective = 0, coll_metadata = 0;
    while (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        if (strcmp(argv[1], "--collective") == 0)
            collective = 1;
        else if (strcmp(argv[1], "--coll-metadata") == 0)
            coll_metadata = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "h5_slab: unknown option %s\n", argv[1]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        argv++;
        argc--;
    }
    if (argc < 4 || (strcmp(argv[1], "contig-write") != 0 && argc < 5)) {
        if (rank == 0)
            fprintf(stderr, "usage: h5_slab [--collective] [--coll-metadata] contig-write FILE N | strided-write FILE N B | "
                            "strided-read FILE N B\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *shape = argv[1], *path = argv[2];
    int reading = strcmp(shape, "strided-read") == 0;
    int strided = strcmp(shape, "contig-write") != 0;
    hsize_t n = strtoull(argv[3], NULL, 10);
    hsize_t block = strided ? strtoull(argv[4], NULL, 10) : n;
    if (n == 0 || block == 0 || n % block != 0) {
        if (rank == 0)
            fprintf(stderr, "h5_slab: N must be a positive multiple of B\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iter = getenv("H5SLAB_ITER") ? atoi(getenv("H5SLAB_ITER")) : 1;
    double *buf = malloc(n * sizeof *buf);
    for (hsize_t i = 0; i < n; i++)
        buf[i] = rank * 1e9 + (double)i;

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    if (coll_metadata) {
        H5Pset_all_coll_metadata_ops(fapl, 1);
        H5Pset_coll_metadata_write(fapl, 1);
    }
    hid_t file = reading ? H5Fopen(path, H5F_ACC_RDONLY, fapl)
                         : H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0)
        die(reading ? "H5Fopen" : "H5Fcreate", path);
    hsize_t total = n * (hsize_t)size;
    hid_t fspace = H5Screate_simple(1, &total, NULL);
    hid_t dset = reading ? H5Dopen2(file, "data", H5P_DEFAULT)
                         : H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT,
                                      H5P_DEFAULT, H5P_DEFAULT);
    if (dset < 0)
        die(reading ? "H5Dopen2" : "H5Dcreate2", path);
    /* contiguous: one block at rank * n; strided: n/block blocks, rank r's k-th block at
     * (k * size + r) * block */
    hsize_t start = strided ? rank * block : rank * n;
    hsize_t stride = strided ? block * size : n, count = n / block;
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, &stride, &count, &block);
    hid_t mspace = H5Screate_simple(1, &n, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < (reading ? 1 : iter); i++) {
        herr_t err = reading ? H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf)
                             : H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf);
        if (err < 0)
            die(reading ? "H5Dread" : "H5Dwrite", path);
    }
    if (reading)
        for (hsize_t i = 0; i < n; i++)
            if (buf[i] != rank * 1e9 + (double)i) {
                fprintf(stderr, "h5_slab: rank %d read a wrong value at %llu\n", rank,
                        (unsigned long long)i);
                MPI_Abort(MPI_COMM_WORLD, 4);
            }
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Dclose(dset);
    H5Fclose(file);
    H5Pclose(fapl);
    double t = MPI_Wtime() - t0, bytes = (double)total * sizeof *buf * (reading ? 1 : iter);
    if (rank == 0)
        printf("%s: %.0f bytes in %.4f s, %.2f MiB/s\n", shape, bytes, t, bytes / t / 1048576);
    free(buf);
    MPI_Finalize();
    return 0;
}
