/* iolab-bench: layouts as pure offset functions (no I/O, no MPI; unit-tested).
 *
 * A rank's data is rank_xfers() transfers; transfer i of logical rank r lives in file
 * file_of(r) at offset(r, i). Aggregated layouts (serial, subset) place a group's members'
 * transfer i next to each other, so an aggregator moves its whole group's transfer i with one
 * call of group_size * transfer bytes at the offset of the group's first member. */
#ifndef IOLAB_LAYOUT_H
#define IOLAB_LAYOUT_H

#include <stdint.h>

#include "config.h"

typedef struct iolab_layout {
    int kind;           /* iolab_layout_kind_t */
    int ranks;
    uint64_t transfer, block, segments;
    int group;          /* subset: ranks per group (serial: ranks) */
    int group_shared;   /* subset: 1 = one shared file, 0 = one file per aggregator */
    uint64_t array_bytes; /* subarray: the file's size (the caller sets it from decomp.h;
                             offsets come from there, not from the transfer functions here) */
} iolab_layout_t;

/* A strided access (same shape as iolab_vec_t in backend.h). */
typedef struct iolab_layout_vec {
    uint64_t offset, count, length, stride;
} iolab_layout_vec_t;

/* Fill l from the options; group <= 0 is replaced by default_group. Returns 0, or -1 when
 * the sizes cannot describe a file (zero, block not a multiple of transfer, overflow) with
 * one line in err. The subarray layout ignores transfer, block and segments. */
int iolab_layout_init(iolab_layout_t *l, int kind, int ranks, uint64_t transfer,
                      uint64_t block, uint64_t segments, int group, int group_shared,
                      char *err, size_t errlen);

/* Transfers per rank (block / transfer * segments). */
uint64_t iolab_layout_rank_xfers(const iolab_layout_t *l);
/* Bytes per rank (block * segments). */
uint64_t iolab_layout_rank_bytes(const iolab_layout_t *l);
/* 1 for serial and subset (data goes through an aggregator over MPI). */
int iolab_layout_aggregated(const iolab_layout_t *l);
/* Number of files. */
int iolab_layout_nfiles(const iolab_layout_t *l);
/* File holding rank r's data. */
int iolab_layout_file_of(const iolab_layout_t *l, int r);
/* Size of file f in bytes. */
uint64_t iolab_layout_file_bytes(const iolab_layout_t *l, int f);
/* Offset of rank r's transfer i in its file. */
uint64_t iolab_layout_offset(const iolab_layout_t *l, int r, uint64_t i);
/* Group (aggregator index) of rank r; its aggregator is the group's first rank. */
int iolab_layout_group_of(const iolab_layout_t *l, int r);
int iolab_layout_group_first(const iolab_layout_t *l, int g);
int iolab_layout_group_size(const iolab_layout_t *l, int g);
int iolab_layout_ngroups(const iolab_layout_t *l);
/* Rank r's whole data as one strided access (non-aggregated layouts). Returns 0, or -1 when
 * the layout has no such shape. */
int iolab_layout_vec(const iolab_layout_t *l, int r, iolab_layout_vec_t *v);
/* Which ranks' data rank r reads with --reorder: the logical rank, shifted by shift (ranks
 * per host on several hosts, 1 on one host). Aggregated layouts shift by whole groups and
 * only when all groups have the same size; returns r when no shift applies. */
int iolab_layout_reorder(const iolab_layout_t *l, int r, int shift);

/* Transfer index i (< n) of a rank in a random order (--random, IOR -z): a bijection of
 * [0, n) chosen by seed, computed without memory (rounds of an odd multiply and an
 * xor-shift on the next power of two, walking the cycle until the value is below n). */
uint64_t iolab_layout_permute(uint64_t i, uint64_t n, uint64_t seed);

/* --random on the segmented layout (IOR -z on a shared file): the l->ranks * block /
 * transfer transfer slots of a segment are dealt to the ranks at random (slot k to the rank
 * deal_seed picks, the same deal in every segment, as IOR), and rank r visits its slots in a
 * random order (order_seed). Returns how many slots rank r got; fills slots (that many) when
 * not NULL. Ranks get different counts, as in IOR. */
uint64_t iolab_layout_random_slots(const iolab_layout_t *l, int r, uint64_t deal_seed,
                                   uint64_t order_seed, uint64_t *slots);

/* --reorder's shift from the rank placement (rank_host[r]: host index of rank r): 1 on one
 * host; on several, the smallest shift that puts every reader on another host than the
 * writer, trying first ranks_on_host0 (block placement, IOR -C's choice) and 1 (round-robin
 * placement). */
int iolab_layout_reorder_shift(const int *rank_host, int ranks, int ranks_on_host0);

#endif
