/* Access sizes whose merged 4 most common are known by construction: every rank of a shared
 * file writes one 1920-byte block (1920 x nprocs in all: the most common size) and, twice
 * each, three sizes no other rank writes, all larger than 1920 (rank r: 1920 + 16 x (3r+1),
 * (3r+2), (3r+3)). Each rank's own top 4 is its three sizes x 2 and 1920 x 1; a merge that
 * folds the ranks' lists pair by pair drops 1920 (tied at 2 with larger sizes after the
 * first pair) and never sees it again. Writes go one after another with pwrite into the
 * rank's own region. Usage: mpi_access_sizes FILE */
#include <fcntl.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int fd = open(argv[1], O_CREAT | O_WRONLY, 0644);
    if (fd < 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    static char buf[4096];
    off_t at = (off_t)rank << 20;
    if (pwrite(fd, buf, 1920, at) != 1920)
        MPI_Abort(MPI_COMM_WORLD, 3);
    at += 1920;
    for (int k = 1; k <= 3; k++)
        for (int rep = 0; rep < 2; rep++) {
            size_t n = 1920 + 16 * (size_t)(3 * rank + k);
            if (pwrite(fd, buf, n, at) != (ssize_t)n)
                MPI_Abort(MPI_COMM_WORLD, 3);
            at += (off_t)n;
        }
    close(fd);
    MPI_Finalize();
    return 0;
}
