/* Datasets in subgroups, named the ways HDF5 programs name them, to compare the H5D record
 * names of iolab and Darshan 3.5 (tests/profile/test_profile_hdf5_names.py):
 *   /a            H5Dcreate2(file, "a")               root group, relative name
 *   /grp/b        H5Dcreate2(grp, "b")                through a group id
 *   /grp/c        H5Dcreate2(file, "/grp/c")          full path from the file
 *   /grp/sub/d    H5Dcreate2(file, "grp/sub/d")       relative path from the file
 *   /grp/sub/e    H5Dcreate2(sub, "e")                through a nested group id
 * then /grp/b is opened again through its full path (H5Dopen2(file, "/grp/b")) and read.
 * Each create is followed by one write of the whole dataset (16 ints); one rank, serial
 * file driver, so nothing but the naming differs.
 *
 *   hdf5_groups FILE.h5
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

static int write_new(hid_t loc, const char *name, const int *buf)
{
    hsize_t dims[1] = {16};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(loc, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    if (d < 0)
        return 1;
    herr_t err = H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Dclose(d);
    H5Sclose(space);
    return err < 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.h5\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int buf[16], got[16];
    for (int i = 0; i < 16; i++)
        buf[i] = i;
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t grp = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sub = H5Gcreate2(grp, "sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int bad = write_new(f, "a", buf) + write_new(grp, "b", buf) + write_new(f, "/grp/c", buf)
              + write_new(f, "grp/sub/d", buf) + write_new(sub, "e", buf);
    hid_t d = H5Dopen2(f, "/grp/b", H5P_DEFAULT);
    bad += d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) < 0;
    H5Dclose(d);
    H5Gclose(sub);
    H5Gclose(grp);
    H5Fclose(f);
    MPI_Finalize();
    return bad != 0;
}
