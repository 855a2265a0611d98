/* Small shared-file MPI-IO writes, no reads (known answers for iolab diagnose under Darshan).
 * Usage: mpi_small_calls PATH MODE N S
 *   coll:  N collective MPI_File_write_at_all of S bytes per rank, rank r's i-th block at
 *          (i*P + r)*S: contiguous, no holes (nothing to read back), many tiny collective
 *          calls. Already collective: "use collective I/O" must not be advised.
 *   indep: the same blocks with independent MPI_File_write_at calls.
 */
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
    const char *mode = argv[2];
    long n = atol(argv[3]);
    long s = atol(argv[4]);
    int coll = strcmp(mode, "coll") == 0;
    if (!coll && strcmp(mode, "indep") != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    char *buf = malloc((size_t)s);
    memset(buf, 'a' + rank % 26, (size_t)s);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                  &fh);
    for (long i = 0; i < n; i++) {
        MPI_Offset off = (MPI_Offset)(i * size + rank) * s;
        if (coll)
            MPI_File_write_at_all(fh, off, buf, (int)s, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            MPI_File_write_at(fh, off, buf, (int)s, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return 0;
}
