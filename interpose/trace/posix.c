/* libiolab-trace: POSIX wrappers and the POSIX module's counters (Darshan semantics).
 *
 * A record is per file (not per descriptor): like Darshan, every descriptor of a file shares
 * its offset and last-byte state, and an open resets them. Only regular files and block
 * devices are counted (checked once per path with fstat); pipes, sockets and ttys pass through.
 * The stat family and rename are in posix_meta.c.
 */
#include "iolab_wrap.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/close_range.h>
#include <sys/mman.h>
#include <unistd.h>

#define IOLAB_SYM(ret, name, params) ret(*iolab_real_##name) params = NULL;
#include "iolab_trace_symbols.def"
#undef IOLAB_SYM

void iolab_resolve_all(void)
{
#define IOLAB_SYM(ret, name, params) (void)IOLAB_REAL(name);
#include "iolab_trace_symbols.def"
#undef IOLAB_SYM
}

#define C(r, n) ((r)->c[IOLAB_POSIX_##n])
#define F(r, n) ((r)->f[IOLAB_POSIX_F_##n])

/* ---- cwd cache (getcwd is a system call; chdir/fchdir invalidate it) ---- */

static pthread_mutex_t cwd_lock = PTHREAD_MUTEX_INITIALIZER;
static char cwd_cache[PATH_MAX];
static int cwd_valid = 0;

static int cwd_get(char *out, size_t len)
{
    int ok = 0;
    pthread_mutex_lock(&cwd_lock);
    if (!cwd_valid && getcwd(cwd_cache, sizeof cwd_cache))
        cwd_valid = 1;
    if (cwd_valid && strlen(cwd_cache) < len) {
        strcpy(out, cwd_cache);
        ok = 1;
    }
    pthread_mutex_unlock(&cwd_lock);
    return ok;
}

/* Bumped at every chdir: a relative path remembered before means another file now. */
static _Atomic unsigned cwd_generation = 0;

static void cwd_forget(void)
{
    pthread_mutex_lock(&cwd_lock);
    cwd_valid = 0;
    cwd_generation++;
    pthread_mutex_unlock(&cwd_lock);
}

/* The last path this thread opened or stat'ed as given by the program, and its record: a
 * program re-opening one file (100,000 open/close) skips the path resolution, the hash and
 * the record lookup. Records never move or go away, so the pointer stays right; the cwd
 * generation guards relative paths, and paths relative to another dirfd are not kept. */
#define LAST_PATH_MAX 256
static __thread char last_path[LAST_PATH_MAX] __attribute__((tls_model("initial-exec")));
static __thread iolab_rec_t *last_rec __attribute__((tls_model("initial-exec")));
static __thread unsigned last_gen __attribute__((tls_model("initial-exec")));
/* Set while last_put writes: a signal handler's open() on this thread then neither reads a
 * half-written entry nor writes one under it. */
static __thread int last_busy __attribute__((tls_model("initial-exec")));

static inline iolab_rec_t *last_get(int dirfd, const char *path)
{
    if (last_rec && !last_busy && (dirfd == AT_FDCWD || path[0] == '/') &&
        last_gen == cwd_generation && strcmp(path, last_path) == 0)
        return last_rec;
    return NULL;
}

static inline void last_put(int dirfd, const char *path, iolab_rec_t *r, unsigned gen)
{
    size_t n = strlen(path);
    if (!r || last_busy || n >= LAST_PATH_MAX || !(dirfd == AT_FDCWD || path[0] == '/'))
        return;
    last_busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    memcpy(last_path, path, n + 1);
    last_gen = gen;
    last_rec = r;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    last_busy = 0;
}

void iolab_posix_after_fork(void)
{
    pthread_mutex_init(&cwd_lock, NULL); /* another thread may have held it at fork */
    cwd_valid = 0;
}

int iolab_posix_abspath(int dirfd, const char *path, char *out, size_t len)
{
    char dir[PATH_MAX];
    if (!path || !*path)
        return -1;
    if (path[0] != '/') {
        if (dirfd == AT_FDCWD) {
            if (!cwd_get(dir, sizeof dir))
                return -1;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            ssize_t n = readlink(link, dir, sizeof dir - 1);
            if (n <= 0)
                return -1;
            dir[n] = '\0';
        }
        return iolab_core_abspath(dir, path, out, len);
    }
    return iolab_core_abspath(NULL, path, out, len);
}

/* ---- recording ---- */

static inline int is_file(mode_t m) { return S_ISREG(m) || S_ISBLK(m); }

