/* Datasets opened as generic objects, as h5py and generic readers open them: H5Oopen,
 * H5Oopen_by_idx and H5Oopen_by_addr give a dataset handle that H5Dread and H5Oclose use
 * (tests/profile/test_profile_hdf5.py). One rank, serial file driver:
 *   create /d (16 ints) and a group /g, write /d once, close both;
 *   H5Oopen(file, "d")                         read /d whole, H5Oclose
 *   H5Oopen_by_idx(file, ".", by name, 0)      (the first link by name is /d) read, H5Oclose
 *   H5Oopen_by_addr(file, address of /d)       read, H5Dclose
 *   H5Oopen(file, "g")                         a group: not a dataset, H5Oclose
 *
 *   hdf5_oopen FILE.h5
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

static int read_close(hid_t d, int use_oclose)
{
    int buf[16];
    if (d < 0 || H5Iget_type(d) != H5I_DATASET)
        return 1;
    herr_t err = H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    if (use_oclose)
        H5Oclose(d);
    else
        H5Dclose(d);
    return err < 0 || buf[15] != 15;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: hdf5_oopen FILE.h5\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int buf[16];
    for (int i = 0; i < 16; i++)
        buf[i] = i;
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[1] = {16};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(file, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    hid_t g = H5Gcreate2(file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int bad = d < 0 || g < 0 ||
              H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0;
    H5O_info_t info;
    bad |= H5Oget_info(d, &info) < 0;
    H5Dclose(d);
    H5Gclose(g);
    H5Sclose(space);
    bad |= read_close(H5Oopen(file, "d", H5P_DEFAULT), 1);
    bad |= read_close(H5Oopen_by_idx(file, ".", H5_INDEX_NAME, H5_ITER_INC, 0, H5P_DEFAULT), 1);
    bad |= read_close(H5Oopen_by_addr(file, info.addr), 0);
    hid_t og = H5Oopen(file, "g", H5P_DEFAULT);
    bad |= og < 0 || H5Iget_type(og) != H5I_GROUP;
    H5Oclose(og);
    H5Fclose(file);
    MPI_Finalize();
    return bad;
}
