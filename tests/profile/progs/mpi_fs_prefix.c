/* Opens each name given (ROMIO's "ufs:/path", "nfs:rel"...) with MPI_File_open, every rank
 * writing 4 KiB at rank x 4 KiB collectively, then closes it. Exits 1 if an open fails. */
#include <mpi.h>

int main(int argc, char **argv)
{
    char buf[4096] = {0};
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < argc; i++) {
        MPI_File fh;
        if (MPI_File_open(MPI_COMM_WORLD, argv[i], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_File_write_at_all(fh, (MPI_Offset)rank * 4096, buf, 4096, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    }
    MPI_Finalize();
    return 0;
}
