/* libiolab-trace: the core's state, shared by core.c and writer.c only. */
#ifndef IOLAB_TRACE_CORE_H
#define IOLAB_TRACE_CORE_H

#include "iolab_trace.h"

#include <limits.h>
#include <stdatomic.h>
#include <sys/types.h>


typedef struct {
    iolab_rec_t *recs;        /* cap records, mmap'ed, touched as used */
    _Atomic uint32_t n;       /* records in use */
    uint32_t cap;
    int32_t *bucket;          /* name hash: index + 1 of the first record */
    uint32_t nbuckets;
} iolab_pool_t;


typedef struct {
    uint8_t module, write;
    int32_t rec;
    int64_t offset, length;
    double start, end;
} iolab_segment_t;

typedef struct {
    iolab_pool_t pool[IOLAB_NMODS];
    uint64_t left[IOLAB_NMODS];          /* records that did not fit, per module */
    uint64_t left_misc[IOLAB_LEFT_N];
    char *names;                         /* path arena */
    size_t names_used, names_cap;
    iolab_handle_t *handles[IOLAB_NHANDLE_MAPS];
    iolab_segment_t *segs;
    _Atomic uint64_t seg_next;
    uint64_t seg_cap;
    char outdir[PATH_MAX];
    size_t outdir_len;
    int64_t mem_alignment;
    int rank, nprocs, mpi;
    pid_t pid;
    double start_unix;
    char hints[16384];                   /* "path\thints\n" lines */
    size_t hints_used;
    _Atomic int written;                 /* the profile is being or has been written */
    _Atomic int flushed;                 /* ... and is complete */
} iolab_core_state_t;

extern iolab_core_state_t iolab_core;

/* Resolve every symbol of iolab_trace_symbols.def now (at start-up), so that no dlsym runs
 * later in a delicate place (a vfork child, a signal handler). */
void iolab_resolve_all(void);

/* posix.c's state in a forked child: fresh lock, cwd cache dropped. */
void iolab_posix_after_fork(void);

/* stdio.c: the records <STDIN>, <STDOUT>, <STDERR> of the standard streams (at start-up). */
void iolab_stdio_std_open(void);

/* Install the SIGTERM/SIGINT handlers that write a partial profile (signals.c). */
void iolab_signals_install(void);

/* exec.c: write the profile before exec replaces the image; re-arm it if exec failed. */
void iolab_trace_flush_before_exec(void);
void iolab_trace_exec_failed(void);

/* Write this process's profile into iolab_core.outdir (writer.c). Guard held by the caller. */
void iolab_writer_write(const char *reason, int partial);

#endif
