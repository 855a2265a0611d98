/* Statistics in the shape of Cray IOBUF's table: per file, the program's calls (Open, Read,
 * Write, Close, Total), then the system calls the library really issued, the buffers, the
 * prefetches (buffers filled ahead) and pre-flushes (full buffers written behind). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iolab_buffer.h"

typedef struct iolab_buffer_record {
    struct iolab_buffer_record *next;
    iolab_buffer_stats_t st;
    char path[];
} iolab_buffer_record_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static iolab_buffer_record_t *records, *last;

double iolab_buffer_now(void)
{
    /* Only statistics need the time; clock_gettime is not free (a syscall where the vDSO
     * cannot read the clock), and a 512-byte write costs about as much. */
    if (!iolab_buffer_cfg.verbose)
        return 0.0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double iolab_buffer_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void iolab_buffer_stats_merge(const char *path, const iolab_buffer_stats_t *s)
{
    if (!iolab_buffer_cfg.verbose)
        return;
    pthread_mutex_lock(&lock);
    iolab_buffer_record_t *r = records;
    while (r && strcmp(r->path, path) != 0)
        r = r->next;
    if (!r) {
        r = calloc(1, sizeof *r + strlen(path) + 1);
        if (!r) {
            pthread_mutex_unlock(&lock);
            return;
        }
        strcpy(r->path, path);
        if (last)
            last->next = r;
        else
            records = r;
        last = r;
    }
    for (int i = 0; i < IOLAB_OP_N; i++) {
        r->st.calls[i] += s->calls[i];
        r->st.seconds[i] += s->seconds[i];
        r->st.bytes[i] += s->bytes[i];
    }
    if (s->buffers > r->st.buffers)
        r->st.buffers = s->buffers;
    r->st.buffer_size = s->buffer_size;
    r->st.prefetches += s->prefetches;
    r->st.preflushes += s->preflushes;
    if (s->readahead_why[0]) { /* the latest open's choice (one path, one file system) */
        r->st.readahead = s->readahead;
        memcpy(r->st.readahead_why, s->readahead_why, sizeof r->st.readahead_why);
    }
    pthread_mutex_unlock(&lock);
}

typedef struct {
    char buf[2048];
    size_t n;
} iolab_text_t;

/* printf into t, silently truncating (a table never comes near the size). */
__attribute__((format(printf, 2, 3))) static void add(iolab_text_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->n, sizeof t->buf - t->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->n += (size_t)k < sizeof t->buf - t->n ? (size_t)k : sizeof t->buf - t->n - 1;
}

/* One table row: calls, seconds and, for data rows, megabytes, MB/s and the average size
 * of the `xfers` calls that moved data. */
static void row_avg(iolab_text_t *t, const char *name, uint64_t calls, double secs,
                    uint64_t bytes, int data, uint64_t xfers)
{
    if (!data) {
        add(t, "%-12s %10llu %12.6f\n", name, (unsigned long long)calls, secs);
        return;
    }
    double mb = (double)bytes / 1048576.0;
    add(t, "%-12s %10llu %12.6f %14.6f %14.6f %12llu\n", name, (unsigned long long)calls, secs,
        mb, secs > 0 ? mb / secs : 0.0, (unsigned long long)(xfers ? bytes / xfers : 0));
}

static void row(iolab_text_t *t, const char *name, uint64_t calls, double secs, uint64_t bytes,
                int data)
{
    row_avg(t, name, calls, secs, bytes, data, calls);
}

static void emit(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = IOLAB_REAL(write)(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void print_record(int fd, const iolab_buffer_record_t *r)
{
    iolab_text_t t = {.n = 0};
    const iolab_buffer_stats_t *s = &r->st;
    add(&t, "\nFile \"%s\"\n%-12s %10s %12s %14s %14s %12s\n", r->path, "", "Calls", "Seconds",
        "Megabytes", "Megabytes/sec", "Avg Size");
    row(&t, "Open", s->calls[IOLAB_OP_OPEN], s->seconds[IOLAB_OP_OPEN], 0, 0);
    row(&t, "Read", s->calls[IOLAB_OP_READ], s->seconds[IOLAB_OP_READ], s->bytes[IOLAB_OP_READ], 1);
    row(&t, "Write", s->calls[IOLAB_OP_WRITE], s->seconds[IOLAB_OP_WRITE],
        s->bytes[IOLAB_OP_WRITE], 1);
    row(&t, "Close", s->calls[IOLAB_OP_CLOSE], s->seconds[IOLAB_OP_CLOSE], 0, 0);
    uint64_t tc = 0, tb = s->bytes[IOLAB_OP_READ] + s->bytes[IOLAB_OP_WRITE];
    double ts = 0;
    for (int i = IOLAB_OP_OPEN; i <= IOLAB_OP_CLOSE; i++) {
        tc += s->calls[i];
        ts += s->seconds[i];
    }
    row_avg(&t, "Total", tc, ts, tb, 1, s->calls[IOLAB_OP_READ] + s->calls[IOLAB_OP_WRITE]);
    row(&t, "Sys Read", s->calls[IOLAB_OP_SYSREAD], s->seconds[IOLAB_OP_SYSREAD],
        s->bytes[IOLAB_OP_SYSREAD], 1);
    row(&t, "Sys Write", s->calls[IOLAB_OP_SYSWRITE], s->seconds[IOLAB_OP_SYSWRITE],
        s->bytes[IOLAB_OP_SYSWRITE], 1);
    uint64_t held = (uint64_t)s->buffers * s->buffer_size;
    if (held >= (1u << 20) || held == 0)
        add(&t, "%-12s %10d (%llu MB)\n", "Buffers used", s->buffers,
            (unsigned long long)(held >> 20));
    else
        add(&t, "%-12s %10d (%llu KB)\n", "Buffers used", s->buffers,
            (unsigned long long)(held >> 10));
    add(&t, "%-12s %10llu\n", "Prefetches", (unsigned long long)s->prefetches);
    add(&t, "%-12s %10llu\n", "Preflushes", (unsigned long long)s->preflushes);
    if (s->readahead_why[0])
        add(&t, "%-12s %10s (%s)\n", "Read-ahead", s->readahead > 0 ? "on" : "off",
            s->readahead_why);
    emit(fd, t.buf, t.n);
}

void iolab_buffer_stats_print(void)
{
    if (!iolab_buffer_cfg.verbose || !records)
        return;
    int fd = 2, own = 0;
    if (iolab_buffer_cfg.verbose_path[0]) {
        /* O_APPEND: the processes of one run (fork, exec) add their tables to one file. */
        fd = IOLAB_REAL(open)(iolab_buffer_cfg.verbose_path,
                              O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0)
            fd = 2;
        else
            own = 1;
    }
    char head[128];
    int k = snprintf(head, sizeof head, "iolab-buffer statistics (pid %d)\n", (int)getpid());
    pthread_mutex_lock(&lock);
    emit(fd, head, (size_t)k);
    for (iolab_buffer_record_t *r = records; r; r = r->next)
        print_record(fd, r);
    pthread_mutex_unlock(&lock);
    if (own)
        IOLAB_REAL(close)(fd);
}
