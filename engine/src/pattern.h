/* iolab-bench: the --verify data pattern. Each 8-byte word of a file holds a hash of
 * (logical rank, word offset, repetition), so any byte's expected value is known from where
 * it sits, whichever rank (or aggregator) moved it. */
#ifndef IOLAB_PATTERN_H
#define IOLAB_PATTERN_H

#include <stdint.h>

/* A repetition no phase writes: buffers filled with it never match a read's check. */
#define IOLAB_PATTERN_NO_REP INT64_MIN

/* Fill len bytes of buf with the pattern of `rank` for file offsets [off, off+len). */
void iolab_pattern_fill(void *buf, uint64_t len, int rank, uint64_t off, int64_t rep);

/* Check buf against the pattern. Returns -1 when it matches, else the index (from buf) of the
 * first byte that differs. */
int64_t iolab_pattern_check(const void *buf, uint64_t len, int rank, uint64_t off, int64_t rep);

#endif
