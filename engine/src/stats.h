/* iolab-bench: statistics over repetitions. */
#ifndef IOLAB_STATS_H
#define IOLAB_STATS_H

#include <stddef.h>

typedef struct iolab_stats {
    double min, median, max, mean, stddev;  /* stddev: sample (n-1), 0 for n < 2 */
    size_t n;
} iolab_stats_t;

/* Statistics of v[0..n) (v is not modified). All zero when n == 0. */
iolab_stats_t iolab_stats_of(const double *v, size_t n);

#endif
