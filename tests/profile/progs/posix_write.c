/* As Darshan's posix_write: open(O_WRONLY|O_CREAT|O_TRUNC, 0644), N write() of S bytes from one
 * malloc'd buffer, close. Usage: posix_write PATH N S */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    long n = atol(argv[2]);
    size_t s = (size_t)atol(argv[3]);
    char *buf = calloc(1, s);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    for (long i = 0; i < n; i++)
        if (write(fd, buf, s) != (ssize_t)s)
            return 1;
    close(fd);
    free(buf);
    return 0;
}
