/* Known-answer MPI-IO patterns for the cross-layer rules of iolab diagnose.
 * Usage: mpi_patterns PATH MODE N S
 *   holes: N collective writes of S bytes per rank, rank r's i-th block at (i*P + r)*2*S:
 *          every other block is left empty, so two-phase collective buffering must read
 *          each file domain before writing it (read-modify-write).
 *   late:  rank 0 sleeps N milliseconds, then every rank writes S bytes once with
 *          MPI_File_write_at_all: the other ranks wait inside the collective call.
 *   lateclose: every rank writes S bytes collectively, then rank 0 sleeps N milliseconds
 *          before MPI_File_close (collective): the other ranks wait inside the close.
 *   sieve: one independent MPI_File_write of N blocks of S bytes through a file view
 *          (rank r's blocks every P*S bytes from r*S): ROMIO's data sieving reads each
 *          buffer's extent, fills in the blocks and writes the whole extent back.
 *   blocks: N collective writes of S bytes per rank, rank r's i-th block at (i*P + r)*S:
 *          the file filled without holes, the ranks' blocks interleaved (a decomposed
 *          array written step by step); ROMIO picks its aggregators per node.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    char *buf = malloc((size_t)s);
    memset(buf, 'a' + rank % 26, (size_t)s);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                  &fh);
    if (strcmp(mode, "holes") == 0) {
        for (long i = 0; i < n; i++) {
            MPI_Offset off = (MPI_Offset)(i * size + rank) * 2 * s;
            MPI_File_write_at_all(fh, off, buf, (int)s, MPI_BYTE, MPI_STATUS_IGNORE);
        }
    } else if (strcmp(mode, "late") == 0) {
        if (rank == 0) {
            struct timespec ts = {n / 1000, (n % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        MPI_File_write_at_all(fh, (MPI_Offset)rank * s, buf, (int)s, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "lateclose") == 0) {
        MPI_File_write_at_all(fh, (MPI_Offset)rank * s, buf, (int)s, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        if (rank == 0) {
            struct timespec ts = {n / 1000, (n % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    } else if (strcmp(mode, "blocks") == 0) {
        for (long i = 0; i < n; i++)
            MPI_File_write_at_all(fh, (MPI_Offset)((i * size + rank) * s), buf, (int)s,
                                  MPI_BYTE, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "sieve") == 0) {
        MPI_Datatype blocks;
        char *all = malloc((size_t)(n * s));
        memset(all, 'a' + rank % 26, (size_t)(n * s));
        MPI_Type_vector((int)n, (int)s, (int)(size * s), MPI_BYTE, &blocks);
        MPI_Type_commit(&blocks);
        MPI_File_set_view(fh, (MPI_Offset)rank * s, MPI_BYTE, blocks, "native", MPI_INFO_NULL);
        MPI_File_write(fh, all, (int)(n * s), MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Type_free(&blocks);
        free(all);
    } else {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File_close(&fh);
    free(buf);
    MPI_Finalize();
    return 0;
}
