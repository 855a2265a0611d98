/* Differential fuzz driver for libiolab-buffer.
 *   fuzz DIR FIRST_SEED NSEEDS [-v]
 * For each seed, a random sequence of open/write/pwrite/read/pread/lseek/ftruncate/fstat/
 * stat/dup/fsync/close on one or two files of DIR, sizes 1 B to 2 MiB (mostly small).
 * Every return value, errno, the bytes read and the final file bytes (read with raw
 * syscalls, past any interposer) go into a log; the driver prints one hash of the log per
 * seed (-v: the log itself).  Run with and without the library: the outputs must match. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NSLOT 4
#define MAXIO (2 << 20)

static uint64_t rng;
static uint64_t loghash;
static int verbose;
static unsigned char wbuf[MAXIO], rbuf[MAXIO];

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t below(uint64_t n) { return n ? next() % n : 0; }

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    loghash = fnv(line, (size_t)n, loghash);
    if (verbose)
        fputs(line, stdout);
}

/* Mostly small sizes, sometimes medium, rarely up to 2 MiB. */
static size_t rand_size(void)
{
    uint64_t r = below(100);
    if (r < 80)
        return 1 + below(4096);
    if (r < 97)
        return 4097 + below(65536);
    return 1 + below(MAXIO);
}

static void fill(size_t n)
{
    uint64_t x = next();
    for (size_t i = 0; i < n; i++)
        wbuf[i] = (unsigned char)(x + i * 7 + (i >> 9));
}

/* The file's bytes, read with raw syscalls so no interposer is involved. */
static void log_file(const char *path)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
    if (fd < 0) {
        logf_("file absent\n");
        return;
    }
    uint64_t h = 1469598103934665603ULL, total = 0;
    for (;;) {
        long r = syscall(SYS_read, fd, rbuf, sizeof rbuf);
        if (r <= 0)
            break;
        h = fnv(rbuf, (size_t)r, h);
        total += (uint64_t)r;
    }
    syscall(SYS_close, fd);
    logf_("file %llu %016llx\n", (unsigned long long)total, (unsigned long long)h);
}

static int open_flags(void)
{
    static const int acc[] = {O_RDWR, O_RDWR, O_RDONLY, O_WRONLY};
    int fl = acc[below(4)];
    if (fl != O_RDONLY || below(2))
        fl |= O_CREAT;
    if (below(6) == 0)
        fl |= O_APPEND;
    if (below(8) == 0 && fl != O_RDONLY)
        fl |= O_TRUNC;
    return fl;
}

static int64_t rand_off(int64_t size)
{
    uint64_t r = below(100);
    if (r < 5)
        return -(int64_t)below(100) - 1;
    if (r < 50)
        return (int64_t)below((uint64_t)size + 1);
    return (int64_t)below((uint64_t)size + 65536);
}

/* write, a stream of small writes, pwrite (or a sequential run of them). */
static void op_write(int s, int fd, uint64_t op)
{
    long r;
    size_t n;
    int64_t off;
    errno = 0;
    if (op < 22) {
        n = rand_size();
        fill(n);
        r = write(fd, wbuf, n);
        logf_("write %d %zu -> %ld %d\n", s, n, r, r < 0 ? errno : 0);
    } else if (op < 30) { /* a sequential stream of small writes: what the library gathers */
        int k = 2 + (int)below(64);
        for (int i = 0; i < k; i++) {
            n = 1 + below(below(8) ? 1024 : 20000);
            fill(n);
            errno = 0;
            r = write(fd, wbuf, n);
            logf_("bwrite %d %zu -> %ld %d\n", s, n, r, r < 0 ? errno : 0);
        }
    } else {
        int k = below(3) ? 1 : 2 + (int)below(32);
        off = rand_off(256 << 10);
        for (int i = 0; i < k; i++) {
            n = k > 1 ? 1 + below(2000) : rand_size();
            fill(n);
            errno = 0;
            r = pwrite(fd, wbuf, n, off);
            logf_("pwrite %d %zu %lld -> %ld %d\n", s, n, (long long)off, r, r < 0 ? errno : 0);
            off += (int64_t)n;
        }
    }
}

/* read, a stream of small reads, pread (or a sequential run of them). */
static void op_read(int s, int fd, uint64_t op)
{
    long r;
    size_t n;
    int64_t off;
    errno = 0;
    if (op < 50) {
        n = rand_size();
        r = read(fd, rbuf, n);
        logf_("read %d %zu -> %ld %d %016llx\n", s, n, r, r < 0 ? errno : 0,
              (unsigned long long)(r > 0 ? fnv(rbuf, (size_t)r, 1469598103934665603ULL) : 0));
    } else if (op < 58) { /* a sequential stream of small reads: what the library reads ahead */
        int k = 2 + (int)below(64);
        for (int i = 0; i < k; i++) {
            n = 1 + below(below(8) ? 1024 : 20000);
            errno = 0;
            r = read(fd, rbuf, n);
            logf_("bread %d %zu -> %ld %d %016llx\n", s, n, r, r < 0 ? errno : 0,
                  (unsigned long long)(r > 0 ? fnv(rbuf, (size_t)r, 1469598103934665603ULL) : 0));
        }
    } else {
        int k = below(3) ? 1 : 2 + (int)below(32);
        off = rand_off(256 << 10);
        for (int i = 0; i < k; i++) {
            n = k > 1 ? 1 + below(2000) : rand_size();
            errno = 0;
            r = pread(fd, rbuf, n, off);
            logf_("pread %d %zu %lld -> %ld %d %016llx\n", s, n, (long long)off, r,
                  r < 0 ? errno : 0, (unsigned long long)(r > 0 ? fnv(rbuf, (size_t)r, 1469598103934665603ULL) : 0));
            off += r > 0 ? r : (int64_t)n;
        }
    }
}

