/* A program with its own fatal-signal handlers, run under the tracer: it must see its own
 * dispositions and its handlers must run as without the tracer.
 * Usage: sig_chain FILE exit|resethand|query
 *   exit:      SIGSEGV handler (SA_SIGINFO) that says "caught" and _exit(5)s; then a crash
 *   resethand: one-shot SIGSEGV handler (SA_RESETHAND, as Open MPI installs) that says
 *              "once" and returns: the fault happens again and kills the process
 *   query:     checks the dispositions read back (default, then its own), exits 0 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_segv_exit(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si && si->si_signo == SIGSEGV)
        (void)!write(2, "caught\n", 7);
    _exit(5);
}

static void on_segv_once(int sig)
{
    (void)sig;
    (void)!write(2, "once\n", 5);
}

static void write_4k(const char *path)
{
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        _exit(9);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (!strcmp(argv[2], "query")) {
        if (sigaction(SIGSEGV, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            return 2;
        sa.sa_handler = on_segv_once;
        if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGSEGV, NULL, &old) != 0 ||
            old.sa_handler != on_segv_once)
            return 3;
        if (signal(SIGSEGV, SIG_DFL) != on_segv_once || signal(SIGTERM, SIG_IGN) != SIG_DFL ||
            signal(SIGTERM, SIG_DFL) != SIG_IGN)
            return 4;
        write_4k(argv[1]);
        return 0;
    }
    if (!strcmp(argv[2], "exit")) {
        sa.sa_sigaction = on_segv_exit;
        sa.sa_flags = SA_SIGINFO;
    } else {
        sa.sa_handler = on_segv_once;
        sa.sa_flags = SA_RESETHAND;
    }
    if (sigaction(SIGSEGV, &sa, NULL) != 0)
        return 6;
    write_4k(argv[1]);
    *(volatile int *)NULL = 1;
    return 0;
}
