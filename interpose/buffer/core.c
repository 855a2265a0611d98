/* The buffer core: one descriptor's write-behind stream and read-ahead window.
 *
 * A buffered descriptor is in one of three modes:
 *   IDLE   nothing buffered; the kernel offset is the program's offset.
 *   WRITE  sequential writes are copied into buffers; full buffers go to the worker, which
 *          writes them with pwrite() at their offset.  [ws, we) is accepted but maybe not yet
 *          on disk; the program's offset lives in f->pos.
 *   READ   a window of rn consecutive buffers, filled ahead by the worker, serves read() and
 *          pread(); f->pos is the program's offset.
 * Anything the window or the stream cannot answer exactly goes back to IDLE first
 * (iolab_buffer_sync) and is done by the real call, so the program sees what it would see
 * without the library.  The caller holds f->op for every function here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "iolab_buffer.h"

/* System-level I/O done outside the worker (pass-through calls, position queries). */
static void sys_account(iolab_buffer_file_t *f, iolab_buffer_op_t op, int64_t r, double t0)
{
    pthread_mutex_lock(&f->mu);
    f->st.calls[op]++;
    f->st.seconds[op] += iolab_buffer_now() - t0;
    if (r > 0)
        f->st.bytes[op] += (uint64_t)r;
    pthread_mutex_unlock(&f->mu);
}

/* Kernel pseudo file systems (/proc, /sys, cgroups...): their "regular files" change on
 * every read, so a read-ahead copy would be stale. */
static int pseudo_fs(int fd)
{
    static const unsigned long magic[] = {
        0x9fa0,     /* proc */      0x62656572, /* sysfs */   0x27e0eb,   /* cgroup */
        0x63677270, /* cgroup2 */   0x64626720, /* debugfs */ 0x74726163, /* tracefs */
        0x73636673, /* securityfs */ 0x62656570, /* configfs */ 0xde5e81e4, /* efivarfs */
        0xcafe4a11, /* bpf */       0x6165676c, /* pstore */
    };
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return 1;
    for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
        if ((unsigned long)sf.f_type == magic[i])
            return 1;
    return 0;
}

/* File systems where every read is a round trip to a server (or a user-space daemon): the
 * kernel's readahead does not hide that latency, so prefetch=auto reads ahead there.  On
 * local file systems (ext4, xfs, btrfs, tmpfs...) the kernel's readahead already overlaps
 * most of it, and a program that only reads would pay our copy for nothing: there reads
 * pass through unless the user asks (prefetch=N).  Returns the file system's name, or NULL
 * for a local one. */
static const char *roundtrip_fs(int fd)
{
    static const struct {
        unsigned long magic;
        const char *name;
    } fs[] = {
        {0x65735546, "fuse"},   {0x6969, "nfs"},        {0x0BD00BD0, "lustre"},
        {0x47504653, "gpfs"},   {0xFF534D42, "cifs"},   {0xFE534D42, "smb2"},
        {0x517B, "smb"},        {0x01021997, "9p"},     {0x19830326, "beegfs"},
        {0x00C36400, "ceph"},   {0x5346414F, "afs"},    {0x6B414653, "kafs"},
        {0x013111A8, "ibrix"},  {0xAAD7AAEA, "panfs"},
    };
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if ((unsigned long)(unsigned int)sf.f_type == fs[i].magic)
            return fs[i].name;
    return NULL;
}