static void one_op(int *fds, const char *const *paths)
{
    /* Slots 0 and 1 hold one file each (what the library buffers); 2 and 3 open either
     * file again or dup (what it must stop buffering). */
    uint64_t pick = below(100);
    int s = pick < 60 ? 0 : pick < 85 ? 1 : 2 + (int)below(2);
    int fd = fds[s];
    uint64_t op = below(100);
    long r;
    struct stat st;
    int64_t off;
    if (fd < 0 || op < 6) { /* open */
        int pi = s == 0 ? 0 : s == 1 ? 1 : (int)below(2);
        const char *p = paths[pi];
        int fl = open_flags();
        if (fd >= 0)
            close(fd);
        errno = 0;
        fds[s] = open(p, fl, 0644);
        logf_("open %d %d %x -> %d %d\n", s, pi, fl, fds[s], fds[s] < 0 ? errno : 0);
        return;
    }
    if (op < 38) {
        op_write(s, fd, op);
        return;
    }
    if (op < 66) {
        op_read(s, fd, op);
        return;
    }
    errno = 0;
    if (op < 76) {
        static const int wh[] = {SEEK_SET, SEEK_CUR, SEEK_END, 77};
        int w = wh[below(4)];
        off = w == SEEK_SET ? rand_off(256 << 10) : (int64_t)below(20000) - 10000;
        r = (long)lseek(fd, off, w);
        logf_("lseek %d %lld %d -> %ld %d\n", s, (long long)off, w, r, r < 0 ? errno : 0);
    } else if (op < 82) {
        r = fstat(fd, &st);
        logf_("fstat %d -> %ld %d %lld\n", s, r, r < 0 ? errno : 0,
              (long long)(r == 0 ? st.st_size : -1));
    } else if (op < 88) {
        off = rand_off(200000);
        r = ftruncate(fd, off);
        logf_("ftruncate %d %lld -> %ld %d\n", s, (long long)off, r, r < 0 ? errno : 0);
    } else if (op < 91) {
        r = stat(paths[0], &st);
        logf_("stat -> %ld %d %lld\n", r, r < 0 ? errno : 0, (long long)(r == 0 ? st.st_size : -1));
    } else if (op < 93) {
        int t = (int)below(NSLOT);
        if (t != s) {
            if (fds[t] >= 0)
                close(fds[t]);
            fds[t] = dup(fd);
            logf_("dup %d %d -> %d %d\n", s, t, fds[t], fds[t] < 0 ? errno : 0);
        }
    } else if (op < 96) {
        r = fsync(fd);
        logf_("fsync %d -> %ld %d\n", s, r, r < 0 ? errno : 0);
    } else {
        r = close(fd);
        fds[s] = -1;
        logf_("close %d -> %ld %d\n", s, r, r < 0 ? errno : 0);
    }
}

static void one_seed(const char *dir, uint64_t seed)
{
    char p0[4096], p1[4096];
    snprintf(p0, sizeof p0, "%s/f%llu.dat", dir, (unsigned long long)seed);
    snprintf(p1, sizeof p1, "%s/g%llu.dat", dir, (unsigned long long)seed);
    const char *paths[2] = {p0, p1};
    rng = seed * 0x9E3779B97F4A7C15ULL + 1;
    loghash = 1469598103934665603ULL;
    int fds[NSLOT];
    for (int i = 0; i < NSLOT; i++)
        fds[i] = -1;
    int nops = 8 + (int)below(40);
    for (int i = 0; i < nops; i++)
        one_op(fds, paths);
    for (int i = 0; i < NSLOT; i++)
        if (fds[i] >= 0) {
            errno = 0;
            long r = close(fds[i]);
            logf_("close %d -> %ld %d\n", i, r, r < 0 ? errno : 0);
        }
    log_file(p0);
    log_file(p1);
    unlink(p0);
    unlink(p1);
    printf("seed %llu %016llx\n", (unsigned long long)seed, (unsigned long long)loghash);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fuzz DIR FIRST_SEED NSEEDS [-v]\n");
        return 2;
    }
    verbose = argc > 4 && strcmp(argv[4], "-v") == 0;
    uint64_t first = strtoull(argv[2], NULL, 10), n = strtoull(argv[3], NULL, 10);
    for (uint64_t s = first; s < first + n; s++)
        one_seed(argv[1], s);
    return 0;
}
