/* libiolab-trace: the core's internal interface, shared by the POSIX and STDIO wrappers and
 * the MPI-IO shim (libiolab-trace-mpi.so).
 *
 * Ownership: the core owns every record (fixed pools mmap'ed at start-up, bounded by
 * IOLAB_TRACE_MAX_RECORDS); wrappers only borrow pointers. Nothing here does I/O except the
 * writer, which runs at process end with the reentrancy guard held.
 */
#ifndef IOLAB_TRACE_H
#define IOLAB_TRACE_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define IOLAB_HAVE_SINGLE_THREADED 1
#endif
#endif

/* ---- counters: enums generated from the one list (counters/iolab_counters.def) ---- */
enum iolab_posix_i {
#define IOLAB_POSIX_I(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_POSIX_NI
};
enum iolab_posix_f {
#define IOLAB_POSIX_F(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_POSIX_NF
};
enum iolab_stdio_i {
#define IOLAB_STDIO_I(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_STDIO_NI
};
enum iolab_stdio_f {
#define IOLAB_STDIO_F(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_STDIO_NF
};
enum iolab_mpiio_i {
#define IOLAB_MPIIO_I(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_MPIIO_NI
};
enum iolab_mpiio_f {
#define IOLAB_MPIIO_F(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_MPIIO_NF
};

enum iolab_h5f_i {
#define IOLAB_H5F_I(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_H5F_NI
};
enum iolab_h5f_f {
#define IOLAB_H5F_F(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_H5F_NF
};
enum iolab_h5d_i {
#define IOLAB_H5D_I(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_H5D_NI
};
enum iolab_h5d_f {
#define IOLAB_H5D_F(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_H5D_NF
};

enum iolab_pncf_i {
#define IOLAB_PNETCDF_FILE_I(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_PNETCDF_FILE_NI
};
enum iolab_pncf_f {
#define IOLAB_PNETCDF_FILE_F(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_PNETCDF_FILE_NF
};
enum iolab_pncv_i {
#define IOLAB_PNETCDF_VAR_I(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_PNETCDF_VAR_NI
};
enum iolab_pncv_f {
#define IOLAB_PNETCDF_VAR_F(name, kind, unit, doc) IOLAB_##name,
#include "iolab_counters.def"
    IOLAB_PNETCDF_VAR_NF
};

/* H5F and H5D are recorded by libiolab-trace-hdf5.so (hdf5.c), PNETCDF_FILE and PNETCDF_VAR
 * by libiolab-trace-pnetcdf.so (pnetcdf.c), the rest by this library. */
typedef enum {
    IOLAB_MOD_POSIX = 0,
    IOLAB_MOD_STDIO,
    IOLAB_MOD_MPIIO,
    IOLAB_MOD_H5F,
    IOLAB_MOD_H5D,
    IOLAB_MOD_PNCF,
    IOLAB_MOD_PNCV,
    IOLAB_NMODS
} iolab_module_t;

#define IOLAB_MAX_NI 128 /* >= every module's integer counter count (checked in core.c) */
#define IOLAB_MAX_NF 20
#define IOLAB_CVAL_MAX 32 /* distinct values tracked per record for the common values */

enum { IOLAB_IO_NONE = 0, IOLAB_IO_READ = 1, IOLAB_IO_WRITE = 2 };

/* Distinct values seen (up to IOLAB_CVAL_MAX) with their frequencies. */
typedef struct {
    int64_t val[IOLAB_CVAL_MAX];
    int64_t freq[IOLAB_CVAL_MAX];
    int n;
    int last;
} iolab_cval_t;

