/* iolab-bench: statistics (see stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

iolab_stats_t iolab_stats_of(const double *v, size_t n)
{
    iolab_stats_t s = {0, 0, 0, 0, 0, n};
    if (n == 0)
        return s;
    double *c = malloc(n * sizeof *c);
    if (!c)
        return s;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    s.min = c[0];
    s.max = c[n - 1];
    s.median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        sum += c[i];
    s.mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (c[i] - s.mean) * (c[i] - s.mean);
    s.stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
    free(c);
    return s;
}
