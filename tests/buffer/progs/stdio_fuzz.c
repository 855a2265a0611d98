/* Differential fuzz driver for the STDIO path of libiolab-buffer.
 *   stdio_fuzz DIR FIRST_SEED NSEEDS [-v]
 * For each seed: random fopen modes, fwrite/fputs/fprintf/fputc, fread/fgetc, fseek/ftell,
 * fflush, fstat(fileno) and fclose on DIR/s<seed>.dat, logging every result (the driver
 * seeks between a write and a read, as C requires).  Prints one hash per seed, like fuzz. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t rng, loghash;
static int verbose;
static unsigned char wbuf[1 << 20], rbuf[1 << 20];

static uint64_t below(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
    return h;
}

__attribute__((format(printf, 1, 2))) static void logf_(const char *fmt, ...)
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

static size_t rand_size(void)
{
    return below(10) ? 1 + below(600) : 1 + below(sizeof wbuf);
}

static void one_seed(const char *dir, uint64_t seed)
{
    static const char *modes[] = {"r", "w", "a", "r+", "w+", "a+", "wb", "rb+"};
    char path[4096];
    snprintf(path, sizeof path, "%s/s%llu.dat", dir, (unsigned long long)seed);
    rng = seed * 0x9E3779B97F4A7C15ULL + 7;
    loghash = 1469598103934665603ULL;
    FILE *fp = NULL;
    int last = 0; /* 1 wrote, 2 read: C wants a seek in between */
    int nops = 10 + (int)below(50);
    for (int i = 0; i < nops; i++) {
        uint64_t op = below(100);
        errno = 0;
        if (!fp || op < 5) {
            if (fp)
                logf_("fclose -> %d\n", fclose(fp));
            const char *m = modes[below(8)];
            fp = fopen(path, m);
            last = 0;
            logf_("fopen %s -> %d %d\n", m, fp != NULL, fp ? 0 : errno);
            continue;
        }
        if ((op < 45 && last == 2) || (op >= 45 && op < 70 && last == 1)) {
            logf_("fseek0 -> %d\n", fseek(fp, 0, SEEK_CUR));
            last = 0;
        }
        if (op < 35) {
            size_t n = rand_size();
            for (size_t j = 0; j < n; j++)
                wbuf[j] = (unsigned char)(i * 31 + j);
            size_t r = fwrite(wbuf, 1, n, fp);
            logf_("fwrite %zu -> %zu %d\n", n, r, ferror(fp));
            last = 1;
        } else if (op < 40) {
            int r = fprintf(fp, "line %d %llu\n", i, (unsigned long long)below(1000000));
            logf_("fprintf -> %d\n", r);
            last = 1;
        } else if (op < 45) {
            logf_("fputc -> %d\n", fputc('A' + i % 26, fp));
            last = 1;
        } else if (op < 65) {
            size_t n = rand_size();
            size_t r = fread(rbuf, 1, n, fp);
            logf_("fread %zu -> %zu %d %016llx\n", n, r, feof(fp),
                  (unsigned long long)fnv(rbuf, r, 1469598103934665603ULL));
            last = 2;
        } else if (op < 70) {
            logf_("fgetc -> %d\n", fgetc(fp));
            last = 2;
        } else if (op < 82) {
            int w = (int)below(3);
            long off = w == SEEK_SET ? (long)below(300000) : (long)below(4000) - 2000;
            int r = fseek(fp, off, w);
            logf_("fseek %ld %d -> %d %d\n", off, w, r, r ? errno : 0);
            last = 0;
        } else if (op < 90) {
            logf_("ftell -> %ld\n", ftell(fp));
        } else if (op < 95) {
            logf_("fflush -> %d\n", fflush(fp));
        } else {
            struct stat st;
            fflush(fp);
            int r = fstat(fileno(fp), &st);
            logf_("fstat -> %d %lld\n", r, (long long)st.st_size);
        }
    }
    if (fp)
        logf_("fclose -> %d\n", fclose(fp));
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
    uint64_t h = 1469598103934665603ULL, total = 0;
    for (long r; fd >= 0 && (r = syscall(SYS_read, fd, rbuf, sizeof rbuf)) > 0; total += (uint64_t)r)
        h = fnv(rbuf, (size_t)r, h);
    if (fd >= 0)
        syscall(SYS_close, fd);
    logf_("file %llu %016llx\n", (unsigned long long)total, (unsigned long long)h);
    unlink(path);
    printf("seed %llu %016llx\n", (unsigned long long)seed, (unsigned long long)loghash);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    verbose = argc > 4 && strcmp(argv[4], "-v") == 0;
    uint64_t first = strtoull(argv[2], NULL, 10), n = strtoull(argv[3], NULL, 10);
    for (uint64_t s = first; s < first + n; s++)
        one_seed(argv[1], s);
    return 0;
}