/* One (module, file) record of this process. Counters first; runtime state after. */
typedef struct iolab_rec {
    pthread_mutex_t lock;
    int64_t c[IOLAB_MAX_NI];
    double f[IOLAB_MAX_NF];
    uint64_t id;       /* iolab_record_id() of the path: Darshan's record id */
    uint32_t path;     /* offset of the path in the name arena */
    uint8_t module;
    uint8_t used;      /* counters touched since the last reset (fork) */
    uint8_t reduced;   /* rank 0's copy of a file shared by all ranks, reduced at
                          MPI_Finalize: rank -1, f[] in seconds since time_base */
    double time_base;  /* Unix time the reduced record's timestamps count from */
    uint8_t merged;    /* another rank's copy of such a file: only its name is written
                          (trace segments refer to it) */
    int last_io;       /* IOLAB_IO_* */
    int64_t offset;    /* where the next read/write without an offset starts */
    int64_t last_byte_read, last_byte_written;
    double last_read_end, last_write_end, last_meta_end;
    iolab_cval_t access, stride;
    int32_t next;      /* chain in the name hash */
} iolab_rec_t;

/* ---- the core (core.c) ---- */

/* Tracing state: 0 before start-up / disabled, 1 tracing. */
extern int iolab_core_active;
/* Job-relative clock start (CLOCK_MONOTONIC seconds). */
extern double iolab_core_t0;

/* Reentrancy guard: the tracer's own calls, and calls made while a wrapper is recording,
 * go straight to libc. */
extern __thread int iolab_core_busy __attribute__((tls_model("initial-exec")));

/* Time-stamp counter at start, when the CPU's TSC is invariant (then iolab_now() counts
 * ticks, converted to seconds once, when the profile is written: rdtsc costs a third of
 * clock_gettime, which matters next to a 1 us write()). */
extern int iolab_core_use_tsc;
extern uint64_t iolab_core_tsc0;

/* Time since the process's profile started: seconds, or TSC ticks when use_tsc (the value
 * of iolab_core_use_tsc, read once by the caller for both ends of a call). */
static inline double iolab_now_with(int use_tsc)
{
#if defined(__x86_64__)
    if (__builtin_expect(use_tsc, 1))
        return (double)(int64_t)(__builtin_ia32_rdtsc() - iolab_core_tsc0); /* signed: 1 insn */
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 - iolab_core_t0;
}

/* The same, reading the clock choice itself. */
static inline double iolab_now(void) { return iolab_now_with(iolab_core_use_tsc); }

/* Seconds per iolab_now() unit, measured between start and now. */
double iolab_core_seconds_per_tick(void);

/* 1 when a call must be timed and recorded, 0 to pass it through (tracing off, or the
 * tracer's own call). The caller takes the guard (iolab_core_busy = 1) to record. */
static inline int iolab_core_ready(void) { return iolab_core_active && !iolab_core_busy; }

static inline void iolab_core_leave(void) { iolab_core_busy = 0; }

/* dlsym(RTLD_NEXT, name) with the guard held; NULL when absent. */
void *iolab_core_resolve(const char *name);

/* The record of (module, path), created when new. path: absolute, normalised. NULL when
 * the record pool is full (counted in the "left out" record). The record is not locked. */
iolab_rec_t *iolab_core_record(iolab_module_t mod, const char *path);
/* The existing record of (module, path), or NULL. */
iolab_rec_t *iolab_core_find(iolab_module_t mod, const char *path);
/* Memory alignment the POSIX module checks buffers against. */
int64_t iolab_core_mem_alignment(void);
/* The same, for the hot path of this library (hidden: one load). */
extern uint64_t iolab_core_mem_align __attribute__((visibility("hidden")));

/* 1 when v is a multiple of align (> 0). A mask when align is a power of two (always, for
 * st_blksize and sizeof(void*)): a 64-bit division costs 40+ cycles, as much as the rest of
 * a write's counting. */
static inline int iolab_is_multiple(uint64_t v, uint64_t align)
{
    if (__builtin_expect((align & (align - 1)) == 0, 1))
        return (v & (align - 1)) == 0;
    return v % align == 0;
}
/* Records by index (for the fd and handle maps); NULL for -1. */
iolab_rec_t *iolab_core_rec_at(iolab_module_t mod, int32_t idx);
int32_t iolab_core_rec_index(const iolab_rec_t *rec);
const char *iolab_core_rec_path(const iolab_rec_t *rec);