iolab_buffer_file_t *iolab_buffer_file_new(int fd, const char *path,
                                           const iolab_buffer_rule_t *rule)
{
    struct stat st;
    if (IOLAB_REAL(fstat)(fd, &st) != 0 || !S_ISREG(st.st_mode) || pseudo_fs(fd))
        return NULL;
    int fl = IOLAB_REAL(fcntl)(fd, F_GETFL);
    /* O_SYNC/O_DSYNC promise durability at return and O_DIRECT bypasses the page cache on
     * purpose: buffering would break the program's intent. */
    if (fl < 0 || (fl & (O_DIRECT | O_DSYNC | O_PATH)))
        return NULL;
    size_t plen = strlen(path);
    iolab_buffer_file_t *f = calloc(1, sizeof *f + plen + 1);
    if (!f)
        return NULL;
    memcpy(f->path, path, plen + 1);
    pthread_mutex_init(&f->op, NULL);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->fd = fd;
    f->size = rule->size;
    f->count = rule->count;
    f->prefetch = rule->prefetch;
    if (rule->prefetch_auto) {
        const char *fs = roundtrip_fs(fd);
        if (!fs)
            f->prefetch = 0; /* the kernel's readahead does it: reads pass straight through */
        snprintf(f->st.readahead_why, sizeof f->st.readahead_why, "auto: %s", fs ? fs :
                 "local file system, kernel readahead");
        f->ra_judging = f->prefetch > 0;
    } else {
        snprintf(f->st.readahead_why, sizeof f->st.readahead_why, "prefetch=%d", f->prefetch);
    }
    f->st.readahead = f->prefetch;
    int acc = fl & O_ACCMODE;
    f->readable = acc == O_RDONLY || acc == O_RDWR;
    f->writable = acc == O_WRONLY || acc == O_RDWR;
    f->append = (fl & O_APPEND) != 0;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->kpos = 0; /* a fresh descriptor starts at 0, even with O_APPEND */
    f->st.buffer_size = rule->size;
    return f;
}

void iolab_buffer_file_free(iolab_buffer_file_t *f)
{
    for (int i = 0; i < f->nbufs; i++)
        munmap(f->bufs[i].data, f->size);
    pthread_mutex_destroy(&f->op);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
}

/* Allocates buffer number f->nbufs; the caller holds f->mu.  NULL when out of memory. */
static iolab_buffer_buf_t *buf_alloc(iolab_buffer_file_t *f)
{
    iolab_buffer_buf_t *b = &f->bufs[f->nbufs];
    /* Our own mapping, so that large buffers can ask for huge pages: touching a fresh
     * 64 MiB buffer page by page costs more than the copies it saves on a fast disk. */
    void *p = IOLAB_REAL(mmap)(NULL, f->size, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (f->size >= ((size_t)2 << 20))
        madvise(p, f->size, MADV_HUGEPAGE);
    memset(b, 0, sizeof *b);
    b->data = p;
    b->file = f;
    b->state = IOLAB_BUF_FREE;
    f->nbufs++;
    if (f->nbufs > f->st.buffers)
        f->st.buffers = f->nbufs;
    return b;
}

/* A free buffer for the write stream, waiting for the worker when all are in flight. */
static iolab_buffer_buf_t *buf_get_free(iolab_buffer_file_t *f)
{
    iolab_buffer_buf_t *b = NULL;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        for (int i = 0; i < f->nbufs && !b; i++)
            if (f->bufs[i].state == IOLAB_BUF_FREE)
                b = &f->bufs[i];
        if (!b && f->nbufs < f->count)
            b = buf_alloc(f);
        if (b || f->inflight == 0)
            break; /* nothing in flight and no memory: give up */
        pthread_cond_wait(&f->cv, &f->mu);
    }
    if (b)
        b->state = IOLAB_BUF_FILLING;
    pthread_mutex_unlock(&f->mu);
    return b;
}

static void buf_submit_write(iolab_buffer_file_t *f, iolab_buffer_buf_t *b)
{
    pthread_mutex_lock(&f->mu);
    b->state = IOLAB_BUF_WRITING;
    f->inflight++;
    pthread_mutex_unlock(&f->mu);
    iolab_buffer_worker_submit(b);
}

