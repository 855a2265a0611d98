/* Parallel HDF5 with a large metadata cache: N groups, each with one attribute, created
 * collectively; the cache (M MiB, no eviction before the close) keeps every dirty entry, so
 * H5Fclose flushes all the metadata at once: a slow close in HDF5, not in POSIX.
 * With "coll": collective metadata reads and writes (H5Pset_all_coll_metadata_ops,
 * H5Pset_coll_metadata_write) already set.
 * Usage: h5_many_groups PATH N M [coll] */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "coll") == 0))
        MPI_Abort(MPI_COMM_WORLD, 2);
    long n = atol(argv[2]);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5AC_cache_config_t c = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    H5Pget_mdc_config(fapl, &c);
    c.set_initial_size = 1;
    c.initial_size = c.max_size = (size_t)atol(argv[3]) << 20;
    c.min_size = c.max_size / 2;
    c.incr_mode = H5C_incr__off;
    c.flash_incr_mode = H5C_flash_incr__off;
    c.decr_mode = H5C_decr__off;
    c.dirty_bytes_threshold = c.max_size / 2;  /* parallel HDF5 flushes at this many */
    if (H5Pset_mdc_config(fapl, &c) < 0)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (argc == 5) {
        H5Pset_all_coll_metadata_ops(fapl, 1);
        H5Pset_coll_metadata_write(fapl, 1);
    }
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t sp = H5Screate(H5S_SCALAR);
    for (long i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "g%06ld", i);
        hid_t g = H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        hid_t a = H5Acreate2(g, "step", H5T_NATIVE_LONG, sp, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(a, H5T_NATIVE_LONG, &i);
        H5Aclose(a);
        H5Gclose(g);
    }
    H5Sclose(sp);
    H5Fclose(file);
    H5Pclose(fapl);
    MPI_Finalize();
    return 0;
}
