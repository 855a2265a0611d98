/* Buffered writes, then another process looks at the file (fork, system, exec).
 *   forker PATH TOTAL HOW     HOW: fork | system | exec
 * Writes TOTAL bytes in 512-byte write() calls without closing, then:
 *   fork    the child prints the size it sees with stat(), then _exit(0)
 *   system  runs "wc -c < PATH" (a new program reading the file)
 *   exec    execs "wc -c PATH" (the descriptor stays open across exec)
 *   share   the child appends 100 'C' lines through the inherited descriptor (one shared
 *           offset), then the parent 100 'P' lines; prints nothing
 * The size printed must be TOTAL: nothing may still sit in the library's buffers. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    long total = atol(argv[2]);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buf[512];
    memset(buf, 'x', sizeof buf);
    for (long off = 0; off < total; off += 512)
        if (write(fd, buf, (size_t)(total - off < 512 ? total - off : 512)) < 0)
            return 1;
    fflush(stdout);
    if (strcmp(argv[3], "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            struct stat st;
            stat(argv[1], &st);
            printf("%lld\n", (long long)st.st_size);
            fflush(stdout);
            _exit(0);
        }
        int status;
        waitpid(pid, &status, 0);
        /* The parent keeps writing after the fork: still buffered, still right. */
        if (write(fd, buf, 512) != 512)
            return 1;
        return close(fd) != 0;
    }
    if (strcmp(argv[3], "share") == 0) {
        pid_t pid = fork();
        for (int i = 0; i < 100; i++)
            if (write(fd, pid == 0 ? "C\n" : "P\n", 2) != 2)
                return 1;
        if (pid == 0)
            _exit(0);
        int status;
        waitpid(pid, &status, 0);
        for (int i = 0; i < 100; i++)
            if (write(fd, "p\n", 2) != 2)
                return 1;
        return close(fd) != 0;
    }
    if (strcmp(argv[3], "system") == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "wc -c < '%s'", argv[1]);
        return system(cmd) != 0;
    }
    execlp("sh", "sh", "-c", "wc -c < \"$0\"", argv[1], (char *)NULL);
    return 1;
}
