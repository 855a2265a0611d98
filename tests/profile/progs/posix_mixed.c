/* As Darshan's posix_mixed (see ../shared/darshan-generated/README.md). Usage: posix_mixed DIR */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[4096];
    if (argc != 2)
        return 2;
    char *buf = calloc(1, 1 << 20);
    snprintf(path, sizeof path, "%s/mixed_main.dat", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    for (int i = 0; i < 64; i++)
        if (write(fd, buf, 1 << 20) != 1 << 20)
            return 1;
    fsync(fd);
    srand(42);
    for (int i = 0; i < 10000; i++)
        if (pread(fd, buf, 4096, (off_t)(rand() % 16384) * 4096) != 4096)
            return 1;
    for (int i = 0; i < 2000; i++) {
        lseek(fd, (off_t)i * 8192, SEEK_SET);
        if (read(fd, buf, 100) != 100)
            return 1;
    }
    close(fd);
    struct stat st;
    for (int i = 0; i < 50; i++)
        stat(path, &st);
    for (int f = 0; f < 16; f++) {
        snprintf(path, sizeof path, "%s/mixed_side_%02d.txt", argv[1], f);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        for (int i = 0; i < 100; i++)
            if (write(fd, buf, (size_t)(10 + i)) != 10 + i)
                return 1;
        close(fd);
    }
    free(buf);
    return 0;
}
