/* Production I/O pathologies at small sizes, for tests/diagnose/test_real_pathologies_64.py.
 * Usage: pathologies PATH MODE N S
 *   gather:    every rank's S bytes gathered to rank 0, N times; rank 0 alone writes each
 *              gathered step to the shared file with POSIX write() (a lone writer).
 *   openclose: each rank N times opens the shared file, writes S bytes at its own offset
 *              ((i*P + r) * S) and closes it again (a metadata storm).
 *   unaligned: each rank N independent MPI_File_write_at of S bytes (S not a multiple of
 *              any block) at (i*P + r) * S into one shared file: small, unaligned,
 *              interleaved requests from every rank.
 *   holes:     each rank N collective MPI_File_write_at_all of S bytes at (i*P + r) * 2 * S:
 *              every other block is left empty, so ROMIO's two-phase write reads each file
 *              domain before writing it (read-modify-write; run with romio_cb_write enable).
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const char *path = argv[1], *mode = argv[2];
    long n = atol(argv[3]), s = atol(argv[4]);
    char *buf = malloc((size_t)s);
    memset(buf, 'a' + rank % 26, (size_t)s);
    if (strcmp(mode, "gather") == 0) {
        char *all = rank == 0 ? malloc((size_t)s * size) : NULL;
        int fd = -1;
        if (rank == 0)
            fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        for (long i = 0; i < n; i++) {
            MPI_Gather(buf, (int)s, MPI_BYTE, all, (int)s, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (rank == 0 && write(fd, all, (size_t)s * size) != (ssize_t)(s * size))
                MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (rank == 0)
            close(fd);
        free(all);
    } else if (strcmp(mode, "openclose") == 0) {
        for (long i = 0; i < n; i++) {
            int fd = open(path, O_CREAT | O_WRONLY, 0644);
            if (fd < 0 || pwrite(fd, buf, (size_t)s, (off_t)((i * size + rank) * s)) != s)
                MPI_Abort(MPI_COMM_WORLD, 3);
            close(fd);
        }
    } else if (strcmp(mode, "unaligned") == 0) {
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &fh);
        for (long i = 0; i < n; i++)
            MPI_File_write_at(fh, (MPI_Offset)(i * size + rank) * s, buf, (int)s, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    } else if (strcmp(mode, "holes") == 0) {
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &fh);
        for (long i = 0; i < n; i++)
            MPI_File_write_at_all(fh, (MPI_Offset)(i * size + rank) * 2 * s, buf, (int)s,
                                  MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    } else {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
