/* iolab-bench: layout offset arithmetic (see layout.h). */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>

int iolab_layout_init(iolab_layout_t *l, int kind, int ranks, uint64_t transfer,
                      uint64_t block, uint64_t segments, int group, int group_shared,
                      char *err, size_t errlen)
{
    l->kind = kind;
    l->ranks = ranks;
    l->transfer = transfer;
    l->block = block;
    l->segments = segments;
    l->group_shared = group_shared;
    l->group = kind == IOLAB_LAYOUT_SERIAL ? ranks : group;
    if (kind != IOLAB_LAYOUT_SUBSET && kind != IOLAB_LAYOUT_SERIAL)
        l->group = 1;
    if (l->group > ranks)
        l->group = ranks;
    l->array_bytes = 0;
    if (kind == IOLAB_LAYOUT_SUBARRAY)
        return 0;
    if (transfer == 0 || block == 0 || segments == 0) {
        snprintf(err, errlen, "--transfer, --block and --segments must be above zero "
                 "(got %llu, %llu, %llu)", (unsigned long long)transfer,
                 (unsigned long long)block, (unsigned long long)segments);
        return -1;
    }
    if (block % transfer != 0) {
        snprintf(err, errlen, "--block %llu is not a multiple of --transfer %llu; make the "
                 "block a whole number of transfers", (unsigned long long)block,
                 (unsigned long long)transfer);
        return -1;
    }
    if (l->group < 1) {
        snprintf(err, errlen, "--group must be at least 1 (got %d)", group);
        return -1;
    }
    /* The whole logical file (ranks * block * segments) and an aggregator's buffer must fit
     * in 64 bits (offsets) and the transfer in a signed 63-bit return value. */
    uint64_t max = UINT64_MAX / 2;
    if (segments > max / block || (uint64_t)ranks > max / (block * segments) ||
        transfer > max / (uint64_t)l->group) {
        snprintf(err, errlen, "sizes overflow: %d ranks x --block %llu x --segments %llu is "
                 "more than 2^63 bytes; use smaller sizes", ranks,
                 (unsigned long long)block, (unsigned long long)segments);
        return -1;
    }
    return 0;
}

uint64_t iolab_layout_rank_xfers(const iolab_layout_t *l)
{
    return l->block / l->transfer * l->segments;
}

uint64_t iolab_layout_rank_bytes(const iolab_layout_t *l)
{
    return l->block * l->segments;
}

int iolab_layout_aggregated(const iolab_layout_t *l)
{
    return l->kind == IOLAB_LAYOUT_SERIAL || l->kind == IOLAB_LAYOUT_SUBSET;
}

int iolab_layout_ngroups(const iolab_layout_t *l)
{
    return (l->ranks + l->group - 1) / l->group;
}

int iolab_layout_group_of(const iolab_layout_t *l, int r)
{
    return r / l->group;
}

int iolab_layout_group_first(const iolab_layout_t *l, int g)
{
    return g * l->group;
}

int iolab_layout_group_size(const iolab_layout_t *l, int g)
{
    int left = l->ranks - g * l->group;
    return left < l->group ? left : l->group;
}

int iolab_layout_nfiles(const iolab_layout_t *l)
{
    switch (l->kind) {
    case IOLAB_LAYOUT_FPP:
        return l->ranks;
    case IOLAB_LAYOUT_SUBSET:
        return l->group_shared ? 1 : iolab_layout_ngroups(l);
    default:
        return 1;
    }
}

int iolab_layout_file_of(const iolab_layout_t *l, int r)
{
    switch (l->kind) {
    case IOLAB_LAYOUT_FPP:
        return r;
    case IOLAB_LAYOUT_SUBSET:
        return l->group_shared ? 0 : iolab_layout_group_of(l, r);
    default:
        return 0;
    }
}

uint64_t iolab_layout_file_bytes(const iolab_layout_t *l, int f)
{
    uint64_t rb = iolab_layout_rank_bytes(l);
    if (l->kind == IOLAB_LAYOUT_FPP)
        return rb;
    if (l->kind == IOLAB_LAYOUT_SUBARRAY)
        return l->array_bytes;
    if (l->kind == IOLAB_LAYOUT_SUBSET && !l->group_shared)
        return rb * (uint64_t)iolab_layout_group_size(l, f);
    return rb * (uint64_t)l->ranks;
}

