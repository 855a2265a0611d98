/* ctest: the counter logic shared by the wrappers (iolab_trace.h), without any I/O.
 * Expected values are Darshan 3.5's on the same inputs (see ../shared/darshan-generated). */
#include "iolab_trace.h"

#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);              \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

/* Only the header's inline functions are tested: the core's globals are defined here. */
int iolab_core_active, iolab_core_use_tsc;
uint64_t iolab_core_tsc0;
double iolab_core_t0;
__thread int iolab_core_busy;

static void test_bins(void)
{
    CHECK(iolab_size_bin(0) == 0 && iolab_size_bin(100) == 0 && iolab_size_bin(101) == 1);
    CHECK(iolab_size_bin(1024) == 1 && iolab_size_bin(1025) == 2);
    CHECK(iolab_size_bin(1048576) == 4 && iolab_size_bin(1048577) == 5);
    CHECK(iolab_size_bin(1073741824) == 8 && iolab_size_bin(1073741825) == 9);
}

/* 100 writes of 10..109 bytes: Darshan keeps the first 32 distinct sizes, and the most
 * recent equal-count values end on top: 41, 40, 39, 38 (mixed_side_*.txt). */
static void test_common_values_cap(void)
{
    iolab_cval_t t = {0};
    int64_t v[4] = {0}, c[4] = {0};
    for (int i = 0; i < 100; i++)
        iolab_cval_add(&t, 10 + i, v, c);
    CHECK(t.n == IOLAB_CVAL_MAX);
    CHECK(v[0] == 41 && v[1] == 40 && v[2] == 39 && v[3] == 38);
    CHECK(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 1);
}

/* Counts order first, zero is tracked (uses a slot) but never listed. */
static void test_common_values_order(void)
{
    iolab_cval_t t = {0};
    int64_t v[4] = {0}, c[4] = {0};
    for (int i = 0; i < 3; i++)
        iolab_cval_add(&t, 100, v, c);
    for (int i = 0; i < 5; i++)
        iolab_cval_add(&t, 0, v, c);
    for (int i = 0; i < 4; i++)
        iolab_cval_add(&t, 4096, v, c);
    iolab_cval_add(&t, 7, v, c);
    CHECK(t.n == 4);
    CHECK(v[0] == 4096 && c[0] == 4 && v[1] == 100 && c[1] == 3 && v[2] == 7 && c[2] == 1);
    CHECK(v[3] == 0 && c[3] == 0);
}

static void test_time_no_overlap(void)
{
    double timer = 0, last = 0;
    iolab_time_add(&timer, 1.0, 2.0, &last);
    iolab_time_add(&timer, 1.5, 3.0, &last); /* overlaps [1.5, 2]: only 1 s more */
    iolab_time_add(&timer, 0.5, 0.7, &last); /* inside the previous one: nothing */
    CHECK(timer > 1.99 && timer < 2.01 && last == 3.0);
}

/* Record ids of Darshan 3.5's logs in tests/profile/darshan/: every length class of the
 * hash's tail (0-8, 9-16, 17-23 bytes left after the 24-byte blocks). */
static void test_record_ids(void)
{
    CHECK(iolab_record_id("<STDOUT>") == 15920181672442173319ULL);
    CHECK(iolab_record_id("<STDERR>") == 7238257241479193519ULL);
    CHECK(iolab_record_id("heatmap:POSIX") == 16592106915301738621ULL);
    CHECK(iolab_record_id("/tmp/cg/dd2/old.dat") == 10501035390540576686ULL);
    CHECK(iolab_record_id("/tmp/darshan35-openmpi/shared.dat") == 13058145349179446648ULL);
    CHECK(iolab_record_id("/tmp/darshan35-mpich/shared.dat") == 13911020805784639985ULL);
    CHECK(iolab_record_id("/tmp/darshan35-openmpi/shared.dat.locktest.0") ==
          15388231754402513418ULL);
    CHECK(iolab_record_id("/tmp/ompi.vm.0/pid.1702/1/shared.dat_cid-0-1706.sm") ==
          10889855156554718867ULL);
}

int main(void)
{
    test_record_ids();
    test_bins();
    test_common_values_cap();
    test_common_values_order();
    test_time_no_overlap();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
