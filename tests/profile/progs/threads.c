/* Threaded stress: T threads, each N write() of 16 B to its own file and to one shared file
 * (pwrite at distinct offsets). Usage: threads DIR T N */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *dir;
static long n;
static int shared_fd;

static void *work(void *arg)
{
    long t = (long)arg;
    char path[4096], buf[16] = "0123456789abcdef";
    snprintf(path, sizeof path, "%s/thread_%ld.dat", dir, t);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (long i = 0; i < n; i++) {
        if (write(fd, buf, 16) != 16)
            exit(1);
        if (pwrite(shared_fd, buf, 16, (off_t)((t * n + i) * 16)) != 16)
            exit(1);
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    dir = argv[1];
    int nt = atoi(argv[2]);
    n = atol(argv[3]);
    char path[4096];
    snprintf(path, sizeof path, "%s/shared.dat", dir);
    shared_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pthread_t th[64];
    for (long t = 0; t < nt; t++)
        pthread_create(&th[t], NULL, work, (void *)t);
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    close(shared_fd);
    return 0;
}
