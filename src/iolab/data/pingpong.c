/* iolab study: MPI ping-pong between ranks 0 and 1 (OSU-like latency and bandwidth).
 * Prints one JSON line from rank 0:
 *   {"latency_us": <half round trip of a 0-byte message, median of 'reps' runs>,
 *    "bandwidth_bytes_per_s": <'size' bytes each way, 'window' messages in flight>}
 * Usage: pingpong [reps] [size] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int rank, size, reps = argc > 1 ? atoi(argv[1]) : 1000;
    long bytes = argc > 2 ? atol(argv[2]) : 4L << 20;
    const int window = 8;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || reps < 1 || bytes < 1) {
        if (rank == 0) fprintf(stderr, "pingpong: needs 2 ranks, reps >= 1, size >= 1\n");
        MPI_Finalize();
        return 2;
    }
    double *lat = malloc(sizeof(double) * reps);
    char *buf = malloc((size_t)bytes * window);
    MPI_Request req[8];
    if (!lat || !buf) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < reps + 10; i++) { /* 10 warm-up round trips */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, 0, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 0, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, 0, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 0, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 10) lat[i - 10] = (MPI_Wtime() - t0) / 2;
    }
    int bw_reps = reps / 50 > 4 ? reps / 50 : 4;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < bw_reps; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(buf + w * bytes, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Recv(buf, 0, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < window; w++)
                MPI_Irecv(buf + w * bytes, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Send(buf, 0, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0) {
        qsort(lat, reps, sizeof(double), cmp);
        printf("{\"latency_us\": %.3f, \"bandwidth_bytes_per_s\": %.1f, \"reps\": %d, "
               "\"message_bytes\": %ld}\n", 1e6 * lat[reps / 2],
               (double)bytes * window * bw_reps / t, reps, bytes);
    }
    free(lat);
    free(buf);
    MPI_Finalize();
    return 0;
}