/* Absolute, normalised copy of path (relative to dirpath, or the cwd when dirpath is NULL)
 * into out[outlen]. Returns 0, or -1 when it does not fit. */
int iolab_core_abspath(const char *dirpath, const char *path, char *out, size_t outlen);
/* The file a ROMIO-style name opens: "ufs:/path", "nfs:rel", "lustre:/path"... without its
 * file-system prefix (a word of 2 or more letters, digits or '_' before the first ':', as
 * ROMIO's driver names; Darshan 3.5 drops whatever comes before a first ':' after the second
 * character); any other name as it is, so "/scratch/run:1/out" stays that file. */
const char *iolab_core_strip_fs_prefix(const char *name);
/* 1 when the path is in a system folder Darshan also leaves out (/usr, /proc, /etc...). */
int iolab_core_excluded(const char *abspath);

/* The descriptor map, read by every POSIX call: iolab_core_fdmap[fd] = POSIX record index + 1,
 * 0 when fd is not a traced file; iolab_core_nfds entries (0 while tracing is off). Hidden:
 * only this library reads it, in one instruction, without a GOT or a call. */
extern _Atomic int32_t *iolab_core_fdmap __attribute__((visibility("hidden")));
extern size_t iolab_core_nfds __attribute__((visibility("hidden")));
extern iolab_rec_t *iolab_core_posix_recs __attribute__((visibility("hidden")));
extern iolab_rec_t *iolab_core_stdio_recs __attribute__((visibility("hidden")));

/* fd -> POSIX record index (-1: not a traced file). */
static inline int32_t iolab_core_fd_get(int fd)
{
    if ((size_t)(unsigned)fd >= iolab_core_nfds) /* also fd < 0, and tracing off */
        return -1;
    return __atomic_load_n((int32_t *)&iolab_core_fdmap[fd], __ATOMIC_RELAXED) - 1;
}

/* fd -> its POSIX record, NULL when fd is not a traced file. A record, once made, stays at
 * the same place until the process ends, so the pointer needs no lock. */
static inline iolab_rec_t *iolab_core_fd_rec(int fd)
{
    int32_t i = iolab_core_fd_get(fd);
    return i >= 0 ? &iolab_core_posix_recs[i] : NULL;
}
void iolab_core_fd_set(int fd, int32_t idx);
/* Descriptors first..last (inclusive) are no longer traced files. */
void iolab_core_fd_forget(unsigned int first, unsigned int last);

/* A pointer-keyed map (open addressing, lock-free lookups; inserts under the core lock). */
#define IOLAB_HANDLE_SLOTS 8192
/* Handle maps: 0 STDIO (FILE*), 1 MPI-IO (MPI_File), 2 H5F and 3 H5D (hid_t), 4 PnetCDF
 * files (ncid), 5 PnetCDF variables (ncid, varid). */
#define IOLAB_NHANDLE_MAPS 6
typedef struct {
    _Atomic uintptr_t key;    /* 0 empty, 1 deleted */
    _Atomic int32_t idx;
} iolab_handle_t;

static inline uint32_t iolab_handle_slot(uintptr_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 40) & (IOLAB_HANDLE_SLOTS - 1);
}