iolab_rec_t *iolab_posix_file(int dirfd, const char *path, int fd, const struct stat *st)
{
    char abs[PATH_MAX];
    struct stat sb;
    if (!path || !*path)
        return NULL;
    iolab_rec_t *r = last_get(dirfd, path);
    if (r)
        return r;
    unsigned gen = cwd_generation; /* before resolving: a chdir meanwhile voids the entry */
    if (iolab_posix_abspath(dirfd, path, abs, sizeof abs) != 0 || iolab_core_excluded(abs))
        return NULL;
    r = iolab_core_find(IOLAB_MOD_POSIX, abs);
    if (r) {
        last_put(dirfd, path, r, gen);
        return r;
    }
    if (!st) {
        if (IOLAB_REAL(fstat)(fd, &sb) != 0)
            return NULL;
        st = &sb;
    }
    if (!is_file(st->st_mode))
        return NULL;
    r = iolab_core_record(IOLAB_MOD_POSIX, abs);
    if (r) {
        iolab_rec_lock(r);
        C(r, FILE_ALIGNMENT) = st->st_blksize;
        iolab_rec_unlock(r);
        last_put(dirfd, path, r, gen);
    }
    return r;
}

static inline void meta_time(iolab_rec_t *r, double t0, double t1) { iolab_posix_meta_time(r, t0, t1); }

static void posix_open(int dirfd, const char *path, int flags, int mode, int fd, double t0, double t1)
{
    if (fd < 0)
        return;
    iolab_rec_t *r = iolab_posix_file(dirfd, path, fd, NULL);
    iolab_core_fd_set(fd, r ? iolab_core_rec_index(r) : -1);
    if (!r)
        return;
    struct stat sb;
    int64_t start = 0;
    if ((flags & O_APPEND) && IOLAB_REAL(fstat)(fd, &sb) == 0)
        start = sb.st_size; /* appends go to the end, not to offset 0 */
    iolab_rec_lock(r);
    if (mode)
        C(r, MODE) = mode;
    r->offset = start;
    r->last_byte_written = r->last_byte_read = 0;
    C(r, OPENS)++;
    iolab_stamp(&F(r, OPEN_START_TIMESTAMP), &F(r, OPEN_END_TIMESTAMP), t0, t1);
    meta_time(r, t0, t1);
    iolab_rec_unlock(r);
}

static void posix_dup(int oldfd, int newfd, double t0, double t1)
{
    if (newfd < 0)
        return;
    iolab_rec_t *r = iolab_core_fd_rec(oldfd);
    iolab_core_fd_set(newfd, r ? iolab_core_rec_index(r) : -1);
    if (!r)
        return;
    iolab_rec_lock(r);
    C(r, OPENS)++;
    C(r, DUPS)++;
    iolab_stamp(&F(r, OPEN_START_TIMESTAMP), &F(r, OPEN_END_TIMESTAMP), t0, t1);
    meta_time(r, t0, t1);
    iolab_rec_unlock(r);
}

void iolab_posix_refopen(int fd, const char *abspath, int counter, double t0, double t1)
{
    struct stat sb;
    iolab_rec_t *r = iolab_core_find(IOLAB_MOD_POSIX, abspath);
    if (!r && IOLAB_REAL(fstat)(fd, &sb) == 0 && is_file(sb.st_mode)) {
        r = iolab_core_record(IOLAB_MOD_POSIX, abspath);
        if (r) {
            iolab_rec_lock(r);
            C(r, FILE_ALIGNMENT) = sb.st_blksize;
            iolab_rec_unlock(r);
        }
    }
    const int fresh = iolab_core_fd_get(fd) != (r ? iolab_core_rec_index(r) : -1);
    iolab_core_fd_set(fd, r ? iolab_core_rec_index(r) : -1);
    if (!r)
        return;
    /* A descriptor new to the record (fileno of a stream just opened with fopen: libstdc++'s
     * streams do that) starts where the descriptor is, not where the record's previous one
     * stopped: else reads of a file written and closed before seem to start past its end
     * (Darshan 3.5 keeps the old offset). */
    const int64_t pos = fresh ? (int64_t)IOLAB_REAL(lseek)(fd, 0, SEEK_CUR) : -1;
    iolab_rec_lock(r);
    if (pos >= 0)
        r->offset = pos;
    C(r, OPENS)++;
    r->c[counter]++;
    iolab_stamp(&F(r, OPEN_START_TIMESTAMP), &F(r, OPEN_END_TIMESTAMP), t0, t1);
    meta_time(r, t0, t1);
    iolab_rec_unlock(r);
}

