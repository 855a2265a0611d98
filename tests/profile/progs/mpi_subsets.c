/* Which records a job reduces to one shared record (rank -1) and which stay per rank, on 3
 * ranks: ranks 0 and 1 open DIR/sub.dat on a sub-communicator, every rank opens DIR/all.dat
 * on MPI_COMM_WORLD, each rank opens its own DIR/self<rank>.dat on MPI_COMM_SELF; one
 * write_at_all of 100 doubles (rank r at r * 800) on the first two, one write of 50 doubles
 * on the last. Darshan reduces only the files every rank opened.
 * Usage: mpi_subsets DIR */
#include <mpi.h>
#include <stdio.h>

static void check(int err)
{
    if (err != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

static void write_file(MPI_Comm comm, const char *path, int rank, int collective)
{
    static double buf[100];
    MPI_File fh;
    check(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    if (collective)
        check(MPI_File_write_at_all(fh, (MPI_Offset)rank * 800, buf, 100, MPI_DOUBLE,
                                    MPI_STATUS_IGNORE));
    else
        check(MPI_File_write(fh, buf, 50, MPI_DOUBLE, MPI_STATUS_IGNORE));
    check(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    int rank;
    char path[4096];
    MPI_Comm sub;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2, rank, &sub);
    if (rank < 2) {
        snprintf(path, sizeof path, "%s/sub.dat", argv[1]);
        write_file(sub, path, rank, 1);
    }
    snprintf(path, sizeof path, "%s/all.dat", argv[1]);
    write_file(MPI_COMM_WORLD, path, rank, 1);
    snprintf(path, sizeof path, "%s/self%d.dat", argv[1], rank);
    write_file(MPI_COMM_SELF, path, rank, 0);
    MPI_Comm_free(&sub);
    MPI_Finalize();
    return 0;
}
