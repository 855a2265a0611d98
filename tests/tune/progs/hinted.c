/* A real MPI-IO program for the tune tests: opens a file with whatever hints the MPI
 * library takes from its environment (ROMIO_HINTS), writes a little, and prints the score
 * "bandwidth: N" where N is the effective cb_buffer_size in MiB, read back from the file's
 * info. A tune that applies the hint for real finds the biggest buffer; one that does not
 * sees the same score for every configuration. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    char buf[4096] = {0};
    MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof buf, buf, sizeof buf, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    MPI_Info info;
    MPI_File_get_info(fh, &info);
    char value[MPI_MAX_INFO_VAL + 1] = "0";
    int flag = 0;
    MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    MPI_File_close(&fh);
    if (rank == 0)
        printf("bandwidth: %.1f\n", atof(value) / 1048576.0);
    MPI_Finalize();
    return 0;
}
