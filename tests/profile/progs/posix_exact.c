/* Counter exactness: 10,000 x 64 B write() to argv[1], then 100 x 1 MiB read() of argv[2]. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    char *buf = malloc(1 << 20);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 10000; i++)
        if (write(fd, buf, 64) != 64)
            return 1;
    close(fd);
    fd = open(argv[2], O_RDONLY);
    for (int i = 0; i < 100; i++)
        if (read(fd, buf, 1 << 20) != 1 << 20)
            return 1;
    close(fd);
    free(buf);
    return 0;
}
