/* The interposed POSIX calls on descriptors.  Each is the skeleton of wrappers.h around a
 * core function; calls the core does not buffer sync the descriptor and pass through. */
#include <stdarg.h>
#include <string.h>

#include "wrappers.h"

ssize_t write(int fd, const void *buf, size_t n)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(write)(fd, buf, n);
    return iolab_call_end(&c, IOLAB_OP_WRITE, iolab_buffer_write(c.f, buf, n));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(pwrite)(fd, buf, n, off);
    return iolab_call_end(&c, IOLAB_OP_WRITE, iolab_buffer_pwrite(c.f, buf, n, off));
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite(fd, buf, n, off);
}

ssize_t read(int fd, void *buf, size_t n)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(read)(fd, buf, n);
    return iolab_call_end(&c, IOLAB_OP_READ, iolab_buffer_read(c.f, buf, n));
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        return IOLAB_REAL(__read_chk)(fd, buf, n, buflen); /* let libc report the overflow */
    return read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(pread)(fd, buf, n, off);
    return iolab_call_end(&c, IOLAB_OP_READ, iolab_buffer_pread(c.f, buf, n, off));
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    return pread(fd, buf, n, off);
}

ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (n > buflen)
        return IOLAB_REAL(__pread_chk)(fd, buf, n, off, buflen);
    return pread(fd, buf, n, off);
}

ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    return __pread_chk(fd, buf, n, off, buflen);
}

off_t lseek(int fd, off_t off, int whence)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(lseek)(fd, off, whence);
    return iolab_call_end(&c, IOLAB_OP_OTHER, iolab_buffer_lseek(c.f, off, whence));
}

off_t lseek64(int fd, off_t off, int whence)
{
    return lseek(fd, off, whence);
}

int fstat(int fd, struct stat *st)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(fstat)(fd, st);
    return (int)iolab_call_end(&c, IOLAB_OP_OTHER, iolab_buffer_fstat(c.f, st));
}

int fstat64(int fd, struct stat64 *st)
{
    return fstat(fd, (struct stat *)st); /* the same layout on 64-bit Linux */
}

int __fxstat(int ver, int fd, struct stat *st)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(__fxstat)(ver, fd, st);
    int r = IOLAB_REAL(__fxstat)(ver, fd, st);
    int64_t rc = r == 0 ? 0 : -errno;
    if (r == 0 && c.f->mode == IOLAB_MODE_WRITE && c.f->we > st->st_size)
        st->st_size = c.f->we;
    return (int)iolab_call_end(&c, IOLAB_OP_OTHER, rc);
}

int __fxstat64(int ver, int fd, struct stat64 *st)
{
    return __fxstat(ver, fd, (struct stat *)st);
}

/* Runs `op` on a synced descriptor and reports a pending delayed-write error first: the
 * calls that end a stream (fsync, ftruncate...) are where a program looks for it. */
#define IOLAB_SYNCED_CALL(fd, report, real_call) \
    do { \
        iolab_call_t c; \
        if (!iolab_call_begin(&c, fd)) \
            return real_call; \
        int64_t rc = iolab_buffer_sync(c.f, report); \
        if (rc == 0) { \
            rc = (real_call); \
            rc = rc < 0 ? -errno : rc; \
        } \
        return iolab_call_end(&c, IOLAB_OP_OTHER, rc); \
    } while (0)

int ftruncate(int fd, off_t len)
{
    IOLAB_SYNCED_CALL(fd, 1, IOLAB_REAL(ftruncate)(fd, len));
}

