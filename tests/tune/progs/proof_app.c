/* A real MPI-IO program whose run time depends, by construction, on the settings it is given,
 * for the proof tests (tests/tune/test_proof_on_command.py). Each rank writes 4 KiB of one
 * shared file collectively, then rank 0 reads the file's hints back (MPI_File_get_info) and
 * its environment, and waits:
 *   - 0.4 s unless the library runs more than one collective-buffering aggregator
 *     (cb_nodes >= 2: ROMIO took a cb_nodes hint; see info_value), so that hint makes it
 *     faster;
 *   - 0.6 s more when ROMIO reads back romio_cb_write enable, so that hint makes it slower;
 *   - 0.6 s more when Open MPI's OMPIO is given an aggregator count
 *     (OMPI_MCA_io_ompio_num_aggregators), so that parameter makes it slower.
 * A tool that applies the settings for real sees these differences; one that does not, none. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The value of a hint as the library holds it: MPI_File_get_info (MPICH's ROMIO gives every
 * hint back); Open MPI 4 gives back only the hints of the open call, so there the value is
 * the ROMIO_HINTS file's, when OMPI_MCA_io makes ROMIO the MPI-IO component (OMPIO never
 * reads that file). */
static int info_value(MPI_Info info, const char *key, char *value)
{
    int flag = 0, nkeys = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_get_nkeys(info, &nkeys);
    const char *io = getenv("OMPI_MCA_io"), *path = getenv("ROMIO_HINTS");
    if (flag || nkeys > 0 || !io || !(strstr(io, "romio") || strcmp(io, "^ompio") == 0) || !path)
        return flag;
    FILE *f = fopen(path, "r");
    char k[256], v[256];
    while (f && fscanf(f, "%255s %255s", k, v) == 2)
        if (strcmp(k, key) == 0) {
            snprintf(value, MPI_MAX_INFO_VAL, "%s", v);
            flag = 1;
        }
    if (f)
        fclose(f);
    return flag;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: proof_app FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    char buf[4096];
    memset(buf, 'a' + rank % 26, sizeof buf);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof buf, buf, sizeof buf, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    MPI_Info info;
    MPI_File_get_info(fh, &info);
    char value[MPI_MAX_INFO_VAL + 1];
    useconds_t wait = 0;
    if (!(info_value(info, "cb_nodes", value) && atoi(value) >= 2))
        wait += 400000;
    if (info_value(info, "romio_cb_write", value) && strcmp(value, "enable") == 0)
        wait += 600000;
    if (getenv("OMPI_MCA_io_ompio_num_aggregators") != NULL)
        wait += 600000;
    MPI_Info_free(&info);
    MPI_File_close(&fh);
    if (rank == 0) {
        usleep(wait);
        printf("waited %.1f s\n", wait / 1e6);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