static void posix_close(int fd, int ret, double t0, double t1)
{
    iolab_rec_t *r = iolab_core_fd_rec(fd);
    (void)ret; /* the descriptor is gone even when close reports an error */
    iolab_core_fd_set(fd, -1);
    if (!r)
        return;
    iolab_rec_lock(r);
    r->last_byte_written = r->last_byte_read = 0;
    iolab_stamp(&F(r, CLOSE_START_TIMESTAMP), &F(r, CLOSE_END_TIMESTAMP), t0, t1);
    meta_time(r, t0, t1);
    iolab_rec_unlock(r);
}

/* One read (write = 0) or write of ret bytes to r (the record of the call's descriptor,
 * looked up once by the wrapper); off < 0: at the current offset. Inlined into each wrapper
 * with `write` a constant, so every "read or write?" choice below is made at compile time. */
static inline __attribute__((always_inline)) void posix_io(iolab_rec_t *r, const int write,
                                                           int64_t off, ssize_t ret, int aligned,
                                                           double t0, double t1)
{
    if (ret < 0)
        return;
    int64_t n = ret;
    const int locked = iolab_rec_lock_io(r);
    int64_t this_off = off >= 0 ? off : r->offset;
    int64_t *last = write ? &r->last_byte_written : &r->last_byte_read;
    const int64_t prev = *last;
    int64_t stride = 0;
    const int consec = this_off == prev + 1;
    if (__builtin_expect(consec, 1)) { /* the common case: sequential too, stride 0 */
        r->c[write ? IOLAB_POSIX_SEQ_WRITES : IOLAB_POSIX_SEQ_READS]++;
        r->c[write ? IOLAB_POSIX_CONSEC_WRITES : IOLAB_POSIX_CONSEC_READS]++;
    } else if (this_off > prev) {
        r->c[write ? IOLAB_POSIX_SEQ_WRITES : IOLAB_POSIX_SEQ_READS]++;
        if (prev != 0)
            stride = this_off - prev - 1; /* > 0 */
    }
    *last = this_off + n - 1;
    r->offset = this_off + n;
    int64_t *maxb = write ? &C(r, MAX_BYTE_WRITTEN) : &C(r, MAX_BYTE_READ);
    if (__builtin_expect(*maxb < this_off + n - 1, 1)) /* appending: the usual case */
        *maxb = this_off + n - 1;
    r->c[write ? IOLAB_POSIX_BYTES_WRITTEN : IOLAB_POSIX_BYTES_READ] += n;
    r->c[write ? IOLAB_POSIX_WRITES : IOLAB_POSIX_READS]++;
    r->c[(write ? IOLAB_POSIX_SIZE_WRITE_0_100 : IOLAB_POSIX_SIZE_READ_0_100) + iolab_size_bin(n)]++;
    iolab_cval_add(&r->access, n, &C(r, ACCESS1_ACCESS), &C(r, ACCESS1_COUNT));
    if (__builtin_expect(consec, 1)) /* a constant 0: the count is one slot check */
        iolab_cval_add(&r->stride, 0, &C(r, STRIDE1_STRIDE), &C(r, STRIDE1_COUNT));
    else
        iolab_cval_add(&r->stride, stride, &C(r, STRIDE1_STRIDE), &C(r, STRIDE1_COUNT));
    if (!aligned)
        C(r, MEM_NOT_ALIGNED)++;
    if (__builtin_expect(C(r, FILE_ALIGNMENT) > 0, 1) /* a regular file's block size */
        && !iolab_is_multiple((uint64_t)this_off, (uint64_t)C(r, FILE_ALIGNMENT)))
        C(r, FILE_NOT_ALIGNED)++;
    if (r->last_io == (write ? IOLAB_IO_READ : IOLAB_IO_WRITE))
        C(r, RW_SWITCHES)++;
    r->last_io = write ? IOLAB_IO_WRITE : IOLAB_IO_READ;
    double el = t1 - t0;
    if (write) {
        iolab_stamp(&F(r, WRITE_START_TIMESTAMP), &F(r, WRITE_END_TIMESTAMP), t0, t1);
        if (F(r, MAX_WRITE_TIME) < el) {
            F(r, MAX_WRITE_TIME) = el;
            C(r, MAX_WRITE_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, WRITE_TIME), t0, t1, &r->last_write_end);
    } else {
        iolab_stamp(&F(r, READ_START_TIMESTAMP), &F(r, READ_END_TIMESTAMP), t0, t1);
        if (F(r, MAX_READ_TIME) < el) {
            F(r, MAX_READ_TIME) = el;
            C(r, MAX_READ_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, READ_TIME), t0, t1, &r->last_read_end);
    }
    iolab_rec_unlock_if(r, locked);
    if (iolab_core_tracing)
        iolab_core_trace_add(r, write, this_off, n, t0, t1);
}