static void buf_submit_read(iolab_buffer_file_t *f, iolab_buffer_buf_t *b, int64_t off)
{
    pthread_mutex_lock(&f->mu);
    b->off = off;
    b->len = 0;
    b->cap = f->size;
    b->err = 0;
    b->state = IOLAB_BUF_READING;
    f->inflight++;
    f->st.prefetches++;
    pthread_mutex_unlock(&f->mu);
    iolab_buffer_worker_submit(b);
}

/* Takes the pending delayed-write error; after one, the descriptor is passed through so
 * that later errors are reported synchronously by the kernel. */
static int take_error(iolab_buffer_file_t *f)
{
    if (!__atomic_load_n(&f->werr, __ATOMIC_ACQUIRE))
        return 0; /* the common case, without the lock */
    /* Wait for the buffers in flight while werr is still set, so the worker drops them
     * (they would land after a hole) instead of failing again and reporting twice. */
    iolab_buffer_sync(f, 0);
    f->nobuf = 1;
    pthread_mutex_lock(&f->mu);
    int e = f->werr;
    f->werr = 0;
    pthread_mutex_unlock(&f->mu);
    return -e;
}

void iolab_buffer_idle_flush_file(iolab_buffer_file_t *f)
{
    if (f->mode != IOLAB_MODE_WRITE || !f->cur || f->cur->len == 0)
        return;
    if (f->wgen != f->wgen_seen) { /* still growing: look again next time */
        f->wgen_seen = f->wgen;
        return;
    }
    iolab_buffer_buf_t *b = f->cur;
    f->cur = NULL; /* the next write starts a new buffer at the stream's end */
    buf_submit_write(f, b);
}

int iolab_buffer_drain(iolab_buffer_file_t *f, int report)
{
    if (f->mode == IOLAB_MODE_WRITE) {
        iolab_buffer_buf_t *b = f->cur;
        f->cur = NULL;
        if (b && b->len > 0) {
            buf_submit_write(f, b);
        } else if (b) {
            pthread_mutex_lock(&f->mu);
            b->state = IOLAB_BUF_FREE;
            pthread_mutex_unlock(&f->mu);
        }
        pthread_mutex_lock(&f->mu);
        while (f->inflight > 0)
            pthread_cond_wait(&f->cv, &f->mu);
        pthread_mutex_unlock(&f->mu);
        if (f->we > f->size_at_entry)
            f->size_at_entry = f->we;
        f->ws = f->we;
    }
    return report ? take_error(f) : 0;
}

/* Drops the read-ahead window: queued fills are cancelled, running ones awaited. */
static void window_drop(iolab_buffer_file_t *f)
{
    pthread_mutex_lock(&f->mu);
    for (int i = 0; i < f->rn; i++) {
        iolab_buffer_buf_t *b = &f->bufs[i];
        if (b->state == IOLAB_BUF_READING)
            b->state = IOLAB_BUF_CANCELLED;
        else if (b->state == IOLAB_BUF_FILLED)
            b->state = IOLAB_BUF_FREE;
    }
    while (f->inflight > 0)
        pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
}

int iolab_buffer_sync(iolab_buffer_file_t *f, int report)
{
    int rc = 0;
    if (f->mode == IOLAB_MODE_IDLE)
        return report ? take_error(f) : 0;
    if (f->mode == IOLAB_MODE_WRITE) {
        rc = iolab_buffer_drain(f, 0);
        __atomic_sub_fetch(&iolab_buffer_nwriting, 1, __ATOMIC_SEQ_CST);
    } else {
        window_drop(f);
    }
    f->mode = IOLAB_MODE_IDLE;
    if (f->kpos != f->pos) {
        double t0 = iolab_buffer_now();
        IOLAB_REAL(lseek)(f->fd, f->pos, SEEK_SET);
        sys_account(f, IOLAB_OP_OTHER, 0, t0);
    }
    f->kpos = f->pos;
    f->read_next = f->pos;
    if (report)
        rc = take_error(f);
    return rc;
}

