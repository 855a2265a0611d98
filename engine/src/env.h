/* iolab-bench: the environment a run measured (hosts, MPI library, file system). */
#ifndef IOLAB_ENV_H
#define IOLAB_ENV_H

#include <mpi.h>
#include <stdint.h>

typedef struct iolab_env {
    int rank, ranks;
    int nhosts;
    int host_index;           /* this rank's host, index into hosts */
    int ranks_on_my_host;
    int host_leader;          /* 1 when this rank is the lowest rank on its host */
    char **hosts;             /* nhosts names, in order of their lowest rank */
    int *host_ranks;          /* ranks per host, nhosts entries */
    int *rank_host;           /* host index of every rank, ranks entries */
    char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING];
    char mpiio_impl[16];      /* "romio" | "ompio" | "unknown" */
    char fs_type[32];         /* from statfs f_type, "unknown" when not in the table */
    char fs_magic[24];        /* "0xef53" */
    uint64_t fs_block_size;   /* statfs f_bsize */
    uint64_t logical_block_size; /* device logical sector size; O_DIRECT alignment unit */
    uint64_t page_size;
    char start_time[32];      /* ISO 8601 UTC */
    char dir[4096];           /* the directory of --path (file system measured) */
    int dir_exists;           /* statfs succeeded on dir */
} iolab_env_t;

/* Gather the environment (collective over world). path: the --path prefix (an MPI-IO
 * "prefix:" such as "ufs:" is skipped). Returns 0; missing directories are recorded in
 * dir_exists, not errors here. */
int iolab_env_gather(iolab_env_t *env, const char *path, MPI_Comm world);
void iolab_env_free(iolab_env_t *env);

/* The file-system path of an MPI-IO file name ("lustre:/x" -> "/x"). */
const char *iolab_env_strip_prefix(const char *path);

#endif
