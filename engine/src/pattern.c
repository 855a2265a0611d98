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

static inline uint64_t word_at(uint64_t seed, uint64_t w)
{
    return mix(seed ^ (w * 0xD6E8FEB86659FD93ull));
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

int64_t iolab_pattern_check(const void *buf, uint64_t len, int rank, uint64_t off, int64_t rep)
{
    const unsigned char *p = buf;
    uint64_t seed = seed_of(rank, rep), i = 0;
    while (i < len) {
        uint64_t at = off + i, v = word_at(seed, at >> 3);
        unsigned start = (unsigned)(at & 7);
        uint64_t n = 8 - start;
        if (n > len - i)
            n = len - i;
        if (memcmp(p + i, (unsigned char *)&v + start, n) != 0) {
            for (uint64_t k = 0; k < n; k++)
                if (p[i + k] != ((unsigned char *)&v)[start + k])
                    return (int64_t)(i + k);
        }
        i += n;
    }
    return -1;
}
