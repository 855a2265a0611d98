/* A real Open MPI program for the tune tests: opens a file through OMPIO, reads the MCA
 * parameter io_ompio_num_aggregators back through the MPI tool interface (MPI_T) and prints
 * the score "aggregators: 1 + N" (N = the value set, 0 when OMPIO decides: -1). Only an
 * OMPI_MCA_* variable that really reached the ranks changes the score. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int provided, rank, index, count, value = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                  &fh);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_cvar_get_index("io_ompio_num_aggregators", &index) == MPI_SUCCESS) {
        MPI_T_cvar_handle handle;
        MPI_T_cvar_handle_alloc(index, NULL, &handle, &count);
        MPI_T_cvar_read(handle, &value);
        MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
    MPI_File_close(&fh);
    if (rank == 0)
        printf("aggregators: %d\n", 1 + (value > 0 ? value : 0));
    MPI_Finalize();
    return 0;
}
