/* I/O at the very end: in an atexit handler and in a destructor. Usage: exit_hooks DIR */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *dir;

static void put(const char *name, const char *text, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, n) != (ssize_t)n)
        _exit(1);
    close(fd);
}

static void at_exit(void) { put("atexit.dat", "abc", 3); }

__attribute__((destructor)) static void at_destruct(void) { put("destructor.dat", "abcd", 4); }

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dir = argv[1];
    atexit(at_exit);
    return 0;
}
