/* iolab-bench: where a rank ran: its CPU set (sched_getaffinity), its memory policy
 * (get_mempolicy) and the frequency of the CPU it was on (cpufreq's scaling_cur_freq, else
 * /proc/cpuinfo's "cpu MHz"), sampled when the run starts and when it ends, so that binding,
 * core specialisation and frequency settings are recorded with the measurement. */
#ifndef IOLAB_PLACEMENT_H
#define IOLAB_PLACEMENT_H

#include <stddef.h>

typedef struct iolab_placement {
    char cpus[256];        /* "0-3,8" ("..." at the end when longer) */
    int ncpus;
    char mempolicy[16];    /* default | preferred | bind | interleave | local | unknown */
    int cpu_start, cpu_end;         /* sched_getcpu at the two samples (-1 unknown) */
    double mhz_start, mhz_end;      /* that CPU's frequency (< 0 unknown) */
} iolab_placement_t;

/* Sample the CPU set, memory policy and frequency now (start), or only the CPU and its
 * frequency (end). Never fails: what cannot be read is marked unknown. */
void iolab_placement_start(iolab_placement_t *p);
void iolab_placement_end(iolab_placement_t *p);

/* CPU numbers (ascending) as ranges: {0,1,2,3,8} -> "0-3,8". Pure; buf always terminated,
 * "..." ends a list that does not fit. */
void iolab_cpus_format(const int *cpus, int n, char *buf, size_t len);

#endif
