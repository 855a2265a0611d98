/* libiolab-trace: STDIO wrappers and the STDIO module's counters (Darshan semantics, plus
 * iolab's split of formatted (fprintf) and character (fputc, fgets...) calls).
 *
 * glibc's own buffered reads and writes below a stream do not go through the PLT, so they
 * are not seen as POSIX calls: a stream's file has a STDIO record only, as with Darshan.
 * stdin, stdout and stderr have the records <STDIN>, <STDOUT>, <STDERR> (as in Darshan:
 * opened once at start, written only when read from or written to); printf, puts, scanf...
 * count on them.
 */
#include "iolab_wrap.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#define C(r, n) ((r)->c[IOLAB_STDIO_##n])
#define F(r, n) ((r)->f[IOLAB_STDIO_F_##n])
#define MAP_STDIO 0

/* The record of a traced stream, NULL for the others (and while tracing is off). */
static inline iolab_rec_t *stream_rec(FILE *fp)
{
    if (!iolab_core_active || !fp)
        return NULL;
    int32_t i = iolab_handle_lookup(iolab_core_stdio_handles, (uintptr_t)fp);
    return i >= 0 ? &iolab_core_stdio_recs[i] : NULL;
}

#define TRACED(fp) (stream_rec(fp) != NULL)
/* The data wrappers look the stream's record up once, before the call. */
#define IO_REC(fp) iolab_rec_t *r_ = stream_rec(fp)

/* ---- recording ---- */

