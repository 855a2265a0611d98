/* The interposed calls that name files by path (open, stat, truncate) or start and end
 * processes (fork, exec, spawn, _exit).  Before any of them, what other descriptors hold
 * in write buffers reaches the kernel, so another descriptor, another program or a stat by
 * name sees exactly the bytes it would see without the library. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "wrappers.h"

void iolab_buffer_opened(int fd, const char *path, int flags, double t0)
{
    if (fd < 0 || !path || (flags & (O_PATH | O_DIRECT | O_DSYNC)))
        return;
    const iolab_buffer_rule_t *rule = iolab_buffer_config_match(&iolab_buffer_cfg, path);
    if (!rule)
        return;
    iolab_buffer_file_t *f = iolab_buffer_file_new(fd, path, rule);
    if (!f)
        return;
    f->st.calls[IOLAB_OP_OPEN] = 1;
    f->st.seconds[IOLAB_OP_OPEN] = iolab_buffer_now() - t0;
    iolab_buffer_table_add(f);
    iolab_buffer_check_shared(f);
}

/* Runs one open-like call: flush other streams, open, maybe start buffering. */
#define IOLAB_OPEN_CALL(path, flags, real_call) \
    do { \
        if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled) \
            return real_call; \
        int saved_ = errno; \
        iolab_buffer_in_lib = 1; \
        iolab_buffer_flush_all(); \
        double t0_ = iolab_buffer_now(); \
        errno = saved_; \
        int fd_ = real_call; \
        int err_ = errno; \
        iolab_buffer_opened(fd_, path, flags, t0_); \
        iolab_call_leave(fd_ < 0 ? err_ : saved_); \
        return fd_; \
    } while (0)

static mode_t open_mode(int flags, va_list ap)
{
    return (flags & (O_CREAT | __O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(open)(path, flags, mode));
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(open64)(path, flags, mode));
}

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(openat)(dirfd, path, flags, mode));
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = open_mode(flags, ap);
    va_end(ap);
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(openat64)(dirfd, path, flags, mode));
}

int creat(const char *path, mode_t mode)
{
    IOLAB_OPEN_CALL(path, O_WRONLY | O_CREAT | O_TRUNC, IOLAB_REAL(creat)(path, mode));
}

int creat64(const char *path, mode_t mode)
{
    IOLAB_OPEN_CALL(path, O_WRONLY | O_CREAT | O_TRUNC, IOLAB_REAL(creat64)(path, mode));
}

int __open_2(const char *path, int flags)
{
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(__open_2)(path, flags));
}

int __open64_2(const char *path, int flags)
{
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(__open64_2)(path, flags));
}

int __openat_2(int dirfd, const char *path, int flags)
{
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(__openat_2)(dirfd, path, flags));
}

int __openat64_2(int dirfd, const char *path, int flags)
{
    IOLAB_OPEN_CALL(path, flags, IOLAB_REAL(__openat64_2)(dirfd, path, flags));
}

/* By-path queries see the size and bytes on disk: write streams go there first. */
#define IOLAB_PATH_CALL(real_call) IOLAB_PROCESS_THEN(iolab_buffer_flush_all, real_call)

int stat(const char *p, struct stat *st) { IOLAB_PATH_CALL(IOLAB_REAL(stat)(p, st)); }
int stat64(const char *p, struct stat64 *st) { IOLAB_PATH_CALL(IOLAB_REAL(stat64)(p, st)); }
int lstat(const char *p, struct stat *st) { IOLAB_PATH_CALL(IOLAB_REAL(lstat)(p, st)); }
int lstat64(const char *p, struct stat64 *st) { IOLAB_PATH_CALL(IOLAB_REAL(lstat64)(p, st)); }

int __xstat(int v, const char *p, struct stat *st)
{
    IOLAB_PATH_CALL(IOLAB_REAL(__xstat)(v, p, st));
}

int __xstat64(int v, const char *p, struct stat64 *st)
{
    IOLAB_PATH_CALL(IOLAB_REAL(__xstat64)(v, p, st));
}

int __lxstat(int v, const char *p, struct stat *st)
{
    IOLAB_PATH_CALL(IOLAB_REAL(__lxstat)(v, p, st));
}

int __lxstat64(int v, const char *p, struct stat64 *st)
{
    IOLAB_PATH_CALL(IOLAB_REAL(__lxstat64)(v, p, st));
}

