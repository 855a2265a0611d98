/* STDIO on matching files.  glibc's FILE writes with its internal write(), which no
 * preloaded library can interpose, so fopen() on a matching path returns a stream built
 * with fopencookie() whose read/write/seek/close go through our descriptor wrappers, so it
 * gets the same large write-behind and read-ahead buffers as write() and read().  An update
 * stream ("r+", "w+", "a+") is unbuffered at the stdio level: glibc's seek logic for cookie
 * streams differs from the one for files when a buffer holds both read and written data
 * (stale reads after a seek, found by the differential fuzz); with no stdio buffer there is
 * nothing to differ, and our buffers are the large ones anyway.  fileno() still answers the real descriptor (fsync(fileno(fp)) works): we set the
 * stream's _fileno, which glibc's cookie streams leave negative.
 *
 * %stdout / %stderr: the standard streams already exist and other code (C++ iostreams)
 * holds them, so they only get a large fully-buffered stdio buffer when they are regular
 * files; no write-behind there. */
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "wrappers.h"

typedef struct iolab_cookie {
    int fd;
    char *vbuf; /* the stdio buffer we gave the stream, freed at close */
    FILE *fp;
    struct iolab_cookie *next; /* our open streams, for freopen */
} iolab_cookie_t;

static pthread_mutex_t streams_mu = PTHREAD_MUTEX_INITIALIZER;
static iolab_cookie_t *streams;

static void stream_link(iolab_cookie_t *ck)
{
    pthread_mutex_lock(&streams_mu);
    ck->next = streams;
    streams = ck;
    pthread_mutex_unlock(&streams_mu);
}

static void stream_unlink(iolab_cookie_t *ck)
{
    pthread_mutex_lock(&streams_mu);
    for (iolab_cookie_t **p = &streams; *p; p = &(*p)->next)
        if (*p == ck) {
            *p = ck->next;
            break;
        }
    pthread_mutex_unlock(&streams_mu);
}

static iolab_cookie_t *stream_find(FILE *fp)
{
    pthread_mutex_lock(&streams_mu);
    iolab_cookie_t *ck = streams;
    while (ck && ck->fp != fp)
        ck = ck->next;
    pthread_mutex_unlock(&streams_mu);
    return ck;
}

static ssize_t ck_read(void *c, char *buf, size_t n)
{
    return read(((iolab_cookie_t *)c)->fd, buf, n);
}

static ssize_t ck_write(void *c, const char *buf, size_t n)
{
    ssize_t r = write(((iolab_cookie_t *)c)->fd, buf, n);
    return r < 0 ? 0 : r; /* glibc's cookie protocol: a short count flags the error */
}

static int ck_seek(void *c, off64_t *pos, int whence)
{
    off_t r = lseek(((iolab_cookie_t *)c)->fd, *pos, whence);
    if (r < 0)
        return -1;
    *pos = r;
    return 0;
}

static int ck_close(void *c)
{
    iolab_cookie_t *ck = c;
    stream_unlink(ck);
    int r = close(ck->fd);
    free(ck->vbuf);
    free(ck);
    return r;
}

/* fopen's mode -> open flags and the plain mode fopencookie understands; -1 for modes we
 * leave to libc (",ccs=", unknown letters). */
static int mode_flags(const char *mode, char plain[4])
{
    int flags, plus = 0;
    switch (mode[0]) {
    case 'r': flags = 0; break;
    case 'w': flags = O_CREAT | O_TRUNC; break;
    case 'a': flags = O_CREAT | O_APPEND; break;
    default: return -1;
    }
    for (const char *m = mode + 1; *m; m++) {
        switch (*m) {
        case '+': plus = 1; break;
        case 'b': break;
        case 'x': flags |= O_EXCL; break;
        case 'e': flags |= O_CLOEXEC; break;
        default: return -1;
        }
    }
    flags |= plus ? O_RDWR : (mode[0] == 'r' ? O_RDONLY : O_WRONLY);
    plain[0] = mode[0];
    plain[1] = plus ? '+' : '\0';
    plain[2] = '\0';
    return flags;
}

/* The cookie stream over the buffered descriptor fd; NULL (fd closed) on failure. */
static FILE *cookie_stream(int fd, const char *plain)
{
    iolab_cookie_t *ck = calloc(1, sizeof *ck);
    cookie_io_functions_t io = {ck_read, ck_write, ck_seek, ck_close};
    FILE *fp = NULL;
    if (ck) {
        ck->fd = fd;
        fp = fopencookie(ck, plain, io);
    }
    if (!fp) {
        free(ck);
        IOLAB_REAL(close)(fd);
        return NULL;
    }
    fp->_fileno = fd;
    ck->fp = fp;
    stream_link(ck);
    /* Read-only and write-only streams keep the stdio buffer glibc would give a file (so
     * even what _exit() loses from it is the same); update streams ('+') go unbuffered,
     * see the header. */
    struct stat st;
    size_t vsize = BUFSIZ;
    if (IOLAB_REAL(fstat)(fd, &st) == 0 && st.st_blksize > 0 && st.st_blksize < BUFSIZ)
        vsize = (size_t)st.st_blksize;
    ck->vbuf = plain[1] == '+' ? NULL : malloc(vsize);
    if (ck->vbuf)
        setvbuf(fp, ck->vbuf, _IOFBF, vsize);
    else
        setvbuf(fp, NULL, _IONBF, 0);
    return fp;
}