static inline int buf_aligned(const void *p)
{
    return iolab_is_multiple((uintptr_t)p, iolab_core_mem_align);
}

void iolab_posix_io_done(iolab_rec_t *r, int write, int64_t off, ssize_t ret, const void *buf,
                         double t0, double t1)
{
    if (write)
        posix_io(r, 1, off, ret, buf_aligned(buf), t0, t1);
    else
        posix_io(r, 0, off, ret, buf_aligned(buf), t0, t1);
}

static inline int iov_aligned(const struct iovec *iov, int cnt)
{
    for (int i = 0; i < cnt; i++)
        if (!buf_aligned(iov[i].iov_base))
            return 0;
    return 1;
}

static void posix_seek(int fd, int64_t ret, double t0, double t1)
{
    if (ret < 0)
        return;
    iolab_rec_t *r = iolab_core_fd_rec(fd);
    if (!r)
        return;
    iolab_rec_lock(r);
    r->offset = ret;
    C(r, SEEKS)++;
    meta_time(r, t0, t1);
    iolab_rec_unlock(r);
}

static void posix_sync(int fd, int ret, int data_only, double t0, double t1)
{
    if (ret < 0)
        return;
    iolab_rec_t *r = iolab_core_fd_rec(fd);
    if (!r)
        return;
    iolab_rec_lock(r);
    if (data_only)
        C(r, FDSYNCS)++;
    else
        C(r, FSYNCS)++;
    iolab_time_add(&F(r, WRITE_TIME), t0, t1, &r->last_write_end);
    iolab_rec_unlock(r);
}

void iolab_posix_counter_fd(int fd, int ret, int counter, double t0, double t1)
{
    if (ret < 0)
        return;
    iolab_rec_t *r = iolab_core_fd_rec(fd);
    if (!r)
        return;
    iolab_rec_lock(r);
    r->c[counter]++;
    if (counter == IOLAB_POSIX_STATS)
        meta_time(r, t0, t1);
    iolab_rec_unlock(r);
}

static void forget_fds(int ret, const int *fds, int n)
{
    if (ret < 0)
        return;
    for (int i = 0; i < n; i++)
        iolab_core_fd_set(fds[i], -1);
}

/* ---- wrappers: open, close, descriptors ---- */

#define OPEN_MODE(flags)                                                                     \
    int mode = 0;                                                                            \
    if ((flags) & (O_CREAT | __O_TMPFILE)) {                                                 \
        va_list ap;                                                                          \
        va_start(ap, flags);                                                                 \
        mode = va_arg(ap, int);                                                              \
        va_end(ap);                                                                          \
    }

int open(const char *path, int flags, ...)
{
    OPEN_MODE(flags);
    IOLAB_WRAP(int, open, (path, flags, mode), 1,
               posix_open(AT_FDCWD, path, flags, mode, ret, t0_, t1_));
}

int open64(const char *path, int flags, ...)
{
    OPEN_MODE(flags);
    IOLAB_WRAP(int, open64, (path, flags, mode), 1,
               posix_open(AT_FDCWD, path, flags, mode, ret, t0_, t1_));
}

int __open_2(const char *path, int flags)
{
    IOLAB_WRAP(int, __open_2, (path, flags), 1, posix_open(AT_FDCWD, path, flags, 0, ret, t0_, t1_));
}

int __open64_2(const char *path, int flags)
{
    IOLAB_WRAP(int, __open64_2, (path, flags), 1,
               posix_open(AT_FDCWD, path, flags, 0, ret, t0_, t1_));
}

int openat(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags);
    IOLAB_WRAP(int, openat, (dirfd, path, flags, mode), 1,
               posix_open(dirfd, path, flags, mode, ret, t0_, t1_));
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags);
    IOLAB_WRAP(int, openat64, (dirfd, path, flags, mode), 1,
               posix_open(dirfd, path, flags, mode, ret, t0_, t1_));
}

int __openat_2(int dirfd, const char *path, int flags)
{
    IOLAB_WRAP(int, __openat_2, (dirfd, path, flags), 1,
               posix_open(dirfd, path, flags, 0, ret, t0_, t1_));
}

