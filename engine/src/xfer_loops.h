/* iolab-bench: how one rank moves its data in a phase (internal to phase.c and
 * xfer_loops.c): per transfer (threads), through a strided view, through an aggregator, as
 * boxes of an N-D array, or through a backend's queue; --random orders, --stonewall's
 * wear-out. The phase around them (set-up, timing, agreement) is phase.c. */
#ifndef IOLAB_XFER_LOOPS_H
#define IOLAB_XFER_LOOPS_H

#include <stdint.h>

#include "ior_compat.h"
#include "run.h"

/* In-phase progress (--progress): rank 0's first worker prints it, nobody else. */
typedef struct iolab_tick {
    int rep, op, pass;
    double t0, next;            /* the phase's start; when the next line is due (MPI_Wtime) */
    uint64_t total_bytes;       /* the phase's bytes over all ranks, as laid out */
} iolab_tick_t;

/* One thread's share of a rank's transfers (one worker per rank without --threads). */
typedef struct worker {
    iolab_run_t *run;
    void *fh;
    int op, lr;                 /* direction; logical rank whose data this is */
    int64_t prep;               /* repetition in the pattern */
    uint64_t first, last;       /* transfer indices [first, last) */
    unsigned char *buf;
    uint64_t bytes, ops;
    int err;                    /* first errno */
    char why[IOLAB_ERRLEN];     /* message when errno alone would mislead */
    uint64_t vbad;              /* transfers with wrong bytes */
    int bad_set;
    uint64_t bad_off;
    uint64_t seed;              /* --random: the order of this rank's transfers */
    const uint64_t *slots;      /* --random, segmented: this rank's slots of a segment */
    uint64_t nslots;
    const iolab_ior_order_t *ior; /* --random-seed / --random-repeat: IOR's order, or NULL */
    iolab_ior_cursor_t cursor;  /* --random-repeat: this worker's draws */
    double deadline;            /* --stonewall: MPI_Wtime to stop at (0: none) */
    uint64_t next;              /* --stonewall: the next transfer index to do */
    int sw_hit;                 /* --stonewall: stopped at the deadline */
    iolab_tick_t *tick;         /* --progress on rank 0's first worker, else NULL */
} worker_t;

/* The in-phase progress line, at most every IOLAB_TICK_S: see xfer_loops.c. */
#define IOLAB_TICK_S 0.5
void iolab_progress_tick(worker_t *w, uint64_t done, uint64_t of);

/* The loops; each fills the worker's bytes, ops and first error. worker_loop is a pthread
 * start routine (arg: worker_t *). */
void *iolab_worker_loop(void *arg);
void iolab_queue_loop(worker_t *w, int depth);
void iolab_wear_out(worker_t *w, iolab_phase_t *ph);
void iolab_stonewall_stop(worker_t *w, iolab_phase_t *ph);
void iolab_vector_xfer(worker_t *w);
void iolab_boxes_xfer(worker_t *w);
void iolab_aggregated_loop(worker_t *w, unsigned char *aggbuf, int kg);

#endif
