/* Fork test: the parent writes 10 x 100 B to parent.dat, forks; the child writes 20 x 100 B
 * to child.dat and leaves with _exit(3); the parent waits, then writes 5 more. Usage: forker DIR */
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void put(const char *dir, const char *name, int n, int flags)
{
    char path[4096], buf[100] = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
    for (int i = 0; i < n; i++)
        if (write(fd, buf, 100) != 100)
            _exit(1);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    put(argv[1], "parent.dat", 10, O_TRUNC);
    pid_t pid = fork();
    if (pid == 0) {
        put(argv[1], "child.dat", 20, O_TRUNC);
        _exit(3);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    put(argv[1], "parent.dat", 5, O_APPEND);
    return WIFEXITED(st) && WEXITSTATUS(st) == 3 ? 0 : 1;
}