/* fstatat(fd, "", AT_EMPTY_PATH) is an fstat in disguise: flushing all covers it too. */
int fstatat(int d, const char *p, struct stat *st, int fl)
{
    IOLAB_PATH_CALL(IOLAB_REAL(fstatat)(d, p, st, fl));
}

int fstatat64(int d, const char *p, struct stat64 *st, int fl)
{
    IOLAB_PATH_CALL(IOLAB_REAL(fstatat64)(d, p, st, fl));
}

int __fxstatat(int v, int d, const char *p, struct stat *st, int fl)
{
    IOLAB_PATH_CALL(IOLAB_REAL(__fxstatat)(v, d, p, st, fl));
}

int __fxstatat64(int v, int d, const char *p, struct stat64 *st, int fl)
{
    IOLAB_PATH_CALL(IOLAB_REAL(__fxstatat64)(v, d, p, st, fl));
}

int statx(int d, const char *p, int fl, unsigned int mask, struct statx *st)
{
    IOLAB_PATH_CALL(IOLAB_REAL(statx)(d, p, fl, mask, st));
}

/* truncate by name may cut what a read-ahead window holds: sync everything. */
int truncate(const char *p, off_t len)
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(truncate)(p, len));
}

int truncate64(const char *p, off_t len)
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(truncate64)(p, len));
}

/* fork: pthread_atfork handlers (table.c) sync everything and hold the locks. */
pid_t fork(void)
{
    return IOLAB_REAL(fork)();
}

/* vfork's child borrows our stack and may only exec or _exit; fork gives the same
 * observable behaviour without letting the child run our code on the parent's stack. */
pid_t vfork(void)
{
    return fork();
}

/* A new program inherits the descriptors with their kernel offsets: sync everything. */
int execve(const char *p, char *const argv[], char *const envp[])
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(execve)(p, argv, envp));
}

int execv(const char *p, char *const argv[])
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(execv)(p, argv));
}

int execvp(const char *p, char *const argv[])
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(execvp)(p, argv));
}

int execvpe(const char *p, char *const argv[], char *const envp[])
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(execvpe)(p, argv, envp));
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(fexecve)(fd, argv, envp));
}

/* The variadic execs call libc's execve internally, out of our reach: gather the arguments
 * and go through our execv*. */
#define IOLAB_GATHER_ARGS(arg0, ap, argv) \
    size_t n_ = 1; \
    va_start(ap, arg0); \
    while (va_arg(ap, const char *)) \
        n_++; \
    va_end(ap); \
    const char *argv[n_ + 1]; \
    argv[0] = arg0; \
    va_start(ap, arg0); \
    for (size_t i_ = 1; i_ <= n_; i_++) \
        argv[i_] = va_arg(ap, const char *)

int execl(const char *p, const char *arg0, ...)
{
    va_list ap;
    IOLAB_GATHER_ARGS(arg0, ap, argv);
    va_end(ap);
    return execv(p, (char *const *)argv);
}

int execlp(const char *p, const char *arg0, ...)
{
    va_list ap;
    IOLAB_GATHER_ARGS(arg0, ap, argv);
    va_end(ap);
    return execvp(p, (char *const *)argv);
}

int execle(const char *p, const char *arg0, ...)
{
    va_list ap;
    IOLAB_GATHER_ARGS(arg0, ap, argv);
    char *const *envp = va_arg(ap, char *const *); /* after the NULL that ends the list */
    va_end(ap);
    return execve(p, (char *const *)argv, envp);
}

FILE *popen(const char *cmd, const char *mode)
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(popen)(cmd, mode));
}

int system(const char *cmd)
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(system)(cmd));
}

int posix_spawn(pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all, IOLAB_REAL(posix_spawn)(pid, p, fa, attr, argv, envp));
}

int posix_spawnp(pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    IOLAB_PROCESS_THEN(iolab_buffer_sync_all,
                       IOLAB_REAL(posix_spawnp)(pid, p, fa, attr, argv, envp));
}

/* _exit skips atexit, not the kernel: what write() accepted must reach the file. */
void _exit(int status)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled)
        iolab_buffer_exit_flush();
    IOLAB_REAL(_exit)(status);
    __builtin_unreachable();
}

/* quick_exit runs at_quick_exit handlers, then ends like _exit: same as _exit for us. */
void quick_exit(int status)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled)
        iolab_buffer_exit_flush();
    IOLAB_REAL(quick_exit)(status);
    __builtin_unreachable();
}

void _Exit(int status)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled)
        iolab_buffer_exit_flush();
    IOLAB_REAL(_Exit)(status);
    __builtin_unreachable();
}