int ftruncate64(int fd, off_t len)
{
    return ftruncate(fd, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    IOLAB_SYNCED_CALL(fd, 1, IOLAB_REAL(fallocate)(fd, mode, off, len));
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    /* returns the error number instead of setting errno */
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(posix_fallocate)(fd, off, len);
    int rc = iolab_buffer_sync(c.f, 1);
    if (rc == 0)
        rc = -IOLAB_REAL(posix_fallocate)(fd, off, len);
    iolab_call_end(&c, IOLAB_OP_OTHER, 0);
    return -rc;
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
    return fallocate(fd, mode, off, len);
}

int posix_fallocate64(int fd, off_t off, off_t len)
{
    return posix_fallocate(fd, off, len);
}

/* fsync: our buffers first (their error is the answer), then the kernel's. */
int fsync(int fd)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(fsync)(fd);
    int64_t rc = iolab_buffer_drain(c.f, 1);
    if (rc == 0)
        rc = IOLAB_REAL(fsync)(fd) == 0 ? 0 : -errno;
    return (int)iolab_call_end(&c, IOLAB_OP_OTHER, rc);
}

int fdatasync(int fd)
{
    iolab_call_t c;
    if (!iolab_call_begin(&c, fd))
        return IOLAB_REAL(fdatasync)(fd);
    int64_t rc = iolab_buffer_drain(c.f, 1);
    if (rc == 0)
        rc = IOLAB_REAL(fdatasync)(fd) == 0 ? 0 : -errno;
    return (int)iolab_call_end(&c, IOLAB_OP_OTHER, rc);
}

int sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
    IOLAB_SYNCED_CALL(fd, 1, IOLAB_REAL(sync_file_range)(fd, off, n, flags));
}

void sync(void)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) {
        int saved = errno;
        iolab_buffer_in_lib = 1;
        iolab_buffer_flush_all();
        iolab_call_leave(saved);
    }
    IOLAB_REAL(sync)();
}

int syncfs(int fd)
{
    IOLAB_PROCESS_THEN(iolab_buffer_flush_all, IOLAB_REAL(syncfs)(fd));
}

int close(int fd)
{
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled)
        return IOLAB_REAL(close)(fd);
    int saved = errno;
    iolab_buffer_in_lib = 1;
    int rc = iolab_buffer_close(fd);
    iolab_call_leave(rc < 0 ? -rc : saved);
    return rc < 0 ? -1 : 0;
}

int close_range(unsigned int first, unsigned int last, int flags)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) {
        int saved = errno;
        iolab_buffer_in_lib = 1;
        unsigned int top = last < IOLAB_BUFFER_MAX_FD ? last : IOLAB_BUFFER_MAX_FD - 1;
        for (unsigned int fd = first; fd <= top; fd++)
            if (flags & CLOSE_RANGE_CLOEXEC)
                iolab_buffer_sync_fd((int)fd);
            else
                iolab_buffer_forget((int)fd);
        iolab_call_leave(saved);
    }
    return IOLAB_REAL(close_range)(first, last, flags);
}

/* Vector and kernel-side copies use the kernel offset: sync first. */
ssize_t readv(int fd, const struct iovec *iov, int n)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(readv)(fd, iov, n));
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(writev)(fd, iov, n));
}

ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(preadv)(fd, iov, n, off));
}

ssize_t preadv64(int fd, const struct iovec *iov, int n, off_t off)
{
    return preadv(fd, iov, n, off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(pwritev)(fd, iov, n, off));
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off_t off)
{
    return pwritev(fd, iov, n, off);
}

ssize_t preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(preadv2)(fd, iov, n, off, flags));
}

ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(pwritev2)(fd, iov, n, off, flags));
}

ssize_t preadv64v2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
    return preadv2(fd, iov, n, off, flags);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
    return pwritev2(fd, iov, n, off, flags);
}

/* Locks: a process that unlocks expects its data to be visible to the next holder. */
int flock(int fd, int op)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(flock)(fd, op));
}

int lockf(int fd, int cmd, off_t len)
{
    IOLAB_SYNC_THEN(fd, IOLAB_REAL(lockf)(fd, cmd, len));
}

int lockf64(int fd, int cmd, off_t len)
{
    return lockf(fd, cmd, len);
}

static void sync_pair(int a, int b)
{
    iolab_buffer_sync_fd(a);
    iolab_buffer_sync_fd(b);
}

ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) {
        int saved = errno;
        iolab_buffer_in_lib = 1;
        sync_pair(out, in);
        iolab_call_leave(saved);
    }
    return IOLAB_REAL(sendfile)(out, in, off, n);
}

