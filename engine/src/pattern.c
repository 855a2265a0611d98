/* iolab-bench: verify pattern (see pattern.h). */
#include "pattern.h"

#include <string.h>

/* splitmix64 finaliser: cheap, and every bit of the input moves every bit of the output, so
 * a shifted or swapped block never matches by accident. */
static inline uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

#define WORD_KEY 0xD6E8FEB86659FD93ull

static inline uint64_t word_at(uint64_t seed, uint64_t w)
{
    return mix(seed ^ (w * WORD_KEY));
}

static uint64_t seed_of(int rank, int64_t rep)
{
    return mix(((uint64_t)(uint32_t)rank << 32) ^ (uint64_t)rep);
}

void iolab_pattern_fill(void *buf, uint64_t len, int rank, uint64_t off, int64_t rep)
{
    unsigned char *p = buf;
    uint64_t seed = seed_of(rank, rep);
    while (len > 0 && (off & 7)) {  /* head: up to the next 8-byte file offset */
        uint64_t v = word_at(seed, off >> 3);
        *p++ = ((unsigned char *)&v)[off & 7];
        off++;
        len--;
    }
    for (; len >= 8; len -= 8, off += 8, p += 8) {
        uint64_t v = word_at(seed, off >> 3);
        memcpy(p, &v, 8);
    }
    if (len) {
        uint64_t v = word_at(seed, off >> 3);
        memcpy(p, &v, len);
    }
}

/* The first byte of buf[from, to) that differs from the pattern (buf holds file offsets
 * [off, ...)), or -1: byte by byte within each word, for the unaligned ends and for a block
 * the fast scan found wrong. */
static int64_t first_wrong_byte(const unsigned char *p, uint64_t from, uint64_t to,
                                uint64_t seed, uint64_t off)
{
    for (uint64_t i = from; i < to;) {
        uint64_t at = off + i, v = word_at(seed, at >> 3);
        unsigned start = (unsigned)(at & 7);
        uint64_t n = 8 - start;
        if (n > to - i)
            n = to - i;
        for (uint64_t k = 0; k < n; k++)
            if (p[i + k] != ((const unsigned char *)&v)[start + k])
                return (int64_t)(i + k);
        i += n;
    }
    return -1;
}

/* Words compared before the scan looks at its accumulated difference: long enough for the
 * loop to stay branch-free, short enough that finding the wrong byte rescans little. */
#define CHECK_BLOCK_WORDS 64

int64_t iolab_pattern_check(const void *buf, uint64_t len, int rank, uint64_t off, int64_t rep)
{
    /* Every byte is compared, as before; the aligned middle one 64-bit word at a time with
     * the differences OR-ed together (IOR's verify_memory_pattern is also a word loop), and
     * only a block holding a difference is searched byte by byte. A memcmp per word cost
     * four times IOR's instructions per byte read (callgrind; issue 29). */
    const unsigned char *p = buf;
    uint64_t seed = seed_of(rank, rep);
    uint64_t i = (8 - (off & 7)) & 7;  /* head: up to the next 8-byte file offset */
    if (i > len)
        i = len;
    int64_t bad = first_wrong_byte(p, 0, i, seed, off);
    if (bad >= 0)
        return bad;
    uint64_t key = ((off + i) >> 3) * WORD_KEY;  /* word_at's multiplier, stepped per word */
    while (len - i >= 8) {
        uint64_t words = (len - i) / 8, diff = 0;
        if (words > CHECK_BLOCK_WORDS)
            words = CHECK_BLOCK_WORDS;
        for (uint64_t k = 0; k < words; k++, key += WORD_KEY) {
            uint64_t got;
            memcpy(&got, p + i + 8 * k, 8);
            diff |= got ^ mix(seed ^ key);
        }
        if (diff)
            return first_wrong_byte(p, i, i + 8 * words, seed, off);
        i += 8 * words;
    }
    return first_wrong_byte(p, i, len, seed, off);
}
