/* reader MODE PATH CHUNK SPIN: reads PATH sequentially in CHUNK-byte read() (MODE read) or
 * pread() (MODE pread) calls, with SPIN steps of computation after each, and prints the
 * bytes read and a checksum of them: the same with and without the library. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: reader read|pread PATH CHUNK SPIN\n");
        return 2;
    }
    int use_pread = strcmp(argv[1], "pread") == 0;
    size_t chunk = (size_t)atoll(argv[3]);
    long spin = atol(argv[4]);
    unsigned char *buf = malloc(chunk);
    int fd = open(argv[2], O_RDONLY);
    if (!buf || fd < 0) {
        perror(argv[2]);
        return 1;
    }
    unsigned long long sum = 0, total = 0;
    volatile unsigned long acc = 0;
    ssize_t r;
    while ((r = use_pread ? pread(fd, buf, chunk, (off_t)total) : read(fd, buf, chunk)) > 0) {
        /* a cheap checksum (words, not bytes): "no computation" must stay nearly none */
        ssize_t i = 0;
        for (; i + 8 <= r; i += 8) {
            unsigned long long w;
            memcpy(&w, buf + i, 8);
            sum += w ^ (total + (unsigned long long)i);
        }
        for (; i < r; i++)
            sum += (unsigned long long)buf[i] << (i % 8 * 8);
        total += (unsigned long long)r;
        for (long i = 0; i < spin; i++)
            acc = acc * 6364136223846793005UL + buf[i % r];
    }
    if (r < 0) {
        perror("read");
        return 1;
    }
    printf("%llu %llu\n", total, sum);
    return close(fd) != 0;
}
