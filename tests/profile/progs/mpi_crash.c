/* An MPI program one of whose ranks crashes mid-run: every rank writes 8 x 4 KiB to its own
 * file and 2 x 4 KiB to a shared file with MPI-IO, then the rank named on the command line
 * dies of the signal named (segv: a NULL store, abort, bus, fpe, term, kill: raise), after a
 * barrier that every rank's writes precede, while the others wait in the next barrier (the
 * launcher then ends them).
 * Usage: mpi_crash DIR RANK segv|abort|bus|fpe|term|kill */
#include <mpi.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4)
        MPI_Abort(MPI_COMM_WORLD, 1);
    char path[4096], buf[4096];
    memset(buf, 'a' + rank, sizeof buf);
    snprintf(path, sizeof path, "%s/own.%d", argv[1], rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 8; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            MPI_Abort(MPI_COMM_WORLD, 2);
    close(fd);
    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (int i = 0; i < 2; i++)
        MPI_File_write_at(fh, (MPI_Offset)(2 * rank + i) * 4096, buf, 4096, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    /* every rank's writes are done (and recorded) before one crashes: without it a rank still
     * in MPI_File_open when the launcher ended it left no record of the shared file (CI, 1 in
     * ~30 runs: the shared file's record unreduced, one rank short) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == atoi(argv[2])) {
        const char *how = argv[3];
        if (!strcmp(how, "segv"))
            *(volatile int *)NULL = 1;
        else if (!strcmp(how, "abort"))
            abort();
        else if (!strcmp(how, "fpe"))
            raise(SIGFPE);
        else if (!strcmp(how, "bus"))
            raise(SIGBUS);
        else if (!strcmp(how, "kill"))
            raise(SIGKILL); /* no handler runs: this rank leaves no profile */
        else
            raise(SIGTERM);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