/* The kernel offset, asking the kernel only when we lost track of it. */
static int64_t kernel_pos(iolab_buffer_file_t *f)
{
    if (f->kpos < 0)
        f->kpos = IOLAB_REAL(lseek)(f->fd, 0, SEEK_CUR);
    return f->kpos;
}

/* IDLE -> WRITE with the stream starting at `at` (-1: at the program's offset). */
static int enter_write(iolab_buffer_file_t *f, int64_t at)
{
    struct stat st;
    int64_t p = kernel_pos(f);
    if (p < 0 || IOLAB_REAL(fstat)(f->fd, &st) != 0)
        return -1;
    f->size_at_entry = st.st_size;
    if (f->append)
        p = at = st.st_size; /* O_APPEND: every write lands at the end */
    f->pos = p;
    f->ws = f->we = at < 0 ? p : at;
    f->cur = NULL;
    f->mode = IOLAB_MODE_WRITE;
    __atomic_add_fetch(&iolab_buffer_nwriting, 1, __ATOMIC_SEQ_CST);
    iolab_buffer_worker_ensure();
    return 0;
}

/* Copies n bytes to the end of the stream; full buffers go to the worker.  The first buffer
 * of a stream is shortened so that the following ones start at multiples of the size (large
 * aligned writes).  Returns -1 only when no buffer at all can be had (out of memory). */
static int stream_append(iolab_buffer_file_t *f, const char *src, size_t n)
{
    /* O_APPEND: other processes may append to the file too; the kernel appends each
     * write() whole, so one write must never straddle two of our buffers (two appends
     * with someone else's record in between).  Calls larger than a buffer never get here. */
    if (f->append && f->cur && f->cur->cap - f->cur->len < n) {
        iolab_buffer_buf_t *full = f->cur;
        f->cur = NULL;
        f->st.preflushes++;
        buf_submit_write(f, full);
    }
    while (n > 0) {
        iolab_buffer_buf_t *b = f->cur;
        if (!b) {
            b = buf_get_free(f);
            if (!b)
                return -1;
            b->off = f->we;
            b->len = 0;
            b->cap = f->append ? f->size : f->size - (size_t)(f->we % (int64_t)f->size);
            f->cur = b;
        }
        size_t k = b->cap - b->len < n ? b->cap - b->len : n;
        memcpy(b->data + b->len, src, k);
        b->len += k;
        f->wgen++;
        f->we += (int64_t)k;
        src += k;
        n -= k;
        if (b->len == b->cap) {
            f->cur = NULL;
            f->st.preflushes++;
            buf_submit_write(f, b);
        }
    }
    return 0;
}

/* Whether a write of n bytes at `at` (-1: at the program's offset) may be buffered. */
static int write_bufferable(iolab_buffer_file_t *f, size_t n)
{
    return n > 0 && !f->nobuf && !IOLAB_EXITING() && f->writable;
}

/* Makes sure the descriptor is in WRITE mode with the stream ending at `at`. */
static int stream_position(iolab_buffer_file_t *f, size_t n, int64_t at)
{
    if (f->mode == IOLAB_MODE_READ)
        iolab_buffer_sync(f, 0);
    if (f->append && n > f->size)
        return -1; /* whole in one append (see stream_append) */
    if (f->mode == IOLAB_MODE_IDLE) {
        if (n >= f->size || enter_write(f, at) < 0)
            return -1; /* a write this large gains nothing from a copy */
        if (f->append)
            return 0;
    }
    if (at < 0)
        at = f->append ? f->we : f->pos;
    if (at != f->we) { /* not sequential: what is buffered goes first */
        iolab_buffer_drain(f, 0);
        f->ws = f->we = at;
    }
    return 0;
}