int __openat64_2(int dirfd, const char *path, int flags)
{
    IOLAB_WRAP(int, __openat64_2, (dirfd, path, flags), 1,
               posix_open(dirfd, path, flags, 0, ret, t0_, t1_));
}

int creat(const char *path, mode_t mode)
{
    IOLAB_WRAP(int, creat, (path, mode), 1,
               posix_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, (int)mode, ret, t0_, t1_));
}

int creat64(const char *path, mode_t mode)
{
    IOLAB_WRAP(int, creat64, (path, mode), 1,
               posix_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, (int)mode, ret, t0_, t1_));
}

int close(int fd)
{
    IOLAB_WRAP(int, close, (fd), iolab_core_fd_get(fd) >= 0, posix_close(fd, ret, t0_, t1_));
}

int dup(int fd) { IOLAB_WRAP(int, dup, (fd), 1, posix_dup(fd, ret, t0_, t1_)); }

int dup2(int fd, int fd2)
{
    IOLAB_WRAP(int, dup2, (fd, fd2), 1, if (ret >= 0 && fd != fd2) posix_dup(fd, ret, t0_, t1_));
}

int dup3(int fd, int fd2, int flags)
{
    IOLAB_WRAP(int, dup3, (fd, fd2, flags), 1, posix_dup(fd, ret, t0_, t1_));
}

static inline int fcntl_dups(int cmd) { return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC; }

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *); /* every fcntl argument is passed in one register */
    va_end(ap);
    IOLAB_WRAP(int, fcntl, (fd, cmd, arg), fcntl_dups(cmd), posix_dup(fd, ret, t0_, t1_));
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    IOLAB_WRAP(int, fcntl64, (fd, cmd, arg), fcntl_dups(cmd), posix_dup(fd, ret, t0_, t1_));
}

int pipe(int fds[2]) { IOLAB_WRAP(int, pipe, (fds), 1, forget_fds(ret, fds, 2)); }

int pipe2(int fds[2], int flags) { IOLAB_WRAP(int, pipe2, (fds, flags), 1, forget_fds(ret, fds, 2)); }

int socket(int domain, int type, int proto)
{
    IOLAB_WRAP(int, socket, (domain, type, proto), 1, forget_fds(0, &ret, 1));
}

int socketpair(int domain, int type, int proto, int fds[2])
{
    IOLAB_WRAP(int, socketpair, (domain, type, proto, fds), 1, forget_fds(ret, fds, 2));
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    IOLAB_WRAP(int, accept, (fd, addr, len), 1, forget_fds(0, &ret, 1));
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    IOLAB_WRAP(int, accept4, (fd, addr, len, flags), 1, forget_fds(0, &ret, 1));
}

/* Descriptors made without open(): never files we count, whatever number they reuse. */
int eventfd(unsigned int count, int flags)
{
    IOLAB_WRAP(int, eventfd, (count, flags), 1, forget_fds(0, &ret, 1));
}

int epoll_create(int size) { IOLAB_WRAP(int, epoll_create, (size), 1, forget_fds(0, &ret, 1)); }

int epoll_create1(int flags)
{
    IOLAB_WRAP(int, epoll_create1, (flags), 1, forget_fds(0, &ret, 1));
}

int timerfd_create(int clockid, int flags)
{
    IOLAB_WRAP(int, timerfd_create, (clockid, flags), 1, forget_fds(0, &ret, 1));
}

int signalfd(int fd, const sigset_t *mask, int flags)
{
    IOLAB_WRAP(int, signalfd, (fd, mask, flags), 1, forget_fds(0, &ret, 1));
}

int memfd_create(const char *name, unsigned int flags)
{
    IOLAB_WRAP(int, memfd_create, (name, flags), 1, forget_fds(0, &ret, 1));
}

int inotify_init(void) { IOLAB_WRAP(int, inotify_init, (), 1, forget_fds(0, &ret, 1)); }

int inotify_init1(int flags)
{
    IOLAB_WRAP(int, inotify_init1, (flags), 1, forget_fds(0, &ret, 1));
}

/* close_range/closefrom close descriptors without close(): forget them all. */
int close_range(unsigned int first, unsigned int last, int flags)
{
    IOLAB_WRAP(int, close_range, (first, last, flags), 1,
               if (ret == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) iolab_core_fd_forget(first, last));
}

