/* iolab-bench: IOR 4.1's behaviours reproduced for the iolab ior front end: its random
 * offsets call for call (so `iolab ior -z --random-offset-seed` touches the same offsets in
 * the same order as IOR itself), its read reordering (-C -Q, -Z, -X), its repetitions
 * (removals, -m, -T) and the checks of those options.
 *
 * --random-seed N with --random (IOR -z): IOR's GetOffsetArrayRandom. A file per process:
 * glibc's random() seeded with N + rank shuffles the block's transfer offsets (IOR's swap
 * of entry i with entry rand() % n), the same order in every segment. The segmented shared
 * file: seeded with N on every rank, slot k of a segment (k < ranks * block / transfer)
 * goes to rank rand() % ranks, then each rank shuffles its slots with the same stream.
 *
 * --random-repeat (IOR -z -z, "random with repetition"): per segment each rank draws one
 * block of the whole file with IOR's rand64 (state seed * (rank + 1); seed N + rank for a
 * file per process) and moves that block's transfers in order; blocks can repeat. Reads
 * draw from the file's size on disk (IOR stats it), writes from the layout's size, rank 0
 * (every rank with a file per process) writing the last block first as IOR does.
 *
 * glibc's random_r on a private state gives the same numbers as IOR's srandom()/rand()
 * without touching the process's own generator. */
#ifndef IOLAB_IOR_COMPAT_H
#define IOLAB_IOR_COMPAT_H

#include <stdint.h>

#include "run.h"

/* One rank's IOR order for one phase. */
typedef struct iolab_ior_order {
    int on;              /* 0: not IOR's order (the engine's own, or sequential) */
    int repeat;          /* --random-repeat */
    uint64_t *offs;      /* -z: offsets within a segment, in IOR's order (owned) */
    uint64_t n;          /* -z: entries of offs (this rank's transfers per segment) */
    uint64_t seg_bytes;  /* bytes from one segment to the next in the file */
    uint64_t per_block;  /* block / transfer */
    uint64_t nblocks;    /* -z -z: blocks of the file a draw picks from */
    uint64_t state;      /* -z -z: rand64's seed (srand64) before the first draw */
    int last_first;      /* -z -z write: the first segment takes the last block */
} iolab_ior_order_t;

/* The seed every rank uses for the run's IOR orders: --random-seed, or when it is -1 with
 * --random-repeat rank 0's clock (IOR's time(NULL)), broadcast. Collective; call once. */
int64_t iolab_ior_order_seed(const iolab_run_t *run);

/* Fill *o for logical rank lr's phase op (file_bytes: the file's size to draw from, -z -z).
 * Returns the transfers per segment this rank makes (0 when off), or -1 when out of memory.
 * The caller frees with iolab_ior_order_free. */
int64_t iolab_ior_order_make(const iolab_run_t *run, int op, int lr, int64_t seed,
                             uint64_t file_bytes, iolab_ior_order_t *o);
void iolab_ior_order_free(iolab_ior_order_t *o);

/* The rand64 cursor of one worker (-z -z draws are sequential in the segment index). */
typedef struct iolab_ior_cursor {
    uint64_t hi, lo;     /* rand64's 128-bit state */
    int64_t seg;         /* segment of the last draw; -1 none yet */
    uint64_t block;      /* block drawn for it */
} iolab_ior_cursor_t;

/* File offset of transfer i of the rank in IOR's order. */
uint64_t iolab_ior_order_offset(const iolab_ior_order_t *o, iolab_ior_cursor_t *c,
                                uint64_t transfer, uint64_t i);

/* IOR's rand64 (srand64(seed) is {hi 0, lo seed}): the next number. */
uint64_t iolab_ior_rand64(iolab_ior_cursor_t *c);

/* --random-prefill: before a write's transfers, each rank writes its blocks of every
 * segment in order, `size` bytes a call, from a buffer of 0xff bytes (IOR's randomPrefill),
 * then all meet at a barrier. Returns 0 or an errno. Collective. */
int iolab_ior_prefill(iolab_run_t *run, void *fh, int lr);

/* The logical rank whose data rank run->rank reads in repetition rep under
 * --reorder-random (IOR -Z, -Z -Z with -X and -Q), drawn as IOR draws it. */
int iolab_ior_read_rank(const iolab_run_t *run, int rep);

/* --reorder with --reorder-nodes Q: IOR -C -Q's shift, (Q + extra) times the first host's
 * ranks (extra 1: the --check-write pass, as IOR's -W). */
int iolab_ior_reorder_shift(const iolab_run_t *run, int extra);

/* The IOR options' combinations (driver validation). Returns 0, or -1 with one line. */
int iolab_ior_check_options(const iolab_run_t *run, char *err, size_t len);

/* --remove-each-rep: remove the layout's files (collective, untimed, barrier before and
 * after; rank f % ranks removes file f). */
void iolab_ior_remove_files(iolab_run_t *run);
/* --max-time: whether no phase may start any more (rank 0's clock decides; collective). */
int iolab_ior_time_is_up(const iolab_run_t *run, double start);
/* After a repetition, as IOR: its files go unless --keep (only files this run wrote). */
void iolab_ior_end_rep(iolab_run_t *run);

#endif
