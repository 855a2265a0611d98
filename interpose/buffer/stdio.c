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
#include <stdlib.h>
#include <string.h>

#include "wrappers.h"

typedef struct {
    int fd;
    char *vbuf; /* the stdio buffer we gave the stream, freed at close */
} iolab_cookie_t;

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