static void stdio_open(FILE *fp, const char *path, const char *abs_known, int fdopened,
                       const char *mode, double t0, double t1)
{
    char abs[PATH_MAX];
    struct stat sb;
    if (!fp)
        return;
    if (abs_known) {
        snprintf(abs, sizeof abs, "%s", abs_known);
    } else if (iolab_core_abspath(NULL, path, abs, sizeof abs) != 0 || iolab_core_excluded(abs)) {
        return;
    }
    int fd = IOLAB_REAL(fileno)(fp);
    iolab_rec_t *r = iolab_core_find(IOLAB_MOD_STDIO, abs);
    if (!r) {
        if (IOLAB_REAL(fstat)(fd, &sb) != 0 || !(S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode)))
            return;
        r = iolab_core_record(IOLAB_MOD_STDIO, abs);
        if (!r)
            return;
    }
    int64_t start = 0;
    if (mode && mode[0] == 'a' && IOLAB_REAL(fstat)(fd, &sb) == 0)
        start = sb.st_size;
    iolab_core_handle_put(MAP_STDIO, (uintptr_t)fp, iolab_core_rec_index(r));
    iolab_rec_lock(r);
    r->offset = start;
    if (fdopened)
        C(r, FDOPENS)++;
    else
        C(r, OPENS)++;
    iolab_stamp(&F(r, OPEN_START_TIMESTAMP), &F(r, OPEN_END_TIMESTAMP), t0, t1);
    iolab_time_add(&F(r, META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

static void stdio_fdopen(FILE *fp, int fd, const char *mode, double t0, double t1)
{
    iolab_rec_t *p = iolab_core_rec_at(IOLAB_MOD_POSIX, iolab_core_fd_get(fd));
    if (fp && p)
        stdio_open(fp, NULL, iolab_core_rec_path(p), 1, mode, t0, t1);
}

static void stdio_close(FILE *fp, int fd, double t0, double t1)
{
    iolab_rec_t *r = stream_rec(fp);
    iolab_core_fd_set(fd, -1); /* fclose closed the descriptor without calling close() */
    if (!r)
        return;
    iolab_core_handle_del(MAP_STDIO, (uintptr_t)fp);
    iolab_rec_lock(r);
    iolab_stamp(&F(r, CLOSE_START_TIMESTAMP), &F(r, CLOSE_END_TIMESTAMP), t0, t1);
    iolab_time_add(&F(r, META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

/* kind: 0 plain (fread/fwrite), 1 formatted, 2 character. flush: fflush. */
enum { KIND_PLAIN, KIND_FORMATTED, KIND_CHAR };

/* One read or write of n bytes on r (the stream's record). Inlined into each wrapper with
 * write, kind and flush constants: the choices below are made at compile time. */
static inline __attribute__((always_inline)) void stdio_io(iolab_rec_t *r, const int write,
                                                           int64_t n, const int kind,
                                                           const int flush, double t0, double t1)
{
    const int locked = iolab_rec_lock_io(r);
    int64_t off = r->offset;
    r->offset = off + n;
    if (write) {
        if (C(r, MAX_BYTE_WRITTEN) < off + n - 1)
            C(r, MAX_BYTE_WRITTEN) = off + n - 1;
        C(r, BYTES_WRITTEN) += n;
        if (flush)
            C(r, FLUSHES)++;
        else
            C(r, WRITES)++;
        if (kind == KIND_FORMATTED)
            C(r, FORMATTED_WRITES)++;
        else if (kind == KIND_CHAR)
            C(r, CHAR_WRITES)++;
        iolab_stamp(&F(r, WRITE_START_TIMESTAMP), &F(r, WRITE_END_TIMESTAMP), t0, t1);
        iolab_time_add(&F(r, WRITE_TIME), t0, t1, &r->last_write_end);
    } else {
        if (C(r, MAX_BYTE_READ) < off + n - 1)
            C(r, MAX_BYTE_READ) = off + n - 1;
        C(r, BYTES_READ) += n;
        C(r, READS)++;
        if (kind == KIND_CHAR)
            C(r, CHAR_READS)++;
        else if (kind == KIND_FORMATTED)
            C(r, FORMATTED_READS)++;
        iolab_stamp(&F(r, READ_START_TIMESTAMP), &F(r, READ_END_TIMESTAMP), t0, t1);
        iolab_time_add(&F(r, READ_TIME), t0, t1, &r->last_read_end);
    }
    iolab_rec_unlock_if(r, locked);
}

static void stdio_seek(FILE *fp, int64_t ret, double t0, double t1)
{
    if (ret < 0)
        return;
    iolab_rec_t *r = stream_rec(fp);
    if (!r)
        return;
    long pos = IOLAB_REAL(ftell)(fp);
    iolab_rec_lock(r);
    r->offset = pos;
    C(r, SEEKS)++;
    iolab_time_add(&F(r, META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

/* ---- wrappers ---- */

FILE *fopen(const char *path, const char *mode)
{
    IOLAB_WRAP(FILE *, fopen, (path, mode), 1, stdio_open(ret, path, NULL, 0, mode, t0_, t1_));
}

FILE *fopen64(const char *path, const char *mode)
{
    IOLAB_WRAP(FILE *, fopen64, (path, mode), 1, stdio_open(ret, path, NULL, 0, mode, t0_, t1_));
}

FILE *fdopen(int fd, const char *mode)
{
    IOLAB_WRAP(FILE *, fdopen, (fd, mode), iolab_core_fd_get(fd) >= 0,
               stdio_fdopen(ret, fd, mode, t0_, t1_));
}

/* freopen: the stream now belongs to another file (or none, for a NULL path). */
static void stdio_reopen(FILE *ret, FILE *fp, int oldfd, const char *path, const char *mode,
                         double t0, double t1)
{
    if (!ret)
        return;
    iolab_core_fd_set(oldfd, -1);
    iolab_core_handle_del(MAP_STDIO, (uintptr_t)fp);
    if (path)
        stdio_open(ret, path, NULL, 0, mode, t0, t1);
}

FILE *freopen(const char *path, const char *mode, FILE *fp)
{
    int fd = iolab_core_active && fp ? IOLAB_REAL(fileno)(fp) : -1;
    IOLAB_WRAP(FILE *, freopen, (path, mode, fp), 1,
               stdio_reopen(ret, fp, fd, path, mode, t0_, t1_));
}

FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
    int fd = iolab_core_active && fp ? IOLAB_REAL(fileno)(fp) : -1;
    IOLAB_WRAP(FILE *, freopen64, (path, mode, fp), 1,
               stdio_reopen(ret, fp, fd, path, mode, t0_, t1_));
}

int fclose(FILE *fp)
{
    int fd = iolab_core_active && fp ? IOLAB_REAL(fileno)(fp) : -1;
    IOLAB_WRAP(int, fclose, (fp), fd >= 0, stdio_close(fp, fd, t0_, t1_));
}

size_t fread(void *ptr, size_t size, size_t n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(size_t, fread, (ptr, size, n, fp), r_,
               if (ret > 0) stdio_io(r_, 0, (int64_t)(size * ret), KIND_PLAIN, 0, t0_, t1_));
}

size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(size_t, __fread_chk, (ptr, ptrlen, size, n, fp), r_,
               if (ret > 0) stdio_io(r_, 0, (int64_t)(size * ret), KIND_PLAIN, 0, t0_, t1_));
}

size_t fwrite(const void *ptr, size_t size, size_t n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(size_t, fwrite, (ptr, size, n, fp), r_,
               if (ret > 0) stdio_io(r_, 1, (int64_t)(size * ret), KIND_PLAIN, 0, t0_, t1_));
}

int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, vfprintf, (fp, fmt, ap), r_,
               if (ret > 0) stdio_io(r_, 1, ret, KIND_FORMATTED, 0, t0_, t1_));
}

int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, __vfprintf_chk, (fp, flag, fmt, ap), r_,
               if (ret > 0) stdio_io(r_, 1, ret, KIND_FORMATTED, 0, t0_, t1_));
}

int fprintf(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(fp, fmt, ap);
    va_end(ap);
    return r;
}

int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = __vfprintf_chk(fp, flag, fmt, ap);
    va_end(ap);
    return r;
}

int fputs(const char *s, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, fputs, (s, fp), r_,
               if (ret != EOF && ret > 0) stdio_io(r_, 1, (int64_t)strlen(s), KIND_CHAR, 0, t0_, t1_));
}

