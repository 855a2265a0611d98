/* Every kind of MPI-IO data call Darshan 3.5 tells apart, on one shared file, in a fixed
 * order (the shared-pointer calls rank by rank), so every counter is known. Per rank:
 *   open with a hint (cb_buffer_size); a view of doubles, given the hint too
 *   writes: write_at_all_begin/end (split, 100 doubles), write_all_begin/end (split, 50),
 *           write_ordered (coll, 25), write_ordered_begin/end (split, 25), write_shared
 *           (indep, 10), iwrite_shared + wait (nb, 10), iwrite_all + wait (nb, 50), iwrite +
 *           wait (nb, 20), write (indep, 30), write_all (coll, 40)
 *   sync, barrier, sync; set_info with the hint (Darshan 3.5 does not wrap set_info)
 *   reads:  read_at_all_begin/end (split, 100), read_all (coll, 50), read (indep, 20),
 *           read_all_begin/end (split, 40), read_ordered (coll, 25), read_ordered_begin/end
 *           (split, 25), read_shared (indep, 10), iread_all + wait (nb, 30), iread_at_all +
 *           wait (nb, 100), iread + wait (nb, 10), iread_shared + wait (nb, 10)
 *   close. Individual-pointer accesses go to this rank's block of each region of nprocs
 *   blocks; every read lies within what was written.
 * Usage: mpi_io_kinds FILE */
#include <mpi.h>
#include <stdlib.h>

static MPI_File fh;
static int rank, nprocs;
static double buf[100];

static void check(int err)
{
    if (err != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The individual pointer at this rank's block of n doubles in the next region of
 * nprocs x n doubles after *base. */
static void seek_own(MPI_Offset *base, int n)
{
    check(MPI_File_seek(fh, *base + (MPI_Offset)rank * n, MPI_SEEK_SET));
    *base += (MPI_Offset)nprocs * n;
}

/* The shared-pointer call f, one rank after the other (rank order fixes the offsets). */
#define IN_TURN(call)                                                                        \
    for (int turn = 0; turn < nprocs; turn++) {                                              \
        if (turn == rank)                                                                    \
            check(call);                                                                     \
        MPI_Barrier(MPI_COMM_WORLD);                                                         \
    }

int main(int argc, char **argv)
{
    MPI_Request req;
    MPI_Status st;
    MPI_Info info;
    MPI_Offset at = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < 100; i++)
        buf[i] = rank + i / 1000.0;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    check(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", info));

    /* ---- writes ---- */
    check(MPI_File_write_at_all_begin(fh, at + (MPI_Offset)rank * 100, buf, 100, MPI_DOUBLE));
    check(MPI_File_write_at_all_end(fh, buf, &st));
    at += (MPI_Offset)nprocs * 100;
    seek_own(&at, 50);
    check(MPI_File_write_all_begin(fh, buf, 50, MPI_DOUBLE));
    check(MPI_File_write_all_end(fh, buf, &st));
    check(MPI_File_seek_shared(fh, at, MPI_SEEK_SET));
    check(MPI_File_write_ordered(fh, buf, 25, MPI_DOUBLE, &st));
    check(MPI_File_write_ordered_begin(fh, buf, 25, MPI_DOUBLE));
    check(MPI_File_write_ordered_end(fh, buf, &st));
    IN_TURN(MPI_File_write_shared(fh, buf, 10, MPI_DOUBLE, &st));
    IN_TURN(MPI_File_iwrite_shared(fh, buf, 10, MPI_DOUBLE, &req) || MPI_Wait(&req, &st));
    at += (MPI_Offset)nprocs * (25 + 25 + 10 + 10);
    seek_own(&at, 50);
    check(MPI_File_iwrite_all(fh, buf, 50, MPI_DOUBLE, &req));
    check(MPI_Wait(&req, &st));
    seek_own(&at, 20);
    check(MPI_File_iwrite(fh, buf, 20, MPI_DOUBLE, &req));
    check(MPI_Wait(&req, &st));
    seek_own(&at, 30);
    check(MPI_File_write(fh, buf, 30, MPI_DOUBLE, &st));
    seek_own(&at, 40);
    check(MPI_File_write_all(fh, buf, 40, MPI_DOUBLE, &st));
    check(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check(MPI_File_sync(fh));
    check(MPI_File_set_info(fh, info));

    /* ---- reads, over what was written ---- */
    at = 0;
    check(MPI_File_read_at_all_begin(fh, (MPI_Offset)rank * 100, buf, 100, MPI_DOUBLE));
    check(MPI_File_read_at_all_end(fh, buf, &st));
    at += (MPI_Offset)nprocs * 100;
    seek_own(&at, 50);
    check(MPI_File_read_all(fh, buf, 50, MPI_DOUBLE, &st));
    seek_own(&at, 20);
    check(MPI_File_read(fh, buf, 20, MPI_DOUBLE, &st));
    seek_own(&at, 40);
    check(MPI_File_read_all_begin(fh, buf, 40, MPI_DOUBLE));
    check(MPI_File_read_all_end(fh, buf, &st));
    check(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    check(MPI_File_read_ordered(fh, buf, 25, MPI_DOUBLE, &st));
    check(MPI_File_read_ordered_begin(fh, buf, 25, MPI_DOUBLE));
    check(MPI_File_read_ordered_end(fh, buf, &st));
    IN_TURN(MPI_File_read_shared(fh, buf, 10, MPI_DOUBLE, &st));
    seek_own(&at, 30);
    check(MPI_File_iread_all(fh, buf, 30, MPI_DOUBLE, &req));
    check(MPI_Wait(&req, &st));
    check(MPI_File_iread_at_all(fh, (MPI_Offset)rank * 100, buf, 100, MPI_DOUBLE, &req));
    check(MPI_Wait(&req, &st));
    seek_own(&at, 10);
    check(MPI_File_iread(fh, buf, 10, MPI_DOUBLE, &req));
    check(MPI_Wait(&req, &st));
    IN_TURN(MPI_File_iread_shared(fh, buf, 10, MPI_DOUBLE, &req) || MPI_Wait(&req, &st));

    check(MPI_File_close(&fh));
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
