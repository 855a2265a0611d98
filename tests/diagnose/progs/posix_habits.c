/* Everyday I/O habits of MPI programs, as users write them (known answers for iolab diagnose).
 * Usage: posix_habits DIR MODE N S
 *   logreopen: N steps; at each step every rank opens its own log DIR/rank<r>.log with
 *          fopen("a"), appends one line and closes it again (open-append-close logging).
 *   csv:   rank 0 writes N lines of results to DIR/results.csv with fprintf (formatted text,
 *          about 24 B a line); S unused.
 *   config: every rank reads the small input DIR/config.nml (made beforehand) with fread,
 *          N times S bytes at most; no rank writes it.
 *   perrank: rank r writes its own file DIR/part.<r> of (r + 1) * N blocks of S bytes with
 *          write(2), then fsync: an uneven decomposition.
 *   rank0read: rank 0 reads the input DIR/input.bin (made beforehand) from start to end
 *          with read(2) in blocks of S bytes (N blocks) while the other ranks wait in a
 *          barrier.
 *   packed: every rank writes N records of S bytes to its own file DIR/rec.<r>, each from a
 *          packed buffer after a 4-byte length prefix (buffer and file offsets off alignment).
 *   blockread: every rank reads its quarter of DIR/input.bin with N blocking
 *          MPI_File_read_at calls of S bytes, computing 2 ms (a sleep) after each.
 *   interleaved: every rank pwrite's N records of S bytes into the shared DIR/shared.dat,
 *          record i of rank r at (i * P + r) * S: records of neighbouring ranks share pages
 *          when S is not a multiple of the page.
 *   stepfiles: at each of N output steps every rank writes its own new file
 *          DIR/step<k>.<r> of S bytes (a file per process per step: time-series output).
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void path_of(char *out, size_t len, const char *dir, const char *name, int rank)
{
    if (rank >= 0)
        snprintf(out, len, "%s/%s%d", dir, name, rank);
    else
        snprintf(out, len, "%s/%s", dir, name);
}

static void compute_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank, size;
    char path[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const char *dir = argv[1], *mode = argv[2];
    long n = atol(argv[3]);
    long s = atol(argv[4]);
    char *buf = malloc((size_t)s + 8);
    memset(buf, 'a' + rank % 26, (size_t)s + 8);
    if (strcmp(mode, "logreopen") == 0) {
        path_of(path, sizeof path, dir, "rank", rank);
        strcat(path, ".log");
        for (long i = 0; i < n; i++) {
            FILE *f = fopen(path, "a");
            fprintf(f, "step %ld residual %.6e\n", i, 1.0 / (double)(i + 1));
            fclose(f);
        }
    } else if (strcmp(mode, "csv") == 0) {
        if (rank == 0) {
            path_of(path, sizeof path, dir, "results.csv", -1);
            FILE *f = fopen(path, "w");
            for (long i = 0; i < n; i++)
                fprintf(f, "%ld,%.6f,%.4f\n", i, 0.001 * (double)i, 1.0 / (double)(i + 1));
            fclose(f);
        }
    } else if (strcmp(mode, "config") == 0) {
        path_of(path, sizeof path, dir, "config.nml", -1);
        FILE *f = fopen(path, "r");
        for (long i = 0; i < n && fread(buf, 1, (size_t)s, f) == (size_t)s; i++)
            ;
        fclose(f);
    } else if (strcmp(mode, "perrank") == 0) {
        path_of(path, sizeof path, dir, "part.", rank);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        for (long i = 0; i < (rank + 1) * n; i++)
            if (write(fd, buf, (size_t)s) != (ssize_t)s)
                MPI_Abort(MPI_COMM_WORLD, 1);
        fsync(fd);
        close(fd);
    } else if (strcmp(mode, "rank0read") == 0) {
        if (rank == 0) {
            path_of(path, sizeof path, dir, "input.bin", -1);
            int fd = open(path, O_RDONLY);
            for (long i = 0; i < n; i++)
                if (read(fd, buf, (size_t)s) != (ssize_t)s)
                    MPI_Abort(MPI_COMM_WORLD, 1);
            close(fd);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "packed") == 0) {
        path_of(path, sizeof path, dir, "rec.", rank);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        int len = (int)s;
        for (long i = 0; i < n; i++) {
            memcpy(buf, &len, 4);  /* the record's length prefix, then the record */
            if (write(fd, buf + 4, (size_t)s) != (ssize_t)s)
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
    } else if (strcmp(mode, "blockread") == 0) {
        MPI_File fh;
        path_of(path, sizeof path, dir, "input.bin", -1);
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_Offset base = (MPI_Offset)rank * n * s;
        for (long i = 0; i < n; i++) {
            MPI_File_read_at(fh, base + (MPI_Offset)i * s, buf, (int)s, MPI_BYTE,
                             MPI_STATUS_IGNORE);
            compute_ms(2);
        }
        MPI_File_close(&fh);
    } else if (strcmp(mode, "stepfiles") == 0) {
        for (long k = 0; k < n; k++) {
            snprintf(path, sizeof path, "%s/step%ld.%d", dir, k, rank);
            int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
            if (fd < 0 || write(fd, buf, (size_t)s) != (ssize_t)s)
                MPI_Abort(MPI_COMM_WORLD, 1);
            close(fd);
        }
    } else if (strcmp(mode, "interleaved") == 0) {
        path_of(path, sizeof path, dir, "shared.dat", -1);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        for (long i = 0; i < n; i++) {
            off_t off = (off_t)(i * size + rank) * s;
            if (pwrite(fd, buf, (size_t)s, off) != (ssize_t)s)
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
    } else {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