uint64_t iolab_layout_offset(const iolab_layout_t *l, int r, uint64_t i)
{
    uint64_t t = l->transfer, ur = (uint64_t)r, n = (uint64_t)l->ranks;
    switch (l->kind) {
    case IOLAB_LAYOUT_FPP:
        return i * t;
    case IOLAB_LAYOUT_SEGMENTED: {
        uint64_t per_block = l->block / t;
        uint64_t s = i / per_block, j = i % per_block;
        return s * n * l->block + ur * l->block + j * t;
    }
    case IOLAB_LAYOUT_STRIDED:
    case IOLAB_LAYOUT_SERIAL:
        return (i * n + ur) * t;
    case IOLAB_LAYOUT_SUBARRAY:
        return 0;  /* offsets come from decomp.h */
    case IOLAB_LAYOUT_SUBSET: {
        int g = iolab_layout_group_of(l, r), first = iolab_layout_group_first(l, g);
        uint64_t kg = (uint64_t)iolab_layout_group_size(l, g), m = (uint64_t)(r - first);
        uint64_t base = l->group_shared ? (uint64_t)first * iolab_layout_rank_bytes(l) : 0;
        return base + (i * kg + m) * t;
    }
    }
    return 0;
}

int iolab_layout_vec(const iolab_layout_t *l, int r, iolab_layout_vec_t *v)
{
    uint64_t ur = (uint64_t)r, n = (uint64_t)l->ranks;
    switch (l->kind) {
    case IOLAB_LAYOUT_FPP:
        *v = (iolab_layout_vec_t){0, 1, iolab_layout_rank_bytes(l), iolab_layout_rank_bytes(l)};
        return 0;
    case IOLAB_LAYOUT_SEGMENTED:
        *v = (iolab_layout_vec_t){ur * l->block, l->segments, l->block, n * l->block};
        return 0;
    case IOLAB_LAYOUT_STRIDED:
        *v = (iolab_layout_vec_t){ur * l->transfer, iolab_layout_rank_xfers(l), l->transfer,
                                  n * l->transfer};
        return 0;
    default:
        return -1;
    }
}

int iolab_layout_reorder(const iolab_layout_t *l, int r, int shift)
{
    if (l->ranks < 2)
        return r;
    if (!iolab_layout_aggregated(l))
        return (int)(((long)r + shift) % l->ranks);
    int ng = iolab_layout_ngroups(l);
    if (ng < 2 || l->ranks % l->group != 0)
        return r;
    int g = iolab_layout_group_of(l, r), m = r - iolab_layout_group_first(l, g);
    return iolab_layout_group_first(l, (g + 1) % ng) + m;
}

/* 1 when every rank r and rank r + s live on different hosts. */
static int crosses_hosts(const int *rank_host, int ranks, int s)
{
    for (int r = 0; r < ranks; r++)
        if (rank_host[r] == rank_host[(r + s) % ranks])
            return 0;
    return 1;
}

int iolab_layout_reorder_shift(const int *rank_host, int ranks, int ranks_on_host0)
{
    int one_host = 1;
    for (int r = 1; r < ranks; r++)
        one_host &= rank_host[r] == rank_host[0];
    if (one_host)
        return 1;
    if (ranks_on_host0 > 0 && crosses_hosts(rank_host, ranks, ranks_on_host0))
        return ranks_on_host0;
    for (int s = 1; s < ranks && s < 4096; s++)  /* bounded: O(ranks) per try */
        if (crosses_hosts(rank_host, ranks, s))
            return s;
    return ranks_on_host0 > 0 ? ranks_on_host0 : 1;
}

uint64_t iolab_layout_permute(uint64_t i, uint64_t n, uint64_t seed)
{
    if (n < 2)
        return i;
    unsigned bits = 1;
    while (bits < 64 && (1ull << bits) < n)
        bits++;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, x = i;
    do {
        for (uint64_t round = 0; round < 3; round++) {
            x = (x * 0x9E3779B97F4A7C15ull + (seed ^ (round * 0x632BE59BD9B4E019ull))) & mask;
            x ^= x >> ((bits + 1) / 2);  /* both steps are bijections of [0, 2^bits) */
        }
    } while (x >= n);
    return x;
}

/* splitmix64's finaliser: which rank a slot is dealt to. */
static uint64_t deal_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t iolab_layout_random_slots(const iolab_layout_t *l, int r, uint64_t deal_seed,
                                   uint64_t order_seed, uint64_t *slots)
{
    uint64_t nslots = (uint64_t)l->ranks * (l->block / l->transfer), m = 0;
    for (uint64_t k = 0; k < nslots; k++)
        if (deal_mix(deal_seed ^ deal_mix(k)) % (uint64_t)l->ranks == (uint64_t)r) {
            if (slots)
                slots[m] = k;
            m++;
        }
    if (!slots)
        return m;
    /* visit them in a random order: a permutation of their indices, applied in place by
     * following its cycles would need marks; a copy is simpler */
    uint64_t *tmp = malloc((m ? m : 1) * sizeof *tmp);
    if (!tmp)
        return m;  /* sequential order: still every slot once */
    for (uint64_t j = 0; j < m; j++)
        tmp[j] = slots[iolab_layout_permute(j, m, order_seed)];
    for (uint64_t j = 0; j < m; j++)
        slots[j] = tmp[j];
    free(tmp);
    return m;
}