int64_t iolab_buffer_write(iolab_buffer_file_t *f, const void *buf, size_t n)
{
    int e = take_error(f);
    if (e)
        return e;
    if (write_bufferable(f, n) && stream_position(f, n, -1) == 0 &&
        stream_append(f, buf, n) == 0) {
        f->pos = f->we;
        return (int64_t)n;
    }
    iolab_buffer_sync(f, 0);
    double t0 = iolab_buffer_now();
    ssize_t r = IOLAB_REAL(write)(f->fd, buf, n);
    int err = errno;
    sys_account(f, IOLAB_OP_SYSWRITE, r, t0);
    if (r < 0)
        return -err;
    f->kpos = f->append ? -1 : (f->kpos >= 0 ? f->kpos + r : -1);
    return r;
}

int64_t iolab_buffer_pwrite(iolab_buffer_file_t *f, const void *buf, size_t n, int64_t off)
{
    int e = take_error(f);
    if (e)
        return e;
    /* pwrite with O_APPEND appends on Linux: rare enough to pass through. */
    if (write_bufferable(f, n) && !f->append && off >= 0 && stream_position(f, n, off) == 0 &&
        stream_append(f, buf, n) == 0)
        return (int64_t)n;
    iolab_buffer_sync(f, 0);
    double t0 = iolab_buffer_now();
    ssize_t r = IOLAB_REAL(pwrite)(f->fd, buf, n, off);
    int err = errno;
    sys_account(f, IOLAB_OP_SYSWRITE, r, t0);
    return r < 0 ? -err : r;
}

/* IDLE -> READ with the window starting at the buffer holding `at`. */
static int enter_read(iolab_buffer_file_t *f, int64_t at)
{
    int rn = f->prefetch + 1 < f->count ? f->prefetch + 1 : f->count;
    int64_t p = kernel_pos(f);
    if (p < 0 || at < 0)
        return -1;
    pthread_mutex_lock(&f->mu);
    while (f->nbufs < rn && buf_alloc(f))
        ;
    pthread_mutex_unlock(&f->mu);
    if (f->nbufs < rn)
        return -1;
    f->rn = rn;
    f->rhead = 0;
    f->pos = p;
    f->wbase = at - at % (int64_t)f->size;
    f->mode = IOLAB_MODE_READ;
    for (int i = 0; i < rn; i++)
        buf_submit_read(f, &f->bufs[i], f->wbase + (int64_t)i * (int64_t)f->size);
    return 0;
}

static iolab_buffer_buf_t *window_buf(iolab_buffer_file_t *f, int64_t c)
{
    int i = (int)((c - f->wbase) / (int64_t)f->size);
    return &f->bufs[(f->rhead + i) % f->rn];
}

/* Waits for b's fill; returns 1 when b ends the data (EOF or error inside it). */
static int buf_wait_filled(iolab_buffer_file_t *f, iolab_buffer_buf_t *b)
{
    pthread_mutex_lock(&f->mu);
    while (b->state == IOLAB_BUF_READING)
        pthread_cond_wait(&f->cv, &f->mu);
    int last = b->err != 0 || b->len < f->size;
    pthread_mutex_unlock(&f->mu);
    return last;
}

/* Slides the window so that it covers c when c is just past it: consumed buffers are reused
 * for the data after the window's end. */
static void window_advance(iolab_buffer_file_t *f, int64_t c)
{
    int64_t sz = (int64_t)f->size;
    while (c >= f->wbase + sz && c < f->wbase + (int64_t)(f->rn + 1) * sz) {
        iolab_buffer_buf_t *head = &f->bufs[f->rhead];
        if (buf_wait_filled(f, head))
            return; /* EOF inside the head: nothing after it to prefetch */
        buf_submit_read(f, head, f->wbase + (int64_t)f->rn * sz);
        f->rhead = (f->rhead + 1) % f->rn;
        f->wbase += sz;
    }
}

/* Waits until b holds the byte at c or its fill is over (the worker fills in chunks, so
 * the program starts on a buffer's first megabyte, not after all of it); while
 * prefetch=auto judges the stream, the wait is timed.  Returns the bytes of b valid now. */
