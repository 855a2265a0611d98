/* ctest: every layout's offset arithmetic. For many (layout, ranks, transfer, block,
 * segments, group) combinations, every byte of every logical file must be written exactly
 * once, aggregated groups must be contiguous per transfer, the strided-vector description
 * must match the per-transfer offsets, and --reorder must be a permutation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            if (failures++ < 20) {                                         \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);       \
                fprintf(stderr, __VA_ARGS__);                              \
                fputc('\n', stderr);                                       \
            }                                                              \
            return;                                                        \
        }                                                                  \
    } while (0)

static void check_cover(const iolab_layout_t *l, const char *what)
{
    int nf = iolab_layout_nfiles(l);
    unsigned char **seen = calloc((size_t)nf, sizeof *seen);
    for (int f = 0; f < nf; f++)
        seen[f] = calloc(iolab_layout_file_bytes(l, f), 1);
    for (int r = 0; r < l->ranks; r++) {
        int f = iolab_layout_file_of(l, r);
        CHECK(f >= 0 && f < nf, "%s: rank %d file %d of %d", what, r, f, nf);
        uint64_t fb = iolab_layout_file_bytes(l, f);
        for (uint64_t i = 0; i < iolab_layout_rank_xfers(l); i++) {
            uint64_t off = iolab_layout_offset(l, r, i);
            CHECK(off + l->transfer <= fb, "%s: rank %d xfer %llu beyond file end", what, r,
                  (unsigned long long)i);
            for (uint64_t b = 0; b < l->transfer; b++)
                seen[f][off + b]++;
        }
    }
    for (int f = 0; f < nf; f++) {
        for (uint64_t b = 0; b < iolab_layout_file_bytes(l, f); b++)
            CHECK(seen[f][b] == 1, "%s: file %d byte %llu written %d times", what, f,
                  (unsigned long long)b, seen[f][b]);
        free(seen[f]);
    }
    free(seen);
}

static void check_groups(const iolab_layout_t *l, const char *what)
{
    for (int g = 0; g < iolab_layout_ngroups(l); g++) {
        int first = iolab_layout_group_first(l, g), kg = iolab_layout_group_size(l, g);
        CHECK(kg >= 1, "%s: empty group %d", what, g);
        for (int m = 0; m < kg; m++) {
            CHECK(iolab_layout_group_of(l, first + m) == g, "%s: group of rank", what);
            CHECK(iolab_layout_file_of(l, first + m) == iolab_layout_file_of(l, first),
                  "%s: group members in different files", what);
            for (uint64_t i = 0; i < iolab_layout_rank_xfers(l); i++)
                CHECK(iolab_layout_offset(l, first + m, i) ==
                          iolab_layout_offset(l, first, i) + (uint64_t)m * l->transfer,
                      "%s: group %d member %d transfer %llu not contiguous", what, g, m,
                      (unsigned long long)i);
        }
    }
}

static void check_vec(const iolab_layout_t *l, const char *what)
{
    for (int r = 0; r < l->ranks; r++) {
        iolab_layout_vec_t v;
        CHECK(iolab_layout_vec(l, r, &v) == 0, "%s: no vector", what);
        CHECK(v.count * v.length == iolab_layout_rank_bytes(l), "%s: vector size", what);
        /* byte k of the rank's data, per transfer and per vector piece */
        for (uint64_t i = 0; i < iolab_layout_rank_xfers(l); i++) {
            uint64_t k = i * l->transfer, piece = k / v.length, in = k % v.length;
            CHECK(v.offset + piece * v.stride + in == iolab_layout_offset(l, r, i),
                  "%s: rank %d transfer %llu vector offset differs", what, r,
                  (unsigned long long)i);
        }
    }
}