void closefrom(int lowfd)
{
    IOLAB_WRAP_VOID(closefrom, (lowfd), 1,
                    iolab_core_fd_forget(lowfd < 0 ? 0 : (unsigned)lowfd, UINT_MAX));
}

int chdir(const char *path) { IOLAB_WRAP(int, chdir, (path), 1, cwd_forget()); }

int fchdir(int fd) { IOLAB_WRAP(int, fchdir, (fd), 1, cwd_forget()); }

/* ---- wrappers: data ---- */

#define TRACED(fd) (iolab_core_fd_get(fd) >= 0)
/* The data wrappers look the descriptor's record up once, before the call. */
#define IO_REC(fd) iolab_rec_t *r_ = iolab_core_fd_rec(fd)

ssize_t read(int fd, void *buf, size_t n)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, read, (fd, buf, n), r_,
               posix_io(r_, 0, -1, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, __read_chk, (fd, buf, n, buflen), r_,
               posix_io(r_, 0, -1, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t write(int fd, const void *buf, size_t n)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, write, (fd, buf, n), r_,
               posix_io(r_, 1, -1, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pread, (fd, buf, n, off), r_,
               posix_io(r_, 0, off, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pread64, (fd, buf, n, off), r_,
               posix_io(r_, 0, off, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, __pread_chk, (fd, buf, n, off, buflen), r_,
               posix_io(r_, 0, off, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, __pread64_chk, (fd, buf, n, off, buflen), r_,
               posix_io(r_, 0, off, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pwrite, (fd, buf, n, off), r_,
               posix_io(r_, 1, off, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pwrite64, (fd, buf, n, off), r_,
               posix_io(r_, 1, off, ret, buf_aligned(buf), t0_, t1_));
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, readv, (fd, iov, cnt), r_,
               posix_io(r_, 0, -1, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, writev, (fd, iov, cnt), r_,
               posix_io(r_, 1, -1, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, preadv, (fd, iov, cnt, off), r_,
               posix_io(r_, 0, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, preadv64, (fd, iov, cnt, off), r_,
               posix_io(r_, 0, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pwritev, (fd, iov, cnt, off), r_,
               posix_io(r_, 1, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pwritev64, (fd, iov, cnt, off), r_,
               posix_io(r_, 1, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

/* preadv2/pwritev2: offset -1 means "at the current offset". */
ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, preadv2, (fd, iov, cnt, off, flags), r_,
               posix_io(r_, 0, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, preadv64v2, (fd, iov, cnt, off, flags), r_,
               posix_io(r_, 0, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pwritev2, (fd, iov, cnt, off, flags), r_,
               posix_io(r_, 1, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    IO_REC(fd);
    IOLAB_WRAP_IO(ssize_t, pwritev64v2, (fd, iov, cnt, off, flags), r_,
               posix_io(r_, 1, off, ret, ret < 0 || iov_aligned(iov, cnt), t0_, t1_));
}

off_t lseek(int fd, off_t off, int whence)
{
    IOLAB_WRAP(off_t, lseek, (fd, off, whence), TRACED(fd), posix_seek(fd, ret, t0_, t1_));
}

off64_t lseek64(int fd, off64_t off, int whence)
{
    IOLAB_WRAP(off64_t, lseek64, (fd, off, whence), TRACED(fd), posix_seek(fd, ret, t0_, t1_));
}

int fsync(int fd) { IOLAB_WRAP(int, fsync, (fd), TRACED(fd), posix_sync(fd, ret, 0, t0_, t1_)); }

int fdatasync(int fd)
{
    IOLAB_WRAP(int, fdatasync, (fd), TRACED(fd), posix_sync(fd, ret, 1, t0_, t1_));
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    IOLAB_WRAP(void *, mmap, (addr, len, prot, flags, fd, off), TRACED(fd),
               iolab_posix_counter_fd(fd, ret == MAP_FAILED ? -1 : 0, IOLAB_POSIX_MMAPS, t0_, t1_));
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    IOLAB_WRAP(void *, mmap64, (addr, len, prot, flags, fd, off), TRACED(fd),
               iolab_posix_counter_fd(fd, ret == MAP_FAILED ? -1 : 0, IOLAB_POSIX_MMAPS, t0_, t1_));
}

/* ---- process end without exit handlers ---- */

void _exit(int status)
{
    iolab_trace_flush("_exit", 0);
    IOLAB_REAL(_exit)(status);
    __builtin_unreachable();
}

void _Exit(int status)
{
    iolab_trace_flush("_exit", 0);
    IOLAB_REAL(_Exit)(status);
    __builtin_unreachable();
}