ssize_t sendfile64(int out, int in, off_t *off, size_t n)
{
    return sendfile(out, in, off, n);
}

ssize_t copy_file_range(int in, off_t *inoff, int out, off_t *outoff, size_t n,
                        unsigned int flags)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) {
        int saved = errno;
        iolab_buffer_in_lib = 1;
        sync_pair(in, out);
        iolab_call_leave(saved);
    }
    return IOLAB_REAL(copy_file_range)(in, inoff, out, outoff, n, flags);
}

ssize_t splice(int in, off_t *inoff, int out, off_t *outoff, size_t n, unsigned int flags)
{
    if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) {
        int saved = errno;
        iolab_buffer_in_lib = 1;
        sync_pair(in, out);
        iolab_call_leave(saved);
    }
    return IOLAB_REAL(splice)(in, inoff, out, outoff, n, flags);
}

/* A shared writable mapping changes the file behind any read-ahead: stop buffering. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (fd >= 0 && !(flags & MAP_ANONYMOUS)) {
        if ((flags & MAP_SHARED) && (prot & PROT_WRITE))
            IOLAB_DETACH_THEN(fd, IOLAB_REAL(mmap)(addr, len, prot, flags, fd, off));
        IOLAB_SYNC_THEN(fd, IOLAB_REAL(mmap)(addr, len, prot, flags, fd, off));
    }
    return IOLAB_REAL(mmap)(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

/* dup: two descriptors share one offset; keeping one logical offset per descriptor would
 * be wrong, so the original is synced and no longer buffered (the copy never is). */
static int after_dup(int oldfd, int newfd)
{
    int saved = errno;
    iolab_buffer_in_lib = 1;
    iolab_buffer_dup(oldfd, newfd);
    iolab_call_leave(saved);
    return newfd;
}

int dup(int fd)
{
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled)
        return IOLAB_REAL(dup)(fd);
    int r = IOLAB_REAL(dup)(fd);
    return r < 0 ? r : after_dup(fd, r);
}

/* dup2/dup3 close newfd silently: forget it first (its buffers reach the disk). */
static void before_dup2(int oldfd, int newfd)
{
    int saved = errno;
    iolab_buffer_in_lib = 1;
    iolab_buffer_sync_fd(oldfd);
    if (newfd != oldfd)
        iolab_buffer_forget(newfd);
    iolab_call_leave(saved);
}

int dup2(int oldfd, int newfd)
{
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled)
        return IOLAB_REAL(dup2)(oldfd, newfd);
    before_dup2(oldfd, newfd);
    int r = IOLAB_REAL(dup2)(oldfd, newfd);
    return r < 0 || r == oldfd ? r : after_dup(oldfd, r);
}

int dup3(int oldfd, int newfd, int flags)
{
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled)
        return IOLAB_REAL(dup3)(oldfd, newfd, flags);
    before_dup2(oldfd, newfd);
    int r = IOLAB_REAL(dup3)(oldfd, newfd, flags);
    return r < 0 ? r : after_dup(oldfd, r);
}

/* fcntl: flag queries pass; a flag change re-reads O_APPEND; duplication detaches;
 * everything else (locks, leases...) sees the data on disk first. */
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled || cmd == F_GETFD ||
        cmd == F_SETFD || cmd == F_GETFL)
        return real(fd, cmd, arg);
    int saved = errno;
    iolab_buffer_in_lib = 1;
    if (cmd == F_SETFL)
        iolab_buffer_detach(fd);
    else
        iolab_buffer_sync_fd(fd);
    iolab_call_leave(saved);
    int r = real(fd, cmd, arg);
    if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
        after_dup(fd, r);
    return r;
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *); /* int or pointer: libc reads it the same way */
    va_end(ap);
    return fcntl_common(IOLAB_REAL(fcntl), fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(IOLAB_REAL(fcntl64) ? IOLAB_REAL(fcntl64) : IOLAB_REAL(fcntl), fd, cmd,
                        arg);
}