static void check_reorder(const iolab_layout_t *l, int shift, const char *what)
{
    char *hit = calloc((size_t)l->ranks, 1);
    for (int r = 0; r < l->ranks; r++) {
        int lr = iolab_layout_reorder(l, r, shift);
        CHECK(lr >= 0 && lr < l->ranks, "%s: reorder out of range", what);
        hit[lr]++;
        if (l->ranks > 1 && shift % l->ranks && !iolab_layout_aggregated(l))
            CHECK(lr != r, "%s: reorder kept rank %d on its own data", what, r);
    }
    for (int r = 0; r < l->ranks; r++)
        CHECK(hit[r] == 1, "%s: reorder is not a permutation", what);
    free(hit);
}

static void check_bad_input(void)
{
    iolab_layout_t l;
    char err[256];
    CHECK(iolab_layout_init(&l, IOLAB_LAYOUT_FPP, 2, 0, 4, 1, 1, 0, err, sizeof err) != 0,
          "zero transfer accepted");
    CHECK(iolab_layout_init(&l, IOLAB_LAYOUT_FPP, 2, 3, 4, 1, 1, 0, err, sizeof err) != 0,
          "block not a multiple of transfer accepted");
    CHECK(strstr(err, "multiple") != NULL, "message: %s", err);
    CHECK(iolab_layout_init(&l, IOLAB_LAYOUT_FPP, 4, 1ull << 40, 1ull << 40, 1ull << 22, 1, 0,
                            err, sizeof err) != 0, "overflow accepted");
    CHECK(iolab_layout_init(&l, IOLAB_LAYOUT_SEGMENTED, 3, 4, 8, 0, 1, 0, err, sizeof err) != 0,
          "zero segments accepted");
}

static void check_reorder_shift(void)
{
    const int one[] = {0, 0, 0, 0};
    const int block[] = {0, 0, 0, 1, 1, 1};          /* 2 hosts x 3, block placement */
    const int rr[] = {0, 1, 0, 1, 0, 1};             /* round-robin */
    const int three[] = {0, 0, 1, 1, 2, 2};          /* 3 hosts x 2 */
    const int uneven[] = {0, 0, 0, 1, 1, 2};         /* 3, 2, 1 ranks */
    CHECK(iolab_layout_reorder_shift(one, 4, 4) == 1, "one host");
    CHECK(iolab_layout_reorder_shift(block, 6, 3) == 3, "block placement");
    const int rr4[] = {0, 1, 0, 1};                  /* round-robin, 2 per host */
    CHECK(iolab_layout_reorder_shift(rr4, 4, 2) == 1, "round-robin placement");
    CHECK(iolab_layout_reorder_shift(rr, 6, 3) % 2 == 1, "round-robin: an odd shift");
    CHECK(iolab_layout_reorder_shift(three, 6, 2) == 2, "3 hosts");
    int s = iolab_layout_reorder_shift(uneven, 6, 3);
    for (int r = 0; r < 6; r++)
        CHECK(uneven[r] != uneven[(r + s) % 6], "uneven: shift %d keeps rank %d on its host",
              s, r);
}

/* --random: a permutation of [0, n) for every n and seed, not the identity when n is large
 * enough to tell, and different seeds give different orders. */
static void check_permute(void)
{
    for (uint64_t n = 0; n <= 300; n++)
        for (uint64_t seed = 0; seed < 4; seed++) {
            unsigned char *seen = calloc(n ? n : 1, 1);
            uint64_t fixed = 0;
            for (uint64_t i = 0; i < n; i++) {
                uint64_t p = iolab_layout_permute(i, n, seed * 0x1234567ull);
                CHECK(p < n, "permute n=%llu: %llu out of range", (unsigned long long)n,
                      (unsigned long long)p);
                CHECK(!seen[p], "permute n=%llu seed %llu: %llu twice", (unsigned long long)n,
                      (unsigned long long)seed, (unsigned long long)p);
                seen[p] = 1;
                fixed += p == i;
            }
            free(seen);
            CHECK(n < 16 || fixed < n / 2, "permute n=%llu: %llu of %llu in place",
                  (unsigned long long)n, (unsigned long long)fixed, (unsigned long long)n);
        }
    int differ = 0;
    for (uint64_t i = 0; i < 64; i++)
        differ += iolab_layout_permute(i, 64, 1) != iolab_layout_permute(i, 64, 2);
    CHECK(differ > 32, "seeds 1 and 2 give nearly the same order (%d of 64 differ)", differ);
    uint64_t big = 1ull << 40;
    CHECK(iolab_layout_permute(big - 1, big, 7) < big, "permute 2^40");
}