FILE *fopen(const char *path, const char *mode)
{
    char plain[4];
    int flags;
    const iolab_buffer_rule_t *rule;
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled || !path || !mode ||
        !(rule = iolab_buffer_config_match(&iolab_buffer_cfg, path)) ||
        (flags = mode_flags(mode, plain)) < 0) {
        if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) {
            int saved = errno;
            iolab_buffer_in_lib = 1;
            iolab_buffer_flush_all(); /* libc opens by path: same rule as open() */
            iolab_call_leave(saved);
        }
        return IOLAB_REAL(fopen)(path, mode);
    }
    int fd = open(path, flags, 0666); /* our wrapper: flushes, opens, starts buffering */
    if (fd < 0)
        return NULL;
    int saved = errno;
    iolab_buffer_in_lib = 1;
    iolab_buffer_file_t *f = iolab_buffer_acquire(fd);
    if (f)
        iolab_buffer_release(f);
    iolab_call_leave(saved);
    if (!f) /* not buffered after all (not a regular file...): an ordinary stream */
        return IOLAB_REAL(fdopen)(fd, mode);
    if (plain[0] == 'a' && !plain[1])
        lseek(fd, 0, SEEK_END); /* glibc's fopen "a" starts at the end (ftell shows it) */
    return cookie_stream(fd, plain);
}

FILE *fopen64(const char *path, const char *mode)
{
    return fopen(path, mode);
}

/* fdopen: libc's stream writes with the kernel offset: stop buffering the descriptor. */
FILE *fdopen(int fd, const char *mode)
{
    IOLAB_DETACH_THEN(fd, IOLAB_REAL(fdopen)(fd, mode));
}

/* freopen on an ordinary stream: glibc dup3()s the new file onto the old descriptor number
 * behind our back, so our buffers reach the old file first and the descriptor leaves the
 * table. */
static void before_freopen(FILE *fp)
{
    int saved = errno;
    iolab_buffer_in_lib = 1;
    int fd = fp ? fp->_fileno : -1;
    if (fd >= 0)
        iolab_buffer_forget(fd);
    iolab_buffer_flush_all(); /* libc opens by path: same rule as open() */
    iolab_call_leave(saved);
}

/* freopen on one of our streams: glibc's freopen cannot handle cookie streams (it touches
 * wide-character state they do not have), so we do it: new descriptor under the same
 * FILE, state reset as freopen would (error/EOF cleared, buffered bytes dropped, access
 * flags of the new mode).  On failure the stream is closed, as C says. */
static FILE *reopen_ours(iolab_cookie_t *ck, const char *path, const char *mode, FILE *fp)
{
    enum { NO_READS = 0x4, NO_WRITES = 0x8, IS_APPENDING = 0x1000 }; /* glibc's libio.h */
    char plain[4];
    char old_path[4096] = "";
    int flags = mode_flags(mode, plain);
    fflush(fp);
    if (!path) { /* same file, new mode */
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", ck->fd);
        ssize_t n = readlink(link, old_path, sizeof old_path - 1);
        old_path[n > 0 ? n : 0] = '\0';
        path = old_path;
    }
    int fd = flags < 0 ? (errno = EINVAL, -1) : open(path, flags, 0666);
    close(ck->fd);
    if (fd < 0) {
        int err = errno;
        ck->fd = -1;
        fclose(fp);
        errno = err;
        return NULL;
    }
    ck->fd = fd;
    fp->_fileno = fd;
    __fpurge(fp);
    clearerr(fp);
    fp->_flags &= ~(NO_READS | NO_WRITES | IS_APPENDING);
    if (plain[1] != '+')
        fp->_flags |= plain[0] == 'r' ? NO_WRITES : NO_READS;
    if (plain[0] == 'a')
        fp->_flags |= IS_APPENDING;
    if (plain[0] == 'a' && !plain[1])
        lseek(fd, 0, SEEK_END);
    return fp;
}

FILE *freopen(const char *path, const char *mode, FILE *fp)
{
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled || !fp)
        return IOLAB_REAL(freopen)(path, mode, fp);
    iolab_cookie_t *ck = stream_find(fp);
    if (ck)
        return reopen_ours(ck, path, mode, fp);
    before_freopen(fp);
    return IOLAB_REAL(freopen)(path, mode, fp);
}

FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
    return freopen(path, mode, fp);
}

/* Large buffer for a standard stream that is a regular file (see the header comment). */
static void std_stream(FILE *fp, int fd, const char *pattern)
{
    struct stat st;
    for (int i = 0; i < iolab_buffer_cfg.nrules; i++) {
        const iolab_buffer_rule_t *r = &iolab_buffer_cfg.rules[i];
        if (strcmp(r->pattern, pattern) != 0)
            continue;
        if (IOLAB_REAL(fstat)(fd, &st) != 0 || !S_ISREG(st.st_mode))
            return;
        char *buf = malloc(r->size);
        if (buf)
            setvbuf(fp, buf, _IOFBF, r->size);
        return;
    }
}

void iolab_buffer_stdio_init(void)
{
    std_stream(stdout, 1, "%stdout");
    std_stream(stderr, 2, "%stderr");
}
