/* ctest: the verify pattern (any offset, any length; a flipped bit, another rank's or another
 * repetition's data are all caught), statistics, and the JSON writer's escaping. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "placement.h"
#include "pattern.h"
#include "stats.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "FAIL line %d: ", __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static void test_pattern(void)
{
    unsigned char whole[4096], part[4096];
    iolab_pattern_fill(whole, sizeof whole, 3, 1000, 2);
    /* a fill starting anywhere equals the same bytes of a bigger fill: the pattern is a
     * function of the file offset, not of the transfer */
    for (uint64_t start = 0; start < 40; start += 3)
        for (uint64_t len = 0; len < 50; len += 7) {
            iolab_pattern_fill(part, len, 3, 1000 + start, 2);
            CHECK(memcmp(part, whole + start, len) == 0, "fill at +%llu len %llu differs",
                  (unsigned long long)start, (unsigned long long)len);
            CHECK(iolab_pattern_check(whole + start, len, 3, 1000 + start, 2) == -1,
                  "check at +%llu len %llu", (unsigned long long)start, (unsigned long long)len);
        }
    for (int i = 0; i < 4096; i += 511) {
        whole[i] ^= 0x10;
        CHECK(iolab_pattern_check(whole, sizeof whole, 3, 1000, 2) == i, "flip at %d", i);
        whole[i] ^= 0x10;
    }
    CHECK(iolab_pattern_check(whole, sizeof whole, 4, 1000, 2) == 0, "other rank accepted");
    CHECK(iolab_pattern_check(whole, sizeof whole, 3, 1000, 3) == 0, "other rep accepted");
    CHECK(iolab_pattern_check(whole, sizeof whole, 3, 1008, 2) == 0, "shifted data accepted");
    memset(part, 0, sizeof part);
    CHECK(iolab_pattern_check(part, sizeof part, 3, 1000, 2) >= 0, "zeros accepted");
}

/* The word-at-a-time check (expected: the first wrong byte, wherever it sits relative to the
 * 8-byte words and the 64-word blocks the scan ORs together; was a memcmp per word): every
 * start alignment, a flip in every byte of a block boundary's neighbourhood, two flips (the
 * first is reported), and a long clean buffer accepted. */
static void test_pattern_blocks(void)
{
    enum { LEN = 3 * 512 + 13 };
    static unsigned char buf[LEN + 8];
    for (uint64_t start = 0; start < 8; start++) {
        uint64_t off = 4096 + start;
        iolab_pattern_fill(buf, LEN, 7, off, 1);
        CHECK(iolab_pattern_check(buf, LEN, 7, off, 1) == -1, "clean at +%llu",
              (unsigned long long)start);
        for (int i = 0; i < LEN; i += (i > 500 && i < 530) || i > LEN - 20 ? 1 : 37) {
            buf[i] ^= 0x01;
            int64_t got = iolab_pattern_check(buf, LEN, 7, off, 1);
            CHECK(got == i, "start +%llu flip %d found %lld", (unsigned long long)start, i,
                  (long long)got);
            buf[i] ^= 0x01;
        }
        buf[600] ^= 0x80;
        buf[1400] ^= 0x80;
        CHECK(iolab_pattern_check(buf, LEN, 7, off, 1) == 600, "two flips: the first");
        buf[600] ^= 0x80;
        buf[1400] ^= 0x80;
    }
}

static void test_stats(void)
{
    const double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
    iolab_stats_t s = iolab_stats_of(odd, 3);
    CHECK(s.min == 1 && s.max == 5 && s.median == 3 && s.mean == 3 && s.n == 3, "odd");
    CHECK(fabs(s.stddev - 2.0) < 1e-12, "sample stddev %g", s.stddev);
    s = iolab_stats_of(even, 4);
    CHECK(s.median == 2.5 && s.min == 1 && s.max == 4, "even median %g", s.median);
    s = iolab_stats_of(odd, 1);
    CHECK(s.stddev == 0 && s.median == 5, "one value");
    s = iolab_stats_of(NULL, 0);
    CHECK(s.n == 0 && s.max == 0, "empty");
}

static void test_json(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    iolab_json_t j;
    iolab_json_init(&j, f);
    iolab_json_obj(&j, NULL);
    iolab_json_str(&j, "s", "a\"b\\c\nd\x01");
    iolab_json_num(&j, "nan", NAN);
    iolab_json_arr(&j, "empty");
    iolab_json_end(&j, ']');
    iolab_json_uint(&j, "big", 18446744073709551615ull);
    iolab_json_end(&j, '}');
    fclose(f);
    CHECK(strstr(buf, "\"s\": \"a\\\"b\\\\c\\nd\\u0001\"") != NULL, "escaping: %s", buf);
    CHECK(strstr(buf, "\"nan\": null") != NULL, "NaN -> null: %s", buf);
    CHECK(strstr(buf, "\"empty\": []") != NULL, "empty array: %s", buf);
    CHECK(strstr(buf, "18446744073709551615") != NULL, "uint64: %s", buf);
    free(buf);
}

/* CPU sets as ranges; a list that does not fit ends in "..."; a sample of this process. */
static void test_placement(void)
{
    char buf[64];
    const int a[] = {0, 1, 2, 3, 8, 10, 11};
    iolab_cpus_format(a, 7, buf, sizeof buf);
    CHECK(strcmp(buf, "0-3,8,10-11") == 0, "ranges: %s", buf);
    iolab_cpus_format(a, 1, buf, sizeof buf);
    CHECK(strcmp(buf, "0") == 0, "one cpu: %s", buf);
    iolab_cpus_format(a, 0, buf, sizeof buf);
    CHECK(buf[0] == '\0', "no cpu: %s", buf);
    int many[200];
    for (int i = 0; i < 200; i++)
        many[i] = 2 * i;  /* no ranges: 0,2,4,... */
    iolab_cpus_format(many, 200, buf, sizeof buf);
    CHECK(strlen(buf) < sizeof buf && strcmp(buf + strlen(buf) - 3, "...") == 0, "cut: %s", buf);
    iolab_placement_t p;
    iolab_placement_start(&p);
    iolab_placement_end(&p);
    CHECK(p.ncpus >= 1 && p.cpus[0] != '\0' && strcmp(p.mempolicy, "unknown") != 0,
          "sample: %d cpus '%s' policy %s", p.ncpus, p.cpus, p.mempolicy);
    CHECK(p.cpu_start >= 0 && p.cpu_end >= 0, "sched_getcpu: %d %d", p.cpu_start, p.cpu_end);
}

int main(void)
{
    test_pattern();
    test_pattern_blocks();
    test_stats();
    test_json();
    test_placement();
    printf("core: %d failures\n", failures);
    return failures ? 1 : 0;
}