int fputc(int c, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, fputc, (c, fp), r_,
               if (ret != EOF) stdio_io(r_, 1, 1, KIND_CHAR, 0, t0_, t1_));
}

int putc(int c, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, putc, (c, fp), r_,
               if (ret != EOF) stdio_io(r_, 1, 1, KIND_CHAR, 0, t0_, t1_));
}

char *fgets(char *s, int n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(char *, fgets, (s, n, fp), r_,
               if (ret) stdio_io(r_, 0, (int64_t)strlen(ret), KIND_CHAR, 0, t0_, t1_));
}

char *__fgets_chk(char *s, size_t size, int n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(char *, __fgets_chk, (s, size, n, fp), r_,
               if (ret) stdio_io(r_, 0, (int64_t)strlen(ret), KIND_CHAR, 0, t0_, t1_));
}

int fgetc(FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, fgetc, (fp), r_,
               if (ret != EOF) stdio_io(r_, 0, 1, KIND_CHAR, 0, t0_, t1_));
}

int getc(FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, getc, (fp), r_,
               if (ret != EOF) stdio_io(r_, 0, 1, KIND_CHAR, 0, t0_, t1_));
}

int fseek(FILE *fp, long off, int whence)
{
    IOLAB_WRAP(int, fseek, (fp, off, whence), TRACED(fp), stdio_seek(fp, ret, t0_, t1_));
}

int fseeko(FILE *fp, off_t off, int whence)
{
    IOLAB_WRAP(int, fseeko, (fp, off, whence), TRACED(fp), stdio_seek(fp, ret, t0_, t1_));
}

int fseeko64(FILE *fp, off64_t off, int whence)
{
    IOLAB_WRAP(int, fseeko64, (fp, off, whence), TRACED(fp), stdio_seek(fp, ret, t0_, t1_));
}

/* ftell does not change the stream: passed through, listed for completeness. */
long ftell(FILE *fp) { IOLAB_WRAP(long, ftell, (fp), 0, (void)0); }

