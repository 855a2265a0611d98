/* libiolab-trace: POSIX metadata calls on paths: the stat family and rename.
 *
 * glibc >= 2.33 reaches the kernel's stat through fstatat/statx and exports stat, lstat,
 * fstat and fstatat as real symbols: every one is intercepted (Darshan 3.5 misses them).
 * rename follows Darshan 3.4+: POSIX_RENAME_SOURCES on the record of the old path (only
 * when it has one), POSIX_RENAME_TARGETS and POSIX_RENAMED_FROM on the new path's.
 */
#include "iolab_wrap.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>

#define C(r, n) ((r)->c[IOLAB_POSIX_##n])

static inline int is_file(mode_t m) { return S_ISREG(m) || S_ISBLK(m); }

#define TRACED(fd) (iolab_core_fd_get(fd) >= 0)

/* stat by path: counted when the path is a regular file outside the system folders. */
static void posix_stat(int dirfd, const char *path, int ret, mode_t mode, blksize_t blk,
                       double t0, double t1)
{
    if (ret != 0 || !is_file(mode))
        return;
    struct stat sb;
    memset(&sb, 0, sizeof sb);
    sb.st_mode = mode;
    sb.st_blksize = blk;
    iolab_rec_t *r = iolab_posix_file(dirfd, path, -1, &sb);
    if (!r)
        return;
    iolab_rec_lock(r);
    C(r, STATS)++;
    iolab_posix_meta_time(r, t0, t1);
    iolab_rec_unlock(r);
}

/* ---- wrappers: stat family ---- */

/* buf is read only after a success (a program may pass NULL and expect EFAULT). */
#define STAT_PATH(dirfd, path, buf)                                                         \
    do {                                                                                     \
        if (ret == 0)                                                                        \
            posix_stat(dirfd, path, ret, (buf)->st_mode, (buf)->st_blksize, t0_, t1_);       \
    } while (0)
#define STAT_FD(fd) iolab_posix_counter_fd(fd, ret, IOLAB_POSIX_STATS, t0_, t1_)

int stat(const char *path, struct stat *buf)
{
    IOLAB_WRAP(int, stat, (path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int stat64(const char *path, struct stat64 *buf)
{
    IOLAB_WRAP(int, stat64, (path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int lstat(const char *path, struct stat *buf)
{
    IOLAB_WRAP(int, lstat, (path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int lstat64(const char *path, struct stat64 *buf)
{
    IOLAB_WRAP(int, lstat64, (path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int fstat(int fd, struct stat *buf) { IOLAB_WRAP(int, fstat, (fd, buf), TRACED(fd), STAT_FD(fd)); }

int fstat64(int fd, struct stat64 *buf)
{
    IOLAB_WRAP(int, fstat64, (fd, buf), TRACED(fd), STAT_FD(fd));
}

/* fstatat(fd, "", buf, AT_EMPTY_PATH) is fstat(fd); recent kernels also accept NULL. */
static inline int empty_path(const char *p) { return (uintptr_t)p == 0 || p[0] == '\0'; }

#define STAT_AT(dirfd, path, flags, buf)                                                    \
    do {                                                                                     \
        if (((flags) & AT_EMPTY_PATH) && empty_path(path))                                     \
            STAT_FD(dirfd);                                                                  \
        else                                                                                 \
            STAT_PATH(dirfd, path, buf);                                                     \
    } while (0)

int fstatat(int dirfd, const char *path, struct stat *buf, int flags)
{
    IOLAB_WRAP(int, fstatat, (dirfd, path, buf, flags), 1, STAT_AT(dirfd, path, flags, buf));
}

int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags)
{
    IOLAB_WRAP(int, fstatat64, (dirfd, path, buf, flags), 1, STAT_AT(dirfd, path, flags, buf));
}

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf)
{
    IOLAB_WRAP(int, statx, (dirfd, path, flags, mask, buf), 1, do {
        if ((flags & AT_EMPTY_PATH) && empty_path(path))
            STAT_FD(dirfd);
        else if (ret == 0)
            posix_stat(dirfd, path, ret, buf->stx_mode, buf->stx_blksize, t0_, t1_);
    } while (0));
}

int __xstat(int ver, const char *path, struct stat *buf)
{
    IOLAB_WRAP(int, __xstat, (ver, path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int __xstat64(int ver, const char *path, struct stat64 *buf)
{
    IOLAB_WRAP(int, __xstat64, (ver, path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int __lxstat(int ver, const char *path, struct stat *buf)
{
    IOLAB_WRAP(int, __lxstat, (ver, path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int __lxstat64(int ver, const char *path, struct stat64 *buf)
{
    IOLAB_WRAP(int, __lxstat64, (ver, path, buf), 1, STAT_PATH(AT_FDCWD, path, buf));
}

int __fxstat(int ver, int fd, struct stat *buf)
{
    IOLAB_WRAP(int, __fxstat, (ver, fd, buf), TRACED(fd), STAT_FD(fd));
}

int __fxstat64(int ver, int fd, struct stat64 *buf)
{
    IOLAB_WRAP(int, __fxstat64, (ver, fd, buf), TRACED(fd), STAT_FD(fd));
}

/* ---- rename ---- */

/* A successful rename of a traced file: the source record counts it and its time, the
 * target record (made when new) counts it and remembers where it came from. */
static void posix_rename(int olddir, const char *oldpath, int newdir, const char *newpath,
                         int ret, double t0, double t1)
{
    char abs[PATH_MAX];
    struct stat sb;
    if (ret != 0 || iolab_posix_abspath(olddir, oldpath, abs, sizeof abs) != 0)
        return;
    iolab_rec_t *src = iolab_core_find(IOLAB_MOD_POSIX, abs);
    if (!src)
        return;
    iolab_rec_lock(src);
    C(src, RENAME_SOURCES)++;
    iolab_posix_meta_time(src, t0, t1);
    int64_t from = (int64_t)src->id;
    iolab_rec_unlock(src);
    if (iolab_posix_abspath(newdir, newpath, abs, sizeof abs) != 0 || iolab_core_excluded(abs))
        return;
    iolab_rec_t *dst = iolab_core_find(IOLAB_MOD_POSIX, abs);
    if (!dst && IOLAB_REAL(stat)(abs, &sb) == 0 && is_file(sb.st_mode)) {
        dst = iolab_core_record(IOLAB_MOD_POSIX, abs);
        if (dst) {
            iolab_rec_lock(dst);
            C(dst, FILE_ALIGNMENT) = sb.st_blksize;
            iolab_rec_unlock(dst);
        }
    }
    if (!dst)
        return;
    iolab_rec_lock(dst);
    C(dst, RENAME_TARGETS)++;
    if (C(dst, RENAMED_FROM) == 0)
        C(dst, RENAMED_FROM) = from;
    iolab_rec_unlock(dst);
}

int rename(const char *oldpath, const char *newpath)
{
    IOLAB_WRAP(int, rename, (oldpath, newpath), 1,
               posix_rename(AT_FDCWD, oldpath, AT_FDCWD, newpath, ret, t0_, t1_));
}

int renameat(int olddir, const char *oldpath, int newdir, const char *newpath)
{
    IOLAB_WRAP(int, renameat, (olddir, oldpath, newdir, newpath), 1,
               posix_rename(olddir, oldpath, newdir, newpath, ret, t0_, t1_));
}

int renameat2(int olddir, const char *oldpath, int newdir, const char *newpath, unsigned flags)
{
    IOLAB_WRAP(int, renameat2, (olddir, oldpath, newdir, newpath, flags), 1,
               posix_rename(olddir, oldpath, newdir, newpath, ret, t0_, t1_));
}