static size_t buf_wait_covers(iolab_buffer_file_t *f, iolab_buffer_buf_t *b, int64_t c)
{
    pthread_mutex_lock(&f->mu);
    if (b->state == IOLAB_BUF_READING && b->off + (int64_t)b->len <= c) {
        double t0 = f->ra_judging ? iolab_buffer_clock() : 0.0;
        while (b->state == IOLAB_BUF_READING && b->off + (int64_t)b->len <= c)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->ra_judging)
            f->ra_wait_s += iolab_buffer_clock() - t0;
    }
    size_t len = b->len;
    pthread_mutex_unlock(&f->mu);
    return len;
}

/* Copies [off, off+n) from the window.  Returns the bytes copied, or -1 when the window
 * cannot answer exactly (outside it, a read error, or EOF with nothing copied: the file may
 * have grown, so the kernel decides). */
static int64_t window_serve(iolab_buffer_file_t *f, int64_t off, char *dst, size_t n)
{
    size_t copied = 0;
    while (copied < n) {
        int64_t c = off + (int64_t)copied;
        window_advance(f, c);
        if (c < f->wbase || c >= f->wbase + (int64_t)f->rn * (int64_t)f->size)
            break;
        iolab_buffer_buf_t *b = window_buf(f, c);
        int64_t avail = b->off + (int64_t)buf_wait_covers(f, b, c) - c;
        if (avail <= 0) {
            if (b->err)
                return -1; /* the kernel reports the error, at the program's offset */
            break;         /* EOF */
        }
        size_t k = (size_t)avail < n - copied ? (size_t)avail : n - copied;
        memcpy(dst + copied, b->data + (c - b->off), k);
        copied += k;
    }
    return copied > 0 ? (int64_t)copied : -1;
}

static int read_bufferable(iolab_buffer_file_t *f, size_t n)
{
    return n > 0 && n <= f->size / 2 && !f->nobuf && !IOLAB_EXITING() && f->readable &&
           f->prefetch > 0 && !f->ra_off;
}

/* window_serve, timed while prefetch=auto judges the stream: the time since the previous
 * read returned is the program's computation.  Once enough is served, read-ahead stays on,
 * or steps aside (ra_off) when the program hardly computed between reads: then the reads
 * are I/O bound, overlap has nothing to hide, and the copy only costs.  The caller leaves
 * READ mode after a read that set ra_off. */
static int64_t serve_judged(iolab_buffer_file_t *f, int64_t off, char *dst, size_t n)
{
    if (!f->ra_judging)
        return window_serve(f, off, dst, n);
    double now = iolab_buffer_clock();
    if (f->ra_left > 0)
        f->ra_compute_s += now - f->ra_left;
    int64_t r = window_serve(f, off, dst, n);
    if (r > 0)
        f->ra_served += r;
    int64_t enough = (int64_t)f->size * IOLAB_BUFFER_JUDGE_BUFFERS;
    if (enough > IOLAB_BUFFER_JUDGE_MAX)
        enough = IOLAB_BUFFER_JUDGE_MAX;
    if (f->ra_served >= enough) {
        f->ra_judging = 0;
        f->ra_off = f->ra_compute_s < IOLAB_BUFFER_OVERLAP_MIN * f->ra_wait_s;
        if (f->ra_off)
            f->st.readahead = 0;
        size_t len = strlen(f->st.readahead_why);
        snprintf(f->st.readahead_why + len, sizeof f->st.readahead_why - len,
                 "; %s after %lld MiB: computed %.3f s while waiting %.3f s%s",
                 f->ra_off ? "stepped aside" : "kept", (long long)(f->ra_served >> 20),
                 f->ra_compute_s, f->ra_wait_s, f->ra_off ? ", nothing to overlap" : "");
    }
    f->ra_left = iolab_buffer_clock();
    return r;
}