off_t ftello(FILE *fp) { IOLAB_WRAP(off_t, ftello, (fp), 0, (void)0); }

off64_t ftello64(FILE *fp) { IOLAB_WRAP(off64_t, ftello64, (fp), 0, (void)0); }

void rewind(FILE *fp) { IOLAB_WRAP_VOID(rewind, (fp), TRACED(fp), stdio_seek(fp, 0, t0_, t1_)); }

/* Like Darshan: the stream's descriptor becomes a POSIX reference to its file (so that
 * fsync(fileno(fp)) is counted), POSIX_FILENOS and POSIX_OPENS + 1. */
static void stdio_fileno(FILE *fp, int fd, double t0, double t1)
{
    iolab_rec_t *s = stream_rec(fp);
    if (fd >= 0 && s)
        iolab_posix_refopen(fd, iolab_core_rec_path(s), IOLAB_POSIX_FILENOS, t0, t1);
}

int fileno(FILE *fp) { IOLAB_WRAP(int, fileno, (fp), TRACED(fp), stdio_fileno(fp, ret, t0_, t1_)); }

int fflush(FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, fflush, (fp), r_,
               if (ret == 0) stdio_io(r_, 1, 0, KIND_PLAIN, 1, t0_, t1_));
}

/* ---- the standard streams (Darshan's <STDIN>, <STDOUT>, <STDERR>) ---- */

void iolab_stdio_std_open(void)
{
    static const char *const names[3] = {"<STDIN>", "<STDOUT>", "<STDERR>"};
    FILE *const fps[3] = {stdin, stdout, stderr};
    for (int i = 0; i < 3; i++) {
        iolab_rec_t *r = iolab_core_record(IOLAB_MOD_STDIO, names[i]);
        if (!r)
            continue;
        iolab_core_handle_put(MAP_STDIO, (uintptr_t)fps[i], iolab_core_rec_index(r));
        C(r, OPENS) = 1; /* at time 0, as Darshan; `used` stays 0 until a read or write */
    }
}

/* ---- formatted output on stdout ---- */

int vprintf(const char *fmt, va_list ap)
{
    IO_REC(stdout);
    IOLAB_WRAP_IO(int, vprintf, (fmt, ap), r_,
               if (ret > 0) stdio_io(r_, 1, ret, KIND_FORMATTED, 0, t0_, t1_));
}

int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
    IO_REC(stdout);
    IOLAB_WRAP_IO(int, __vprintf_chk, (flag, fmt, ap), r_,
               if (ret > 0) stdio_io(r_, 1, ret, KIND_FORMATTED, 0, t0_, t1_));
}

/* Variadic: through the v-form, as Darshan does (one call of the real library either way). */
int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vprintf(fmt, ap);
    va_end(ap);
    return r;
}

int __printf_chk(int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = __vprintf_chk(flag, fmt, ap);
    va_end(ap);
    return r;
}

/* ---- character and string output (compilers turn printf("text\n") into puts) ---- */

int puts(const char *s)
{
    IO_REC(stdout);
    IOLAB_WRAP_IO(int, puts, (s), r_,
               if (ret != EOF) stdio_io(r_, 1, (int64_t)strlen(s) + 1, KIND_CHAR, 0, t0_, t1_));
}

int putchar(int c)
{
    IO_REC(stdout);
    IOLAB_WRAP_IO(int, putchar, (c), r_,
               if (ret != EOF) stdio_io(r_, 1, 1, KIND_CHAR, 0, t0_, t1_));
}

int putchar_unlocked(int c)
{
    IO_REC(stdout);
    IOLAB_WRAP_IO(int, putchar_unlocked, (c), r_,
               if (ret != EOF) stdio_io(r_, 1, 1, KIND_CHAR, 0, t0_, t1_));
}

