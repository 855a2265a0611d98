/* One part of an MPMD job (mpirun -np 1 ./a : -np 1 ./b): writes FILE alone, on
 * MPI_COMM_SELF, so that parts running different programs make no collective on a file
 * together; 4 KiB through MPI-IO, or (built with -DUSE_HDF5) a 1,024-double dataset "data"
 * through HDF5's MPI-IO driver. Usage: mpi_mpmd_part FILE */
#include <mpi.h>
#ifdef USE_HDF5
#include <hdf5.h>
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
#ifdef USE_HDF5
    double buf[1024] = {0};
    hsize_t n = 1024;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_SELF, MPI_INFO_NULL);
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t dset = H5Dcreate2(file, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Dclose(dset);
    H5Sclose(space);
    H5Fclose(file);
    H5Pclose(fapl);
#else
    char buf[4096] = {0};
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_File_write_at(fh, 0, buf, (int)sizeof buf, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
#endif
    MPI_Barrier(MPI_COMM_WORLD); /* one world across the parts */
    MPI_Finalize();
    return 0;
}
