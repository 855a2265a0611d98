/* iolab-bench: the metadata calls of the posix and null backends (iolab_md_calls_t in
 * backend.h), kept apart from their data paths: posix makes the system calls, null makes
 * none and succeeds, as IOR's DUMMY backend does for mdtest -a DUMMY. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

static int ok_or_errno(int rc) { return rc != 0 ? errno : 0; }

static int posix_mkdir(const char *path, mode_t mode) { return ok_or_errno(mkdir(path, mode)); }
static int posix_rmdir(const char *path) { return ok_or_errno(rmdir(path)); }
static int posix_stat(const char *path, struct stat *st) { return ok_or_errno(stat(path, st)); }
static int posix_rename(const char *a, const char *b) { return ok_or_errno(rename(a, b)); }
static int posix_unlink(const char *path) { return ok_or_errno(unlink(path)); }
static int posix_mknod(const char *path, mode_t mode) { return ok_or_errno(mknod(path, mode, 0)); }
static int posix_fsync(int fd) { return ok_or_errno(fsync(fd)); }
static int posix_close(int fd) { return ok_or_errno(close(fd)); }
static void posix_sync(void) { sync(); }

static int posix_open(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags, mode);
    return fd < 0 ? -errno : fd;
}

static int64_t posix_read(int fd, void *buf, size_t len)
{
    ssize_t n = read(fd, buf, len);
    return n < 0 ? -errno : (int64_t)n;
}

static int64_t posix_write(int fd, const void *buf, size_t len)
{
    ssize_t n = write(fd, buf, len);
    return n < 0 ? -errno : (int64_t)n;
}

const iolab_md_calls_t iolab_md_posix = {
    posix_mkdir, posix_rmdir, posix_stat, posix_rename, posix_unlink, posix_mknod,
    posix_open, posix_read, posix_write, posix_fsync, posix_close, posix_sync};

static int null_path(const char *path) { (void)path; return 0; }
static int null_path_mode(const char *path, mode_t mode) { (void)path, (void)mode; return 0; }
static int null_rename(const char *a, const char *b) { (void)a, (void)b; return 0; }
static int null_fd(int fd) { (void)fd; return 0; }
static void null_sync(void) {}

static int null_stat(const char *path, struct stat *st)
{
    (void)path;
    memset(st, 0, sizeof *st);  /* DUMMY_stat returns 0 and fills nothing */
    return 0;
}

static int null_open(const char *path, int flags, mode_t mode)
{
    (void)path, (void)flags, (void)mode;
    return 0;
}

static int64_t null_read(int fd, void *buf, size_t len)
{
    (void)fd, (void)buf;
    return (int64_t)len;
}

static int64_t null_write(int fd, const void *buf, size_t len)
{
    (void)fd, (void)buf;
    return (int64_t)len;
}

const iolab_md_calls_t iolab_md_null = {
    null_path_mode, null_path, null_stat, null_rename, null_path, null_path_mode, null_open,
    null_read, null_write, null_fd, null_fd, null_sync};