/* The record index of key in table t, -1 when absent. */
static inline int32_t iolab_handle_lookup(iolab_handle_t *t, uintptr_t key)
{
    uint32_t i = iolab_handle_slot(key);
    /* The first probe, apart: with a few open streams it is almost always the hit, and the
     * loop's set-up (counter, jump into it) would cost as much as the probe itself. */
    uintptr_t k0 = __atomic_load_n((uintptr_t *)&t[i].key, __ATOMIC_ACQUIRE);
    if (__builtin_expect(k0 == key && key != 0, 1))
        return __atomic_load_n((int32_t *)&t[i].idx, __ATOMIC_RELAXED);
    for (uint32_t n = 0; n < IOLAB_HANDLE_SLOTS; n++, i = (i + 1) & (IOLAB_HANDLE_SLOTS - 1)) {
        uintptr_t k = __atomic_load_n((uintptr_t *)&t[i].key, __ATOMIC_ACQUIRE);
        if (k == 0) /* also for key 0 (a NULL FILE*): never found */
            return -1;
        if (k == key)
            return __atomic_load_n((int32_t *)&t[i].idx, __ATOMIC_RELAXED);
    }
    return -1;
}

/* The STDIO map (FILE* -> record index), for stdio.c's hot path; NULL while tracing is off. */
extern iolab_handle_t *iolab_core_stdio_handles __attribute__((visibility("hidden")));

/* The MPI-IO map (MPI_File -> record index) and records, for the MPI shim's hot path
 * (exported: the shim is another library); NULL while tracing is off. */
extern iolab_handle_t *iolab_core_mpiio_handles;
extern iolab_rec_t *iolab_core_mpiio_recs;

/* Pointer-keyed map (FILE*, MPI_File) -> record index; map 0 = STDIO, 1 = MPI-IO. */
int32_t iolab_core_handle_get(int map, uintptr_t key);
void iolab_core_handle_put(int map, uintptr_t key, int32_t idx);
void iolab_core_handle_del(int map, uintptr_t key);

/* Trace mode (DXT-like): append one operation; counted as left out when the buffer is full. */
extern int iolab_core_tracing;
void iolab_core_trace_add(const iolab_rec_t *rec, int write, int64_t off, int64_t len,
                          double t0, double t1);

/* MPI rank/size (set by the MPI shim at MPI_Init, or guessed from the launcher's env). */
void iolab_trace_set_rank(int rank, int nprocs);
/* Remember the hints in effect when `path` was opened ("key=value;..."); bounded, first
 * files first; what does not fit is counted as left out. */
void iolab_trace_note_hints(const char *path, const char *hints);
/* Writes this process's profile now (MPI_Finalize, _exit, signal). reason: "exit" etc. */
void iolab_trace_flush(const char *reason, int partial);

/* Left-out tallies: records, fds above the table, name arena, trace segments. */
enum { IOLAB_LEFT_RECORDS, IOLAB_LEFT_FDS, IOLAB_LEFT_NAMES, IOLAB_LEFT_HANDLES, IOLAB_LEFT_HINTS,
       IOLAB_LEFT_N };
void iolab_core_left_out(int what);

/* ---- posix.c, for posix_meta.c ---- */
struct stat;
/* Absolute, normalised path of `path` as given relative to dirfd (AT_FDCWD: the cwd) into
 * out[len]. 0 on success. */
int iolab_posix_abspath(int dirfd, const char *path, char *out, size_t len);
/* The record for a path just opened (or stat'ed) as descriptor fd / with status st. NULL when
 * the file is not one we count. st may be NULL: then fd is fstat'ed for a new record. */
iolab_rec_t *iolab_posix_file(int dirfd, const char *path, int fd, const struct stat *st);
/* counter + 1 on fd's record (when ret >= 0); POSIX_STATS also adds metadata time. */
void iolab_posix_counter_fd(int fd, int ret, int counter, double t0, double t1);

/* posix.c: one read or write of ret bytes at off (>= 0) on r, started at t0 and collected at
 * t1 (asynchronous I/O, posix_aio.c); the caller holds the reentrancy guard. */
void iolab_posix_io_done(iolab_rec_t *r, int write, int64_t off, ssize_t ret, const void *buf,
                         double t0, double t1);
/* posix.c: descriptor fd now refers to the file of abspath, as after a dup (POSIX_OPENS and
 * `counter` + 1), e.g. fileno() of a traced stream. */