#define PUTC_LIKE(name)                                                                      \
    int name(int c, FILE *fp)                                                                \
    {                                                                                        \
        IO_REC(fp);                                                                          \
        IOLAB_WRAP(int, name, (c, fp), r_ != NULL,                                           \
                   if (ret != EOF) stdio_io(r_, 1, 1, KIND_CHAR, 0, t0_, t1_));              \
    }
PUTC_LIKE(fputc_unlocked)
PUTC_LIKE(putc_unlocked)
PUTC_LIKE(_IO_putc)

int fputs_unlocked(const char *s, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, fputs_unlocked, (s, fp), r_,
               if (ret != EOF && ret > 0) stdio_io(r_, 1, (int64_t)strlen(s), KIND_CHAR, 0, t0_, t1_));
}

/* putw/getw move a binary int: plain I/O, like fwrite/fread. */
int putw(int w, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(int, putw, (w, fp), r_,
               if (ret != EOF) stdio_io(r_, 1, (int64_t)sizeof(int), KIND_PLAIN, 0, t0_, t1_));
}

/* glibc's headers may make fwrite_unlocked/fread_unlocked macros under optimisation. */
#undef fwrite_unlocked
#undef fread_unlocked
size_t fwrite_unlocked(const void *ptr, size_t size, size_t n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(size_t, fwrite_unlocked, (ptr, size, n, fp), r_,
               if (ret > 0) stdio_io(r_, 1, (int64_t)(size * ret), KIND_PLAIN, 0, t0_, t1_));
}

/* ---- character, line and binary input ---- */

size_t fread_unlocked(void *ptr, size_t size, size_t n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(size_t, fread_unlocked, (ptr, size, n, fp), r_,
               if (ret > 0) stdio_io(r_, 0, (int64_t)(size * ret), KIND_PLAIN, 0, t0_, t1_));
}

/* A -1 read by getw is a value, not the end, when neither EOF nor an error is flagged
 * (Darshan counts the end of file as a 4-byte read). */
int getw(FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP(int, getw, (fp), r_ != NULL,
               if (ret != EOF || (!feof(fp) && !ferror(fp)))
                   stdio_io(r_, 0, (int64_t)sizeof(int), KIND_PLAIN, 0, t0_, t1_));
}

#define GETC_LIKE(name)                                                                      \
    int name(FILE *fp)                                                                       \
    {                                                                                        \
        IO_REC(fp);                                                                          \
        IOLAB_WRAP(int, name, (fp), r_ != NULL,                                              \
                   if (ret != EOF) stdio_io(r_, 0, 1, KIND_CHAR, 0, t0_, t1_));              \
    }
GETC_LIKE(fgetc_unlocked)
GETC_LIKE(getc_unlocked)
GETC_LIKE(_IO_getc)

int getchar(void)
{
    IO_REC(stdin);
    IOLAB_WRAP_IO(int, getchar, (), r_,
               if (ret != EOF) stdio_io(r_, 0, 1, KIND_CHAR, 0, t0_, t1_));
}

int getchar_unlocked(void)
{
    IO_REC(stdin);
    IOLAB_WRAP_IO(int, getchar_unlocked, (), r_,
               if (ret != EOF) stdio_io(r_, 0, 1, KIND_CHAR, 0, t0_, t1_));
}

char *fgets_unlocked(char *s, int n, FILE *fp)
{
    IO_REC(fp);
    IOLAB_WRAP_IO(char *, fgets_unlocked, (s, n, fp), r_,
               if (ret) stdio_io(r_, 0, (int64_t)strlen(ret), KIND_CHAR, 0, t0_, t1_));
}

#define GETDELIM_LIKE(name, params, args)                                                    \
    ssize_t name params                                                                      \
    {                                                                                        \
        IO_REC(fp);                                                                          \
        IOLAB_WRAP(ssize_t, name, args, r_ != NULL,                                          \
                   if (ret > 0) stdio_io(r_, 0, ret, KIND_CHAR, 0, t0_, t1_));               \
    }
