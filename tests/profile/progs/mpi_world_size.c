/* Each rank writes "<rank> <size>\n" into <dir>/world.<rank>: a program started by another MPI
 * library's launcher runs as N one-rank jobs, and every copy writes world.0 saying "0 1". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    char name[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(name, sizeof name, "%s/world.%d", argc > 1 ? argv[1] : ".", rank);
    FILE *f = fopen(name, "w");
    if (f == NULL) {
        perror(name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fprintf(f, "%d %d\n", rank, size);
    fclose(f);
    MPI_Finalize();
    return 0;
}
