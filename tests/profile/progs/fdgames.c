/* Descriptor games: dup2 over stdout, O_APPEND, a pipe, fcntl(F_DUPFD), pwrite after dup.
 * Prints to the real stdout first, then to the file through fd 1. Usage: fdgames DIR */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[4096], buf[256];
    if (argc != 2)
        return 2;
    printf("before dup2\n");
    fflush(stdout);
    snprintf(path, sizeof path, "%s/redirected.txt", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int saved = dup(1);
    dup2(fd, 1);
    close(fd);
    if (write(1, "into the file\n", 14) != 14)
        return 1;
    dup2(saved, 1);
    close(saved);
    int p[2];
    if (pipe(p) != 0 || write(p[1], "through a pipe", 14) != 14 || read(p[0], buf, 14) != 14)
        return 1;
    close(p[0]);
    close(p[1]);
    snprintf(path, sizeof path, "%s/append.txt", argv[1]);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int fd2 = fcntl(fd, F_DUPFD, 10);
    if (write(fd, "abc", 3) != 3 || write(fd2, "defg", 4) != 4)
        return 1;
    close(fd);
    close(fd2);
    printf("after: %.14s\n", buf);
    return 0;
}