void iolab_posix_refopen(int fd, const char *abspath, int counter, double t0, double t1);

/* ---- record ids ---- */

/* Little-endian value of the n <= 8 bytes at k. */
static inline uint64_t iolab_le_bytes(const unsigned char *k, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)k[i] << (8 * i);
    return v;
}

static inline void iolab_mix64(uint64_t *a, uint64_t *b, uint64_t *c)
{
    static const int sh[12] = {43, 9, 8, 38, 23, 5, 35, 49, 11, 12, 18, 22};
    for (int i = 0; i < 12; i += 3) {
        *a -= *b + *c;
        *a ^= *c >> sh[i];
        *b -= *c + *a;
        *b ^= *a << sh[i + 1];
        *c -= *a + *b;
        *c ^= *b >> sh[i + 2];
    }
}

/* The record id of a path: Bob Jenkins' 64-bit hash (lookup8.c, 1997, public domain) with
 * level 0, which is how Darshan names its records (darshan_core_gen_record_id), so an iolab
 * profile, its --darshan export and a Darshan log of the same file share ids, and the
 * counters that hold ids (POSIX_RENAMED_FROM, H5D_/PNETCDF_VAR_FILE_REC_ID) agree. */
static inline uint64_t iolab_record_id(const char *path)
{
    const unsigned char *k = (const unsigned char *)path;
    const size_t length = strlen(path);
    size_t len = length;
    uint64_t a = 0, b = 0, c = 0x9e3779b97f4a7c13ULL;
    for (; len >= 24; k += 24, len -= 24) {
        a += iolab_le_bytes(k, 8);
        b += iolab_le_bytes(k + 8, 8);
        c += iolab_le_bytes(k + 16, 8);
        iolab_mix64(&a, &b, &c);
    }
    /* the last 0..23 bytes; c's lowest byte holds the length */
    c += length;
    a += iolab_le_bytes(k, len < 8 ? len : 8);
    if (len > 8)
        b += iolab_le_bytes(k + 8, len < 16 ? len - 8 : 8);
    if (len > 16)
        c += iolab_le_bytes(k + 16, len - 16) << 8;
    iolab_mix64(&a, &b, &c);
    return c;
}

/* ---- shared counter logic (static inline, no locking: caller holds rec->lock) ---- */

/* Darshan's 10 access-size bins, upper bounds inclusive. A compare chain, smallest first
 * (small accesses are the ones whose tracing cost shows): one compare for 0-100 bytes. */
static inline int iolab_size_bin(int64_t n)
{
    if (n <= 100) return 0;
    if (n <= 1024) return 1;
    if (n <= 10240) return 2;
    if (n <= 102400) return 3;
    if (n <= 1048576) return 4;
    if (n <= 4194304) return 5;
    if (n <= 10485760) return 6;
    if (n <= 104857600) return 7;
    if (n <= 1073741824) return 8;
    return 9;
}

/* Add [t0, t1] to *timer without counting again what overlaps the previous operation
 * (Darshan's rule, except that an operation inside the previous one adds nothing instead of
 * a negative time: it happens when threads overlap). */
static inline void iolab_time_add(double *timer, double t0, double t1, double *last_end)
{
    if (t1 <= *last_end)
        return;
    *timer += t1 - (t0 > *last_end ? t0 : *last_end);
    *last_end = t1;
}

/* Keep vals4/cnts4 ordered by count, then value (both descending), after value v reached
 * count freq. Same ordering as Darshan's common-value counters. */
