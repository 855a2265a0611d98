/* An MPI program that fails as applications do: rank 0 cannot open its input, says so on
 * stderr, and every rank exits with 1 (the launcher then prints its own banner); with a
 * second argument "crash" every rank prints a progress line and dies of SIGSEGV. */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 2 && strcmp(argv[2], "crash") == 0) {
        printf("step 1 of 3\n");
        fflush(stdout);
        raise(SIGSEGV);
    }
    const char *input = argc > 1 ? argv[1] : "input.dat";
    FILE *f = fopen(input, "r");
    if (!f) {
        if (rank == 0)
            fprintf(stderr, "fails_to_open: cannot open %s: %s\n", input, strerror(errno));
        MPI_Finalize();
        return 1;
    }
    fclose(f);
    MPI_Finalize();
    return 0;
}
