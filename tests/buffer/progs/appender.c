/* One of several processes appending records to one O_APPEND file (a shared log).
 *   appender PATH ID N
 * Record k: "<ID> <k> <len> " then letters up to len bytes, then '\n'; lengths vary from
 * 50 to 3049 bytes so records straddle any buffer size.  Every record must come out whole. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int id = atoi(argv[2]), n = atoi(argv[3]);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
    char rec[4096];
    for (int k = 0; k < n; k++) {
        int len = 50 + (k * 37 + id * 11) % 3000;
        int h = snprintf(rec, sizeof rec, "%d %d %d ", id, k, len);
        memset(rec + h, 'a' + (id + k) % 26, (size_t)(len - h - 1));
        rec[len - 1] = '\n';
        if (write(fd, rec, (size_t)len) != len)
            return 1;
    }
    return close(fd) != 0;
}