static inline void iolab_top4_update(int64_t *vals4, int64_t *cnts4, int64_t v, int64_t freq)
{
    int64_t nv[4], nc[4];
    int n = 0, i = 0;
    if (v == 0)
        return;
    if (vals4[0] == v) { /* fast path: already the most common */
        cnts4[0] = freq;
        return;
    }
    for (; i < 4; i++) {
        if (cnts4[i] > freq || (cnts4[i] == freq && vals4[i] > v)) {
            nv[n] = vals4[i];
            nc[n++] = cnts4[i];
        } else {
            break;
        }
    }
    if (n == 4)
        return;
    nv[n] = v;
    nc[n++] = freq;
    for (; n < 4 && i < 4; i++) {
        if (vals4[i] != v) {
            nv[n] = vals4[i];
            nc[n++] = cnts4[i];
        }
    }
    for (; n < 4; n++) { nv[n] = 0; nc[n] = 0; }
    memcpy(vals4, nv, sizeof nv);
    memcpy(cnts4, nc, sizeof nc);
}

/* Count one occurrence of v (values beyond the first IOLAB_CVAL_MAX distinct ones are not
 * tracked, as in Darshan) and update the 4 most common. */
static inline void iolab_cval_add(iolab_cval_t *t, int64_t v, int64_t *vals4, int64_t *cnts4)
{
    int i = t->last;
    /* Fast path: the value counted last again (a run of equal sizes or strides), usually
     * already the most common: one compare, one increment, one store. */
    if (__builtin_expect(t->val[i] == v && i < t->n, 1)) {
        if (v == 0) /* zero is never listed: its slot, not its count, is what matters */
            return;
        int64_t f = ++t->freq[i];
        if (__builtin_expect(vals4[0] == v, 1))
            cnts4[0] = f;
        else
            iolab_top4_update(vals4, cnts4, v, f);
        return;
    }
    for (i = 0; i < t->n && t->val[i] != v; i++)
        ;
    if (i == t->n) {
        if (t->n == IOLAB_CVAL_MAX)
            return;
        t->val[i] = v;
        t->freq[i] = 0;
        t->n++;
    }
    t->last = i;
    t->freq[i]++;
    iolab_top4_update(vals4, cnts4, v, t->freq[i]);
}

/* Lock a record for an update (and mark it as used since the last reset). A process that
 * never started a thread needs no lock (glibc's __libc_single_threaded; it cannot change
 * between lock and unlock, since the tracer starts no thread in between). */
static inline void iolab_rec_lock(iolab_rec_t *r)
{
#ifdef IOLAB_HAVE_SINGLE_THREADED
    if (!__libc_single_threaded)
#endif
        pthread_mutex_lock(&r->lock);
    r->used = 1;
}

static inline void iolab_rec_unlock(iolab_rec_t *r)
{
#ifdef IOLAB_HAVE_SINGLE_THREADED
    if (!__libc_single_threaded)
#endif
        pthread_mutex_unlock(&r->lock);
}

/* The same pair for the data paths, which read glibc's flag once: it is a char, which the
 * counter updates in between may alias, so the compiler would load it again for the unlock.
 * Returns whether the record was locked; pass that to iolab_rec_unlock_if. */
static inline int iolab_rec_lock_io(iolab_rec_t *r)
{
    int locked = 1;
#ifdef IOLAB_HAVE_SINGLE_THREADED
    locked = !__libc_single_threaded;
#endif
    if (locked)
        pthread_mutex_lock(&r->lock);
    r->used = 1;
    return locked;
}

static inline void iolab_rec_unlock_if(iolab_rec_t *r, int locked)
{
    if (locked)
        pthread_mutex_unlock(&r->lock);
}

/* POSIX metadata time (open, close, seek, stat, rename): overlapping calls counted once. */
static inline void iolab_posix_meta_time(iolab_rec_t *r, double t0, double t1)
{
    iolab_time_add(&r->f[IOLAB_POSIX_F_META_TIME], t0, t1, &r->last_meta_end);
}

/* First-start / last-end timestamps. */
static inline void iolab_stamp(double *start, double *end, double t0, double t1)
{
    if (*start == 0 || *start > t0)
        *start = t0;
    *end = t1;
}

#endif