int64_t iolab_buffer_read(iolab_buffer_file_t *f, void *buf, size_t n)
{
    if (f->mode == IOLAB_MODE_WRITE)
        iolab_buffer_sync(f, 0); /* the data may be in our buffers: write it first */
    if (f->mode == IOLAB_MODE_IDLE && read_bufferable(f, n) && f->kpos >= 0 &&
        f->kpos == f->read_next)
        enter_read(f, f->kpos); /* the second read of a stream starts read-ahead */
    if (f->mode == IOLAB_MODE_READ && !IOLAB_EXITING() && n > 0) {
        int64_t r = serve_judged(f, f->pos, buf, n);
        if (r >= 0) {
            f->pos += r;
            if (f->ra_off)
                iolab_buffer_sync(f, 0); /* the kernel's offset follows; reads pass through */
            return r;
        }
    }
    iolab_buffer_sync(f, 0);
    double t0 = iolab_buffer_now();
    ssize_t r = IOLAB_REAL(read)(f->fd, buf, n);
    int err = errno;
    sys_account(f, IOLAB_OP_SYSREAD, r, t0);
    if (r < 0)
        return -err;
    if (f->kpos >= 0)
        f->kpos += r;
    f->read_next = f->kpos;
    return r;
}

int64_t iolab_buffer_pread(iolab_buffer_file_t *f, void *buf, size_t n, int64_t off)
{
    if (f->mode == IOLAB_MODE_WRITE)
        iolab_buffer_drain(f, 0);
    if (f->mode == IOLAB_MODE_IDLE && read_bufferable(f, n) && off == f->pread_next)
        enter_read(f, off);
    if (f->mode == IOLAB_MODE_READ && !IOLAB_EXITING() && n > 0 && off >= 0) {
        int64_t r = serve_judged(f, off, buf, n);
        if (r >= 0) {
            f->pread_next = off + r;
            if (f->ra_off)
                iolab_buffer_sync(f, 0);
            return r;
        }
    }
    if (IOLAB_EXITING())
        iolab_buffer_sync(f, 0);
    double t0 = iolab_buffer_now();
    ssize_t r = IOLAB_REAL(pread)(f->fd, buf, n, off);
    int err = errno;
    sys_account(f, IOLAB_OP_SYSREAD, r, t0);
    if (r < 0)
        return -err;
    f->pread_next = off + r;
    return r;
}

int64_t iolab_buffer_lseek(iolab_buffer_file_t *f, int64_t off, int whence)
{
    int64_t base = -1;
    if (f->mode != IOLAB_MODE_IDLE && !IOLAB_EXITING()) {
        if (whence == SEEK_SET)
            base = 0;
        else if (whence == SEEK_CUR)
            base = f->pos;
        else if (whence == SEEK_END && f->mode == IOLAB_MODE_WRITE)
            base = f->we > f->size_at_entry ? f->we : f->size_at_entry;
    }
    /* Beyond 1 TiB or negative: let the kernel give its own answer (EINVAL, EOVERFLOW). */
    const int64_t limit = (int64_t)1 << 40;
    if (base >= 0 && off > -limit && off < limit && base + off >= 0 && base + off < limit) {
        f->pos = base + off;
        return f->pos;
    }
    iolab_buffer_sync(f, 0);
    double t0 = iolab_buffer_now();
    off_t r = IOLAB_REAL(lseek)(f->fd, off, whence);
    int err = errno;
    sys_account(f, IOLAB_OP_OTHER, 0, t0);
    if (r < 0)
        return -err;
    f->kpos = r;
    return r;
}

int iolab_buffer_fstat(iolab_buffer_file_t *f, struct stat *st)
{
    if (IOLAB_REAL(fstat)(f->fd, st) != 0)
        return -errno;
    /* The size includes what we accepted but have not written yet. */
    if (f->mode == IOLAB_MODE_WRITE && f->we > st->st_size)
        st->st_size = f->we;
    return 0;
}
