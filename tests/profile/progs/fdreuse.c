/* A traced file's descriptor closed by close_range(), its number reused by an eventfd, a
 * pipe, then closefrom(): the eventfd's and pipe's I/O are not the file's. Usage: fdreuse DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[4096];
    uint64_t one = 1;
    if (argc != 2)
        return 2;
    snprintf(path, sizeof path, "%s/reused.dat", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (write(fd, "12345", 5) != 5 || close_range((unsigned)fd, ~0U, 0) != 0)
        return 1;
    int efd = eventfd(0, 0);
    if (efd != fd || write(efd, &one, 8) != 8 || read(efd, &one, 8) != 8)
        return 1;
    fd = open(path, O_WRONLY | O_APPEND);
    if (write(fd, "6", 1) != 1)
        return 1;
    closefrom(fd);
    int p[2];
    if (pipe(p) != 0 || write(p[1], "x", 1) != 1)
        return 1;
    printf("ok\n");
    return 0;
}
