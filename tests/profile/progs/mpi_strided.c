/* As Darshan's mpi_strided: 4 ranks (any number), MPI_File_open(COMM_WORLD, CREATE|WRONLY),
 * N writes of S bytes per rank, rank r's i-th block at (i*nprocs + r)*S, with
 * MPI_File_write_at_all ("coll") or MPI_File_write_at ("indep"); close.
 * Usage: mpi_strided PATH N S coll|indep */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_File fh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5)
        MPI_Abort(MPI_COMM_WORLD, 2);
    long n = atol(argv[2]);
    int s = atoi(argv[3]);
    int coll = strcmp(argv[4], "coll") == 0;
    char *buf = calloc(1, (size_t)s);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (long i = 0; i < n; i++) {
        MPI_Offset off = (MPI_Offset)(i * size + rank) * s;
        if (coll)
            MPI_File_write_at_all(fh, off, buf, s, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            MPI_File_write_at(fh, off, buf, s, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return 0;
}
