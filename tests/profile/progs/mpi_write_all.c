/* 3 x MPI_File_write_all of 4 KiB per rank at consecutive offsets of the rank's own view.
 * Usage: mpi_write_all FILE */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    char buf[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(buf, 'a' + rank, sizeof buf);
    MPI_File fh;
    if (argc < 2 || MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                  MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < 3; i++)
        if (MPI_File_write_all(fh, buf, (int)sizeof buf, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
