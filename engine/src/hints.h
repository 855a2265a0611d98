/* iolab-bench: MPI-IO hints: requested (command line, hints file, ROMIO_HINTS), effective
 * (MPI_File_get_info), and which requested ones the library ignored. */
#ifndef IOLAB_HINTS_H
#define IOLAB_HINTS_H

#include <mpi.h>
#include <stddef.h>

#include "config.h"

typedef struct iolab_hint {
    char *key, *value;
    const char *source;  /* "command line" | "hints file" | "ROMIO_HINTS" (static strings) */
} iolab_hint_t;

typedef struct iolab_hints {
    iolab_hint_t *req;
    size_t nreq;
    iolab_hint_t *eff;   /* effective, from the first file opened (source NULL) */
    size_t neff;
    int have_effective;  /* get_info was called */
    int verifiable;      /* the library reports its real state rather than echoing */
} iolab_hints_t;

/* Collect requested hints; later sources override earlier ones: ROMIO_HINTS file, then
 * --hints-file, then --hint. Returns 0, or -1 with one line in err (bad syntax, missing
 * --hints-file). */
int iolab_hints_collect(iolab_hints_t *h, const iolab_cfg_t *cfg, char *err, size_t errlen);

/* A new MPI_Info with the requested hints (MPI_INFO_NULL when none); caller frees it. */
MPI_Info iolab_hints_info(const iolab_hints_t *h);

/* Record the effective hints read back from the library. mpiio_impl: "romio" | "ompio" |
 * "unknown"; library: MPI_Get_library_version. Open MPI's get_info echoes what it was given
 * (OMPIO and its ROMIO alike), so there nothing can be verified. */
void iolab_hints_set_effective(iolab_hints_t *h, MPI_Info info, const char *library);

/* 1 when requested hint i is absent from, or different in, the effective set (only
 * meaningful when verifiable). */
int iolab_hints_ignored(const iolab_hints_t *h, size_t i);

void iolab_hints_free(iolab_hints_t *h);

#endif
