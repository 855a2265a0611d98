/* Multithreaded writers for the libiolab-buffer locking tests.
 *   threads MODE PATH NTHREADS NRECORDS RECSIZE
 * MODE files:  thread t writes PATH.t with NRECORDS sequential write() calls
 *      shared: all threads write() records to one shared descriptor of PATH
 *      pshared: all threads pwrite() record k of thread t at (k*NTHREADS+t)*RECSIZE
 *      reads:  PATH exists; all threads read() it through one shared descriptor
 * A record is RECSIZE bytes: "t=<thread> k=<index>" then the letter 'a'+t, so every
 * record can be checked intact.  reads prints the number of intact records seen. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode, *path;
static int nthreads, nrecords, recsize, shared_fd = -1;
static long intact;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void record(char *buf, int t, int k)
{
    memset(buf, 'a' + t % 26, (size_t)recsize);
    int n = snprintf(buf, (size_t)recsize, "t=%d k=%d", t, k);
    buf[n < recsize ? n : recsize - 1] = ' ';
}

static void *run(void *arg)
{
    int t = (int)(long)arg, fd = shared_fd;
    char *buf = malloc((size_t)recsize);
    if (strcmp(mode, "files") == 0) {
        char p[4096];
        snprintf(p, sizeof p, "%s.%d", path, t);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    for (int k = 0; k < nrecords; k++) {
        if (strcmp(mode, "reads") == 0) {
            if (read(fd, buf, (size_t)recsize) != recsize)
                break;
            int rt, rk;
            if (sscanf(buf, "t=%d k=%d", &rt, &rk) == 2) {
                char *want = malloc((size_t)recsize);
                record(want, rt, rk);
                pthread_mutex_lock(&mu);
                intact += memcmp(want, buf, (size_t)recsize) == 0;
                pthread_mutex_unlock(&mu);
                free(want);
            }
            continue;
        }
        record(buf, t, k);
        ssize_t r = strcmp(mode, "pshared") == 0
                        ? pwrite(fd, buf, (size_t)recsize, ((off_t)k * nthreads + t) * recsize)
                        : write(fd, buf, (size_t)recsize);
        if (r != recsize) {
            perror("write");
            exit(1);
        }
    }
    if (strcmp(mode, "files") == 0 && close(fd) != 0)
        exit(1);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 6)
        return 2;
    mode = argv[1];
    path = argv[2];
    nthreads = atoi(argv[3]);
    nrecords = atoi(argv[4]);
    recsize = atoi(argv[5]);
    if (strcmp(mode, "files") != 0)
        shared_fd = open(path, strcmp(mode, "reads") == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC,
                         0644);
    pthread_t th[64];
    for (long t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, run, (void *)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    if (strcmp(mode, "reads") == 0)
        printf("intact %ld\n", intact);
    return shared_fd >= 0 && close(shared_fd) != 0;
}
