/* Sequential writer for the libiolab-buffer tests (the seed's case shape and the exit,
 * signal and fault paths).
 *   writer PATH TOTAL SIZE API END
 * Writes TOTAL bytes in SIZE-byte calls; byte i of the file is pattern(i) (see below).
 * API: write | pwrite | fwrite
 * END: close      close (fclose), report its result, return from main
 *      fsync      fsync then close
 *      exit       exit(0) without closing
 *      _exit      _exit(0) without closing
 *      quick      quick_exit(0) without closing
 *      thread     a second thread calls exit(0) while main waits
 *      hang       print "ready BYTES" on stdout, then wait for a signal forever
 *      handler    like hang, with the program's own SIGTERM handler that calls exit(3)
 * Every failing call is reported on stderr as "FAIL <call> <index> <errno>"; exit status 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char pattern(long long i) { return (unsigned char)((i * 131 + i / 4093) & 0xff); }

static void *exit_thread(void *arg)
{
    (void)arg;
    exit(0);
}

static void on_term(int sig)
{
    (void)sig;
    static const char msg[] = "handler\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(4);
    exit(3);
}

static int fail(const char *call, long long i)
{
    fprintf(stderr, "FAIL %s %lld %d\n", call, i, errno);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: writer PATH TOTAL SIZE API END\n");
        return 2;
    }
    long long total = atoll(argv[2]), size = atoll(argv[3]);
    const char *api = argv[4], *end = argv[5];
    if (strcmp(end, "handler") == 0)
        signal(SIGTERM, on_term);
    unsigned char *buf = malloc((size_t)size);
    FILE *fp = NULL;
    int fd = -1;
    if (strcmp(api, "fwrite") == 0)
        fp = fopen(argv[1], "w");
    else
        fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!buf || (!fp && fd < 0))
        return fail("open", 0);
    int bad = 0;
    for (long long off = 0, k = 0; off < total; off += size, k++) {
        long long n = total - off < size ? total - off : size;
        for (long long j = 0; j < n; j++)
            buf[j] = pattern(off + j);
        long long r;
        if (fp)
            r = (long long)fwrite(buf, 1, (size_t)n, fp);
        else if (api[0] == 'p')
            r = pwrite(fd, buf, (size_t)n, off);
        else
            r = write(fd, buf, (size_t)n);
        if (r != n) {
            bad = fail(api, k);
            break;
        }
    }
    if (strcmp(end, "hang") == 0 || strcmp(end, "handler") == 0) {
        printf("ready %lld\n", total);
        fflush(stdout);
        for (;;)
            pause();
    }
    if (strcmp(end, "exit") == 0)
        exit(bad);
    if (strcmp(end, "_exit") == 0)
        _exit(bad);
    if (strcmp(end, "quick") == 0)
        quick_exit(bad);
    if (strcmp(end, "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, exit_thread, NULL);
        for (;;)
            pause();
    }
    if (strcmp(end, "fsync") == 0 && (fp ? fflush(fp) != 0 || fsync(fileno(fp)) != 0
                                          : fsync(fd) != 0))
        bad = fail("fsync", 0);
    if (fp ? fclose(fp) != 0 : close(fd) != 0)
        bad = fail("close", 0);
    return bad;
}