GETDELIM_LIKE(getline, (char **line, size_t *n, FILE *fp), (line, n, fp))
GETDELIM_LIKE(getdelim, (char **line, size_t *n, int delim, FILE *fp), (line, n, delim, fp))
GETDELIM_LIKE(__getdelim, (char **line, size_t *n, int delim, FILE *fp), (line, n, delim, fp))

/* ---- formatted input: bytes = how far the stream moved (ftell before and after, as
 * Darshan; 0 on a pipe), counted when the call returns non-zero (EOF included, as Darshan) */

static inline long stream_pos(FILE *fp)
{
    int saved = errno; /* ftell of a pipe sets ESPIPE: the program must not see it */
    long p = IOLAB_REAL(ftell)(fp);
    errno = saved;
    return p;
}

static void stdio_scanned(iolab_rec_t *r, FILE *fp, long p0, double t0, double t1)
{
    long p1 = stream_pos(fp);
    stdio_io(r, 0, p0 >= 0 && p1 >= p0 ? p1 - p0 : 0, KIND_FORMATTED, 0, t0, t1);
}

/* cname: the C function; real: the symbol it defines and forwards to. glibc's headers
 * redirect vfscanf, fscanf... to their __isoc99_ forms, so the plain symbols (which old
 * binaries and -std=gnu89 programs call) are defined under other C names with asm labels. */
#define SCANF_LIKE(cname, real, stream, params, args)                                        \
    int cname params __asm__(#real);                                                         \
    int cname params                                                                         \
    {                                                                                        \
        FILE *fp_ = (stream);                                                                \
        iolab_rec_t *r_ = stream_rec(fp_);                                                   \
        long p0_ = r_ && iolab_core_ready() ? stream_pos(fp_) : -1;                          \
        IOLAB_WRAP(int, real, args, r_ != NULL,                                              \
                   if (ret != 0) stdio_scanned(r_, fp_, p0_, t0_, t1_));                     \
    }
SCANF_LIKE(iolab_vfscanf, vfscanf, fp, (FILE *fp, const char *fmt, va_list ap), (fp, fmt, ap))
SCANF_LIKE(iolab_isoc99_vfscanf, __isoc99_vfscanf, fp, (FILE *fp, const char *fmt, va_list ap),
           (fp, fmt, ap))
SCANF_LIKE(iolab_vscanf, vscanf, stdin, (const char *fmt, va_list ap), (fmt, ap))
SCANF_LIKE(iolab_isoc99_vscanf, __isoc99_vscanf, stdin, (const char *fmt, va_list ap), (fmt, ap))

#define SCANF_VARIADIC(cname, real, vname, params, last, args)                               \
    int cname params __asm__(#real);                                                         \
    int cname params                                                                         \
    {                                                                                        \
        va_list ap;                                                                          \
        va_start(ap, last);                                                                  \
        int r = vname args;                                                                  \
        va_end(ap);                                                                          \
        return r;                                                                            \
    }
SCANF_VARIADIC(iolab_fscanf, fscanf, iolab_vfscanf, (FILE *fp, const char *fmt, ...), fmt,
               (fp, fmt, ap))
SCANF_VARIADIC(iolab_isoc99_fscanf, __isoc99_fscanf, iolab_isoc99_vfscanf,
               (FILE *fp, const char *fmt, ...), fmt, (fp, fmt, ap))
SCANF_VARIADIC(iolab_scanf, scanf, iolab_vscanf, (const char *fmt, ...), fmt, (fmt, ap))
SCANF_VARIADIC(iolab_isoc99_scanf, __isoc99_scanf, iolab_isoc99_vscanf, (const char *fmt, ...),
               fmt, (fmt, ap))

/* ---- positioning ---- */

int fsetpos(FILE *fp, const fpos_t *pos)
{
    IOLAB_WRAP(int, fsetpos, (fp, pos), TRACED(fp), stdio_seek(fp, ret, t0_, t1_));
}

int fsetpos64(FILE *fp, const fpos64_t *pos)
{
    IOLAB_WRAP(int, fsetpos64, (fp, pos), TRACED(fp), stdio_seek(fp, ret, t0_, t1_));
}
