/* libiolab-buffer: an open IOBUF.  Internal interfaces shared by the library's parts:
 *   config.c   IOLAB_BUFFER parsing (rules: pattern -> size, count, prefetch)
 *   core.c     per-descriptor state: write-behind stream, read-ahead window, sync
 *   worker.c   the background thread that writes buffers behind and reads ahead
 *   table.c    descriptor table, whole-process flushes, fork/exit/signal life cycle
 *   wrappers.c the interposed POSIX calls; stdio.c the interposed stdio calls
 *   stats.c    IOBUF-shaped statistics
 * Core functions return a value >= 0 on success or -errno; only the wrappers touch errno. */
#ifndef IOLAB_BUFFER_H
#define IOLAB_BUFFER_H

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- real symbols: one pointer per line of symbols.def ---- */
#define X(ret, name, params) extern ret(*iolab_buffer_real_##name) params;
#include "symbols.def"
#undef X

/* Resolves every pointer of symbols.def with dlsym(RTLD_NEXT); idempotent. */
void iolab_buffer_resolve(void);

/* The next definition of `name` (the tracer's, libc's...), resolved on first use so calls
 * made before our constructor (by other libraries' constructors) still work. */
#define IOLAB_REAL(name) \
    (iolab_buffer_real_##name ? iolab_buffer_real_##name \
                              : (iolab_buffer_resolve(), iolab_buffer_real_##name))

/* ---- configuration ---- */
#define IOLAB_BUFFER_MAX_COUNT 64
#define IOLAB_BUFFER_MAX_FD 65536

typedef struct {
    char pattern[256]; /* fnmatch glob, or %stdout / %stderr */
    size_t size;       /* bytes per buffer */
    int count;         /* buffers per file */
    int prefetch;      /* buffers read ahead (0: no read-ahead) */
    int prefetch_auto; /* prefetch=auto: read ahead only on round-trip file systems */
} iolab_buffer_rule_t;

typedef struct {
    int enabled;  /* variable set and valid */
    int nrules;
    iolab_buffer_rule_t rules[32];
    int verbose;        /* print statistics at exit */
    char verbose_path[512]; /* "" = stderr */
} iolab_buffer_config_t;

#define IOLAB_BUFFER_DEFAULT_SIZE ((size_t)4 << 20)
#define IOLAB_BUFFER_DEFAULT_COUNT 4
/* Read-ahead fills a buffer in chunks of a quarter buffer, at most this, each published as
 * it lands: the program waits for one chunk, not one whole (64 MiB) buffer, and the file
 * system still sees large reads. */
#define IOLAB_BUFFER_READ_CHUNK_MAX ((size_t)1 << 20)
/* prefetch=auto judges read-ahead over the first IOLAB_BUFFER_JUDGE_BUFFERS buffers of a
 * stream (at most IOLAB_BUFFER_JUDGE_MAX bytes) and steps aside when the program computed for
 * less than IOLAB_BUFFER_OVERLAP_MIN of the time it waited for the thread: overlap could then
 * save at most that share, and the extra copy takes a good part of it (measured: a program
 * that only reads ran at 0.53-0.74x through the library on FUSE; one computing about as long
 * as it waited, 1.5-2.2x faster). */
#define IOLAB_BUFFER_JUDGE_BUFFERS 4
#define IOLAB_BUFFER_JUDGE_MAX ((int64_t)64 << 20)
#define IOLAB_BUFFER_OVERLAP_MIN 0.25
#define IOLAB_BUFFER_DEFAULT_PREFETCH 2 /* depth of prefetch=auto where it reads ahead */
#define IOLAB_BUFFER_DEFAULT_PREFETCH_AUTO 1

/* Parses `spec` (the value of IOLAB_BUFFER) into `cfg`.  Returns 0, or -1 with a one-line
 * reason in `err` (cfg is then disabled: the library passes everything through). */
int iolab_buffer_config_parse(const char *spec, iolab_buffer_config_t *cfg, char *err,
                              size_t errlen);

/* The first rule whose pattern matches `path`, or NULL. */
const iolab_buffer_rule_t *iolab_buffer_config_match(const iolab_buffer_config_t *cfg,
                                                     const char *path);

extern iolab_buffer_config_t iolab_buffer_cfg;

/* ---- statistics ---- */
typedef enum { IOLAB_OP_OPEN, IOLAB_OP_READ, IOLAB_OP_WRITE, IOLAB_OP_CLOSE,
               IOLAB_OP_SYSREAD, IOLAB_OP_SYSWRITE, IOLAB_OP_OTHER, IOLAB_OP_N } iolab_buffer_op_t;

typedef struct {
    uint64_t calls[IOLAB_OP_N];
    double seconds[IOLAB_OP_N];
    uint64_t bytes[IOLAB_OP_N];
    int buffers;        /* most buffers allocated at once */
    size_t buffer_size;
    uint64_t prefetches; /* buffers filled ahead by the background thread */
    uint64_t preflushes; /* full buffers written behind by the background thread */
    int readahead;       /* read-ahead depth chosen at open (0: reads pass through) */
    char readahead_why[160]; /* why: "prefetch=2", "auto: fuse", ... */
} iolab_buffer_stats_t;

/* Adds `s` to the statistics of `path` kept until exit (thread-safe). */
void iolab_buffer_stats_merge(const char *path, const iolab_buffer_stats_t *s);

/* Prints every file's table to the verbose target (stderr or the file). */
void iolab_buffer_stats_print(void);

double iolab_buffer_now(void);
/* The monotonic clock, always (iolab_buffer_now reads it only for the statistics). */
double iolab_buffer_clock(void);

/* ---- per-descriptor state ---- */
typedef enum { IOLAB_BUF_FREE, IOLAB_BUF_FILLING, IOLAB_BUF_WRITING, IOLAB_BUF_READING,
               IOLAB_BUF_FILLED, IOLAB_BUF_CANCELLED } iolab_buffer_bufstate_t;

struct iolab_buffer_file;

typedef struct iolab_buffer_buf {
    char *data;
    int64_t off;  /* file offset of data[0] */
    size_t len;   /* valid bytes */
    size_t cap;   /* bytes this buffer may take (less than size for the first, to align) */
    int state;    /* iolab_buffer_bufstate_t, under file->mu */
    int err;      /* errno of a failed read-ahead */
    struct iolab_buffer_buf *qnext;
    struct iolab_buffer_file *file;
} iolab_buffer_buf_t;

typedef enum { IOLAB_MODE_IDLE, IOLAB_MODE_WRITE, IOLAB_MODE_READ } iolab_buffer_mode_t;

typedef struct iolab_buffer_file {
    int fd;
    int refs;             /* table slot + calls in progress; freed at 0 (atomic) */
    int closed;
    pthread_mutex_t op;   /* serialises the program's calls on this descriptor */
    pthread_mutex_t mu;   /* buffer states and werr, shared with the worker */
    pthread_cond_t cv;
    size_t size;
    int count, prefetch;
    int readable, writable, append;
    int nobuf;            /* pass everything through from now on */
    dev_t dev;
    ino_t ino;
    int mode;             /* iolab_buffer_mode_t */
    int64_t kpos;         /* kernel offset when known, else -1 */
    int64_t read_next;    /* IDLE: where the last read() ended, to detect a stream */
    int64_t pread_next;   /* where the last pread() ended */
    int64_t pos;          /* WRITE/READ: the program's offset (the kernel's may lag) */
    int64_t size_at_entry;/* WRITE: file size when the stream started */
    int64_t ws, we;       /* WRITE: [ws, we) accepted but not yet known written */
    iolab_buffer_buf_t *cur;  /* WRITE: buffer being filled */
    unsigned wgen, wgen_seen; /* writes so far / as the idle check last saw them */
    int inflight;         /* buffers queued or under I/O, under mu */
    int werr;             /* first error of a delayed write, under mu; reported once */
    int nbufs;
    iolab_buffer_buf_t bufs[IOLAB_BUFFER_MAX_COUNT];
    int rn, rhead;        /* READ: window of rn consecutive buffers starting at rhead */
    int64_t wbase;        /* READ: file offset of the window's first buffer */
    /* prefetch=auto: does read-ahead pay?  Over the stream's first bytes the time the
     * program spends between reads (its computation: what read-ahead overlaps) and the time
     * it waits for the background thread are summed; see judge_overlap() in core.c. */
    int ra_judging;       /* 1 while judging (auto only) */
    int ra_off;           /* read-ahead stepped aside for this descriptor */
    double ra_left;       /* when the last read served from the window returned (0: none) */
    double ra_compute_s, ra_wait_s;
    int64_t ra_served;    /* bytes served from the window while judging */
    iolab_buffer_stats_t st;
    char path[];
} iolab_buffer_file_t;

/* Creates the state of a freshly opened descriptor (NULL when it should not be buffered:
 * not a regular file, O_DIRECT/O_SYNC, no memory).  Does not enter it in the table. */
iolab_buffer_file_t *iolab_buffer_file_new(int fd, const char *path,
                                           const iolab_buffer_rule_t *rule);

/* Frees a file whose buffers are idle. */
void iolab_buffer_file_free(iolab_buffer_file_t *f);

/* Program-visible operations on a buffered descriptor; the caller holds f->op. */
int64_t iolab_buffer_write(iolab_buffer_file_t *f, const void *buf, size_t n);
int64_t iolab_buffer_pwrite(iolab_buffer_file_t *f, const void *buf, size_t n, int64_t off);
int64_t iolab_buffer_read(iolab_buffer_file_t *f, void *buf, size_t n);
int64_t iolab_buffer_pread(iolab_buffer_file_t *f, void *buf, size_t n, int64_t off);
int64_t iolab_buffer_lseek(iolab_buffer_file_t *f, int64_t off, int whence);
int iolab_buffer_fstat(iolab_buffer_file_t *f, struct stat *st);

/* Writes everything buffered and waits (the stream stays open).  Returns -errno of a delayed
 * write when `report` (and consumes it), else 0. */
int iolab_buffer_drain(iolab_buffer_file_t *f, int report);

/* Back to pass-through state: drain writes, drop read-ahead, put the kernel offset where
 * the program believes it is.  Returns like iolab_buffer_drain. */
int iolab_buffer_sync(iolab_buffer_file_t *f, int report);

/* Idle check (the worker, once a second): a partly filled buffer that did not grow since
 * the last check is written, so a quiet program has nothing at risk and other processes
 * see its data.  Skips files whose lock is busy. */
void iolab_buffer_idle_flush(void);
void iolab_buffer_idle_flush_file(iolab_buffer_file_t *f);

/* Background thread (worker.c). */
void iolab_buffer_worker_submit(iolab_buffer_buf_t *b);
void iolab_buffer_worker_ensure(void);
void iolab_buffer_worker_atfork_prepare(void);
void iolab_buffer_worker_atfork_parent(void);
void iolab_buffer_worker_atfork_child(void);

/* ---- descriptor table and life cycle (table.c) ---- */
extern int iolab_buffer_exiting;    /* after the exit flush: buffer nothing more */
#define IOLAB_EXITING() __atomic_load_n(&iolab_buffer_exiting, __ATOMIC_ACQUIRE)
extern int iolab_buffer_nwriting;   /* files with a write stream (atomic): path calls flush */

/* Looks fd up; on success holds a reference and f->op. NULL: not buffered. */
iolab_buffer_file_t *iolab_buffer_acquire(int fd);
void iolab_buffer_release(iolab_buffer_file_t *f);

/* Enters f (from iolab_buffer_file_new) in the table, which then owns it. */
void iolab_buffer_table_add(iolab_buffer_file_t *f);

/* Removes fd from the table (close, dup2 over it): syncs, merges statistics, frees.
 * Returns -errno of a delayed write, else 0.  Does not close the descriptor. */
int iolab_buffer_forget(int fd);

/* Syncs fd and stops buffering it (dup, fdopen, shared mappings). */
void iolab_buffer_detach(int fd);

/* After dup(oldfd) = newfd: both share one offset, so neither is buffered any more, but
 * newfd stays in the table so that a later open of the same file sees it (coherence). */
void iolab_buffer_dup(int oldfd, int newfd);

/* Syncs fd (the kernel offset becomes the program's) without detaching it. */
void iolab_buffer_sync_fd(int fd);

/* Drains every write stream (before opening or stat-ing by path, exec, spawn). */
void iolab_buffer_flush_all(void);

/* Syncs every file and drops read-ahead (truncate by path, fork). */
void iolab_buffer_sync_all(void);

/* Another descriptor of the same inode exists: stop buffering both (coherence). */
void iolab_buffer_check_shared(iolab_buffer_file_t *f);

/* Final flush at exit(), _exit() or a fatal signal: drains everything, prints statistics,
 * and makes every later call pass through. */
void iolab_buffer_exit_flush(void);

/* close(): syncs (a delayed error wins over close's own result), closes, merges the
 * statistics.  Returns 0 or -errno; the descriptor is closed either way. */
int iolab_buffer_close(int fd);

/* Installs the flushing handlers of the terminating signals (signals.c). */
void iolab_buffer_signals_init(void);

/* ---- reentrancy guard and wrapper skeleton helpers ---- */
extern __thread int iolab_buffer_in_lib __attribute__((tls_model("initial-exec")));

/* A signal arrived while this thread was inside the library: handle it on the way out. */
void iolab_buffer_signal_deferred(void);
extern volatile sig_atomic_t iolab_buffer_pending_signal;

/* stdio (stdio.c) */
void iolab_buffer_stdio_init(void);

#endif
