/* libiolab-trace: the exec family. exec replaces the image without running exit handlers,
 * so the I/O this image did would be lost (a shell redirecting then exec'ing, a fork child
 * working then exec'ing): the profile is written just before, and re-armed when exec fails
 * (the profile at exit then replaces it: same file name). glibc's execl* call execve
 * internally, so they are wrapped too. */
#include "iolab_trace_core.h"
#include "iolab_wrap.h"

#include <stdlib.h>
#include <unistd.h>

#define EXEC_WRAP(name, args)                                                                \
    do {                                                                                     \
        iolab_trace_flush_before_exec();                                                     \
        int ret = IOLAB_REAL(name) args;                                                     \
        int errno_ = errno;                                                                  \
        iolab_trace_exec_failed();                                                           \
        errno = errno_;                                                                      \
        return ret;                                                                          \
    } while (0)

int execve(const char *path, char *const argv[], char *const envp[])
{
    EXEC_WRAP(execve, (path, argv, envp));
}

int execv(const char *path, char *const argv[]) { EXEC_WRAP(execv, (path, argv)); }

int execvp(const char *file, char *const argv[]) { EXEC_WRAP(execvp, (file, argv)); }

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    EXEC_WRAP(execvpe, (file, argv, envp));
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    EXEC_WRAP(fexecve, (fd, argv, envp));
}

/* execl, execlp, execle: the variadic list as an argv array (on the stack, like glibc). */
#define ARGV_FROM_LIST(arg0, ap, argv, n)                                                    \
    va_list ap;                                                                              \
    size_t n = 1;                                                                            \
    va_start(ap, arg0);                                                                      \
    while (va_arg(ap, const char *))                                                         \
        n++;                                                                                 \
    va_end(ap);                                                                              \
    char *argv[n + 1];                                                                       \
    argv[0] = (char *)(arg0);                                                                \
    va_start(ap, arg0);                                                                      \
    for (size_t i_ = 1; i_ <= n; i_++)                                                       \
        argv[i_] = va_arg(ap, char *);

int execl(const char *path, const char *arg, ...)
{
    ARGV_FROM_LIST(arg, ap, argv, n);
    va_end(ap);
    return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...)
{
    ARGV_FROM_LIST(arg, ap, argv, n);
    va_end(ap);
    return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
    ARGV_FROM_LIST(arg, ap, argv, n);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