/* --random on the segmented layout: every slot of a segment dealt to exactly one rank, each
 * rank's list a permutation of its slots; the deal does not depend on the order seed. */
static void check_random_slots(void)
{
    for (int ranks = 1; ranks <= 7; ranks++)
        for (uint64_t per = 1; per <= 9; per += 4) {
            iolab_layout_t l;
            char err[256];
            CHECK(iolab_layout_init(&l, IOLAB_LAYOUT_SEGMENTED, ranks, 4, 4 * per, 2, 1, 0, err,
                                    sizeof err) == 0, "init: %s", err);
            uint64_t nslots = (uint64_t)ranks * per, total = 0;
            unsigned char *seen = calloc(nslots, 1);
            for (int r = 0; r < ranks; r++) {
                uint64_t m = iolab_layout_random_slots(&l, r, 99, (uint64_t)r, NULL);
                uint64_t *slots = calloc(m ? m : 1, sizeof *slots);
                CHECK(iolab_layout_random_slots(&l, r, 99, 12345, slots) == m, "count");
                for (uint64_t j = 0; j < m; j++) {
                    CHECK(slots[j] < nslots && !seen[slots[j]], "slot %llu dealt twice",
                          (unsigned long long)slots[j]);
                    seen[slots[j]] = 1;
                }
                total += m;
                free(slots);
            }
            CHECK(total == nslots, "%llu of %llu slots dealt", (unsigned long long)total,
                  (unsigned long long)nslots);
            free(seen);
        }
}

int main(void)
{
    static const char *names[] = {"fpp", "segmented", "strided", "serial", "subset"};
    const uint64_t transfers[] = {1, 3, 4, 8};
    int combos = 0;
    for (int kind = 0; kind <= IOLAB_LAYOUT_SUBSET; kind++)
        for (int ranks = 1; ranks <= 7; ranks++)
            for (size_t ti = 0; ti < sizeof transfers / sizeof *transfers; ti++)
                for (uint64_t per = 1; per <= 3; per++)
                    for (uint64_t seg = 1; seg <= 3; seg++)
                        for (int group = 1; group <= 4; group++)
                            for (int shared = 0; shared <= 1; shared++) {
                                if (kind != IOLAB_LAYOUT_SUBSET && (group > 1 || shared))
                                    continue;
                                iolab_layout_t l;
                                char err[256], what[160];
                                uint64_t t = transfers[ti];
                                if (iolab_layout_init(&l, kind, ranks, t, t * per, seg, group,
                                                      shared, err, sizeof err) != 0) {
                                    fprintf(stderr, "FAIL init: %s\n", err);
                                    return 1;
                                }
                                snprintf(what, sizeof what, "%s n=%d t=%llu b=%llu s=%llu "
                                         "g=%d shared=%d", names[kind], ranks,
                                         (unsigned long long)t, (unsigned long long)(t * per),
                                         (unsigned long long)seg, group, shared);
                                check_cover(&l, what);
                                if (iolab_layout_aggregated(&l))
                                    check_groups(&l, what);
                                else
                                    check_vec(&l, what);
                                for (int shift = 1; shift <= 3; shift++)
                                    check_reorder(&l, shift, what);
                                combos++;
                            }
    check_bad_input();
    check_reorder_shift();
    check_permute();
    check_random_slots();
    printf("%d layout combinations checked, %d failures\n", combos, failures);
    return failures ? 1 : 0;
}
