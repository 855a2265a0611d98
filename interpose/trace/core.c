/* libiolab-trace core: start-up, bounded record pools, fd and handle maps, trace buffer,
 * fork and signal handling. The wrappers (posix.c, stdio.c) and the MPI shim call in here;
 * the profile is written by writer.c at process end.
 */
#include "iolab_trace.h"

#include <dlfcn.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "iolab_trace_core.h"

int iolab_core_active = 0;
int iolab_core_use_tsc = 0;
uint64_t iolab_core_tsc0 = 0;
static double mono0; /* CLOCK_MONOTONIC at start, for the TSC calibration */
int iolab_core_tracing = 0;
double iolab_core_t0 = 0;
__thread int iolab_core_busy __attribute__((tls_model("initial-exec"))) = 0;

iolab_core_state_t iolab_core;
_Atomic int32_t *iolab_core_fdmap = NULL;
size_t iolab_core_nfds = 0;
iolab_rec_t *iolab_core_posix_recs = NULL;
iolab_rec_t *iolab_core_stdio_recs = NULL;
iolab_handle_t *iolab_core_stdio_handles = NULL;
iolab_handle_t *iolab_core_mpiio_handles = NULL;
iolab_rec_t *iolab_core_mpiio_recs = NULL;
uint64_t iolab_core_mem_align = sizeof(void *);

static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;

_Static_assert(IOLAB_POSIX_NI <= IOLAB_MAX_NI && IOLAB_STDIO_NI <= IOLAB_MAX_NI &&
                   IOLAB_MPIIO_NI <= IOLAB_MAX_NI && IOLAB_H5F_NI <= IOLAB_MAX_NI &&
                   IOLAB_H5D_NI <= IOLAB_MAX_NI && IOLAB_PNETCDF_FILE_NI <= IOLAB_MAX_NI &&
                   IOLAB_PNETCDF_VAR_NI <= IOLAB_MAX_NI, "raise IOLAB_MAX_NI");
_Static_assert(IOLAB_POSIX_NF <= IOLAB_MAX_NF && IOLAB_STDIO_NF <= IOLAB_MAX_NF &&
                   IOLAB_MPIIO_NF <= IOLAB_MAX_NF && IOLAB_H5F_NF <= IOLAB_MAX_NF &&
                   IOLAB_H5D_NF <= IOLAB_MAX_NF && IOLAB_PNETCDF_FILE_NF <= IOLAB_MAX_NF &&
                   IOLAB_PNETCDF_VAR_NF <= IOLAB_MAX_NF, "raise IOLAB_MAX_NF");

void *iolab_core_resolve(const char *name)
{
    int was = iolab_core_busy;
    iolab_core_busy = 1;
    void *p = dlsym(RTLD_NEXT, name);
    iolab_core_busy = was;
    return p;
}

static void *map_zeroed(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < lo)
        return dflt;
    return v > hi ? hi : v;
}

/* ---- records ---- */

iolab_rec_t *iolab_core_rec_at(iolab_module_t mod, int32_t idx)
{
    if (idx < 0 || (uint32_t)idx >= atomic_load_explicit(&iolab_core.pool[mod].n, memory_order_acquire))
        return NULL;
    return &iolab_core.pool[mod].recs[idx];
}

int32_t iolab_core_rec_index(const iolab_rec_t *rec)
{
    return (int32_t)(rec - iolab_core.pool[rec->module].recs);
}

const char *iolab_core_rec_path(const iolab_rec_t *rec) { return iolab_core.names + rec->path; }

static void rec_init_counters(iolab_rec_t *r)
{
    memset(r->c, 0, sizeof r->c);
    memset(r->f, 0, sizeof r->f);
    r->used = 0;
    r->reduced = 0;
    r->merged = 0;
    r->last_io = IOLAB_IO_NONE;
    r->offset = r->last_byte_read = r->last_byte_written = 0;
    r->last_read_end = r->last_write_end = r->last_meta_end = 0;
    memset(&r->access, 0, sizeof r->access);
    memset(&r->stride, 0, sizeof r->stride);
    if (r->module == IOLAB_MOD_POSIX)
        r->c[IOLAB_POSIX_MEM_ALIGNMENT] = iolab_core.mem_alignment;
    pthread_mutex_init(&r->lock, NULL);
}

/* Caller holds core_lock. */
static iolab_rec_t *find_locked(iolab_pool_t *p, const char *path, uint64_t id, uint32_t b)
{
    for (int32_t i = p->bucket[b] - 1; i >= 0; i = p->recs[i].next - 1)
        if (p->recs[i].id == id && strcmp(iolab_core.names + p->recs[i].path, path) == 0)
            return &p->recs[i];
    return NULL;
}

iolab_rec_t *iolab_core_find(iolab_module_t mod, const char *path)
{
    iolab_pool_t *p = &iolab_core.pool[mod];
    uint64_t id = iolab_record_id(path); /* also the bucket hash */
    pthread_mutex_lock(&core_lock);
    iolab_rec_t *r = find_locked(p, path, id, (uint32_t)(id & (p->nbuckets - 1)));
    pthread_mutex_unlock(&core_lock);
    return r;
}

iolab_rec_t *iolab_core_record(iolab_module_t mod, const char *path)
{
    iolab_pool_t *p = &iolab_core.pool[mod];
    uint64_t id = iolab_record_id(path); /* also the bucket hash */
    uint32_t b = (uint32_t)(id & (p->nbuckets - 1));
    pthread_mutex_lock(&core_lock);
    iolab_rec_t *found = find_locked(p, path, id, b);
    if (!found) {
        uint32_t n = atomic_load_explicit(&p->n, memory_order_relaxed);
        size_t len = strlen(path) + 1;
        if (n >= p->cap) {
            iolab_core.left[mod]++;
        } else if (iolab_core.names_used + len > iolab_core.names_cap) {
            iolab_core.left_misc[IOLAB_LEFT_NAMES]++;
        } else {
            found = &p->recs[n];
            found->module = (uint8_t)mod;
            found->id = id;
            found->path = (uint32_t)iolab_core.names_used;
            memcpy(iolab_core.names + iolab_core.names_used, path, len);
            iolab_core.names_used += len;
            rec_init_counters(found);
            found->next = p->bucket[b];
            p->bucket[b] = (int32_t)n + 1;
            atomic_store_explicit(&p->n, n + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&core_lock);
    return found;
}

int64_t iolab_core_mem_alignment(void) { return iolab_core.mem_alignment; }

void iolab_core_left_out(int what)
{
    pthread_mutex_lock(&core_lock);
    iolab_core.left_misc[what]++;
    pthread_mutex_unlock(&core_lock);
}

/* ---- paths ---- */

/* Drop "." and "//", resolve ".." lexically (like Darshan, symlinks are kept). */
static void normalise(char *p)
{
    char *out = p, *in = p;
    while (*in) {
        while (*in == '/')
            in++;
        char *seg = in;
        while (*in && *in != '/')
            in++;
        size_t len = (size_t)(in - seg);
        if (len == 0 || (len == 1 && seg[0] == '.'))
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > p && *--out != '/')
                ;
            continue;
        }
        *out++ = '/';
        memmove(out, seg, len);
        out += len;
    }
    if (out == p)
        *out++ = '/';
    *out = '\0';
}

int iolab_core_abspath(const char *dirpath, const char *path, char *out, size_t outlen)
{
    size_t plen = strlen(path);
    if (path[0] == '/') {
        if (plen + 1 > outlen)
            return -1;
        memcpy(out, path, plen + 1);
    } else {
        if (dirpath) {
            size_t dl = strlen(dirpath);
            if (dl + plen + 2 > outlen)
                return -1;
            memcpy(out, dirpath, dl);
            out[dl] = '\0';
        } else if (!getcwd(out, outlen)) {
            return -1;
        }
        size_t dl = strlen(out);
        if (dl + plen + 2 > outlen)
            return -1;
        out[dl] = '/';
        memcpy(out + dl + 1, path, plen + 1);
    }
    normalise(out);
    return 0;
}

const char *iolab_core_strip_fs_prefix(const char *name)
{
    const char *p = name;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '_')
        p++;
    return *p == ':' && p - name >= 2 ? p + 1 : name;
}

int iolab_core_excluded(const char *p)
{
#define PREFIX(s) {s, sizeof(s) - 1}
    static const struct {
        const char *s;
        size_t n;
    } prefixes[] = {PREFIX("/etc/"), PREFIX("/dev/"), PREFIX("/usr/"), PREFIX("/bin/"),
                    PREFIX("/boot/"), PREFIX("/lib/"), PREFIX("/lib64/"), PREFIX("/opt/"),
                    PREFIX("/sbin/"), PREFIX("/sys/"), PREFIX("/proc/"), PREFIX("/var/"),
                    PREFIX("/run/"), PREFIX("/snap/")};
#undef PREFIX
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) /* cheap first letter */
        if (p[1] == prefixes[i].s[1] && strncmp(p, prefixes[i].s, prefixes[i].n) == 0)
            return 1;
    size_t n = iolab_core.outdir_len;
    return n && p[1] == iolab_core.outdir[1] && strncmp(p, iolab_core.outdir, n) == 0 &&
           (p[n] == '/' || p[n] == '\0');
}

/* ---- fd map: fd -> record index + 1 (0: not traced) ---- */

void iolab_core_fd_set(int fd, int32_t idx)
{
    if (fd < 0)
        return;
    if ((size_t)fd >= iolab_core_nfds) {
        if (idx >= 0)
            iolab_core_left_out(IOLAB_LEFT_FDS);
        return;
    }
    atomic_store_explicit(&iolab_core_fdmap[fd], idx + 1, memory_order_relaxed);
}

void iolab_core_fd_forget(unsigned int first, unsigned int last)
{
    for (size_t fd = first; fd < iolab_core_nfds && fd <= last; fd++)
        atomic_store_explicit(&iolab_core_fdmap[fd], 0, memory_order_relaxed);
}

/* ---- handle maps (open addressing; lock-free lookups, inserts under the core lock) ---- */

#define HANDLE_TOMB ((uintptr_t)1)

static inline uint32_t handle_slot(uintptr_t key) { return iolab_handle_slot(key); }

int32_t iolab_core_handle_get(int map, uintptr_t key)
{
    if (key == 0 || key == HANDLE_TOMB) /* never a handle: would match an empty/deleted slot */
        return -1;
    return iolab_handle_lookup(iolab_core.handles[map], key);
}

void iolab_core_handle_put(int map, uintptr_t key, int32_t idx)
{
    iolab_handle_t *t = iolab_core.handles[map];
    uint32_t i = handle_slot(key), n = 0, slot = UINT32_MAX;
    pthread_mutex_lock(&core_lock);
    for (; n < IOLAB_HANDLE_SLOTS; n++, i = (i + 1) & (IOLAB_HANDLE_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&t[i].key, memory_order_relaxed);
        if (k == key) {
            slot = i;
            break;
        }
        if (k == HANDLE_TOMB && slot == UINT32_MAX)
            slot = i;
        if (k == 0) {
            if (slot == UINT32_MAX)
                slot = i;
            break;
        }
    }
    if (slot == UINT32_MAX) {
        iolab_core.left_misc[IOLAB_LEFT_HANDLES]++;
    } else {
        atomic_store_explicit(&t[slot].idx, idx, memory_order_relaxed);
        atomic_store_explicit(&t[slot].key, key, memory_order_release);
    }
    pthread_mutex_unlock(&core_lock);
}

void iolab_core_handle_del(int map, uintptr_t key)
{
    iolab_handle_t *t = iolab_core.handles[map];
    pthread_mutex_lock(&core_lock);
    for (uint32_t i = handle_slot(key), n = 0; n < IOLAB_HANDLE_SLOTS; n++, i = (i + 1) & (IOLAB_HANDLE_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&t[i].key, memory_order_relaxed);
        if (k == 0)
            break;
        if (k == key) {
            atomic_store_explicit(&t[i].idx, -1, memory_order_relaxed);
            atomic_store_explicit(&t[i].key, HANDLE_TOMB, memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&core_lock);
}

/* ---- trace mode ---- */

void iolab_core_trace_add(const iolab_rec_t *rec, int write, int64_t off, int64_t len,
                          double t0, double t1)
{
    uint64_t i = atomic_fetch_add_explicit(&iolab_core.seg_next, 1, memory_order_relaxed);
    if (i >= iolab_core.seg_cap)
        return; /* counted at write time: seg_next - seg_cap */
    iolab_segment_t *s = &iolab_core.segs[i];
    s->module = rec->module;
    s->write = (uint8_t)write;
    s->rec = iolab_core_rec_index(rec);
    s->offset = off;
    s->length = len;
    s->start = t0;
    s->end = t1;
}

/* ---- hints ---- */

void iolab_trace_note_hints(const char *path, const char *hints)
{
    size_t need = strlen(path) + strlen(hints) + 2;
    pthread_mutex_lock(&core_lock);
    if (iolab_core.hints_used + need + 1 > sizeof iolab_core.hints || strchr(path, '\t') ||
        strchr(path, '\n') || strchr(hints, '\n')) {
        iolab_core.left_misc[IOLAB_LEFT_HINTS]++;
    } else {
        char *p = iolab_core.hints + iolab_core.hints_used;
        iolab_core.hints_used += (size_t)snprintf(p, need + 1, "%s\t%s\n", path, hints);
    }
    pthread_mutex_unlock(&core_lock);
}

/* ---- rank ---- */

void iolab_trace_set_rank(int rank, int nprocs)
{
    iolab_core.rank = rank;
    iolab_core.nprocs = nprocs;
    iolab_core.mpi = 1;
}

static void guess_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE",
                                        "SLURM_NTASKS"};
    iolab_core.rank = 0;
    iolab_core.nprocs = 1;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *r = getenv(vars[i]), *n = getenv(sizes[i]);
        /* A batch script's shell has SLURM_PROCID=0 too but is no task of a step: only a
         * step's tasks (SLURM_STEP_ID / SLURM_STEPID set) are ranks. */
        if (strcmp(vars[i], "SLURM_PROCID") == 0 && !getenv("SLURM_STEP_ID") &&
            !getenv("SLURM_STEPID"))
            continue;
        if (r && n) {
            iolab_core.rank = atoi(r);
            iolab_core.nprocs = atoi(n);
            iolab_core.mpi = 1;
            return;
        }
    }
}

/* ---- start, fork, signals, end ---- */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Invariant TSC (CPUID 0x80000007, EDX bit 8): same rate on every core, in every state. */
static int tsc_invariant(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
        return 0;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    return (d >> 8) & 1;
#else
    return 0;
#endif
}

static void set_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    iolab_core.start_unix = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    mono0 = mono_now();
    iolab_core_t0 = mono0;
#if defined(__x86_64__)
    iolab_core_tsc0 = __builtin_ia32_rdtsc();
#endif
    iolab_core.pid = getpid();
}

double iolab_core_seconds_per_tick(void)
{
#if defined(__x86_64__)
    if (iolab_core_use_tsc) {
        double ticks = (double)(__builtin_ia32_rdtsc() - iolab_core_tsc0);
        double secs = mono_now() - mono0;
        return ticks > 0 && secs > 0 ? secs / ticks : 0.0;
    }
#endif
    return 1.0;
}

static void on_fork_prepare(void) { pthread_mutex_lock(&core_lock); }
static void on_fork_parent(void) { pthread_mutex_unlock(&core_lock); }

/* The child starts a fresh profile: same files and descriptors, counters at zero. */
static void on_fork_child(void)
{
    pthread_mutex_init(&core_lock, NULL);
    iolab_posix_after_fork();
    for (int m = 0; m < IOLAB_NMODS; m++) {
        iolab_pool_t *p = &iolab_core.pool[m];
        for (uint32_t i = 0; i < p->n; i++) {
            iolab_rec_t *r = &p->recs[i];
            int64_t falign = r->module == IOLAB_MOD_POSIX ? r->c[IOLAB_POSIX_FILE_ALIGNMENT] : 0;
            rec_init_counters(r);
            if (r->module == IOLAB_MOD_POSIX)
                r->c[IOLAB_POSIX_FILE_ALIGNMENT] = falign;
            if (r->module == IOLAB_MOD_STDIO && iolab_core.names[r->path] == '<')
                r->c[IOLAB_STDIO_OPENS] = 1; /* the standard streams: open since the start */
        }
        iolab_core.left[m] = 0;
    }
    memset(iolab_core.left_misc, 0, sizeof iolab_core.left_misc);
    atomic_store(&iolab_core.seg_next, 0);
    atomic_store(&iolab_core.written, 0);
    atomic_store(&iolab_core.flushed, 0);
    set_clock();
}

/* Launchers are not the application: no profile of mpirun, orted, srun... */
static int is_launcher(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    static const char *const names[] = {"orterun", "orted", "prterun", "prted", "mpirun",
                                        "mpiexec", "mpiexec.hydra", "hydra_pmi_proxy",
                                        "srun", "slurmstepd"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(base, names[i]) == 0)
            return 1;
    return 0;
}

/* A second copy of the tracer in the process (libiolab-trace.so and a library that contains
 * it, such as libiolab-trace-mpi-hdf5.so, both preloaded): only the copy the loader finds
 * first traces, so a process writes one profile; the other passes everything through. */
static int another_tracer_first(void)
{
    /* The program's handle searches the loader's global order; RTLD_DEFAULT would start
     * with this library itself (linked -Bsymbolic). */
    void *prog = dlopen(NULL, RTLD_LAZY);
    void *first = prog ? dlsym(prog, "iolab_core_active") : NULL;
    return first != NULL && first != (void *)&iolab_core_active;
}

static int alloc_tables(void)
{
    static const long caps[IOLAB_NMODS] = {4096, 1024, 1024, 256, 1024, 256, 1024};
    long maxrec = env_long("IOLAB_TRACE_MAX_RECORDS", 0, 1, 1L << 20);
    for (int m = 0; m < IOLAB_NMODS; m++) {
        iolab_pool_t *p = &iolab_core.pool[m];
        p->cap = (uint32_t)(maxrec ? maxrec : caps[m]);
        p->nbuckets = 1;
        while (p->nbuckets < 2 * p->cap)
            p->nbuckets <<= 1;
        p->recs = map_zeroed(p->cap * sizeof(iolab_rec_t));
        p->bucket = map_zeroed(p->nbuckets * sizeof(int32_t));
        if (!p->recs || !p->bucket)
            return -1;
    }
    iolab_core.names_cap = (size_t)env_long("IOLAB_TRACE_NAME_BYTES", 4L << 20, 4096, 1L << 30);
    iolab_core.names = map_zeroed(iolab_core.names_cap);
    struct rlimit rl;
    size_t nfds = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > 65536)
        nfds = rl.rlim_max > (1u << 20) ? (1u << 20) : rl.rlim_max;
    iolab_core_fdmap = map_zeroed(nfds * sizeof(*iolab_core_fdmap));
    iolab_core_posix_recs = iolab_core.pool[IOLAB_MOD_POSIX].recs;
    iolab_core_stdio_recs = iolab_core.pool[IOLAB_MOD_STDIO].recs;
    if (iolab_core_fdmap) /* the wrappers read the map as soon as its size is not 0 */
        iolab_core_nfds = nfds;
    for (int h = 0; h < IOLAB_NHANDLE_MAPS; h++) {
        iolab_core.handles[h] = map_zeroed(IOLAB_HANDLE_SLOTS * sizeof(iolab_handle_t));
        if (!iolab_core.handles[h])
            return -1;
    }
    if (!iolab_core.names || !iolab_core_fdmap)
        return -1;
    iolab_core_stdio_handles = iolab_core.handles[0];
    iolab_core_mpiio_handles = iolab_core.handles[1];
    iolab_core_mpiio_recs = iolab_core.pool[IOLAB_MOD_MPIIO].recs;
    if (iolab_core_tracing) {
        iolab_core.seg_cap = (uint64_t)env_long("IOLAB_TRACE_SEGMENTS", 1L << 20, 1, 1L << 28);
        iolab_core.segs = map_zeroed(iolab_core.seg_cap * sizeof(iolab_segment_t));
        if (!iolab_core.segs)
            iolab_core.seg_cap = 0;
    }
    return 0;
}

__attribute__((constructor)) static void iolab_core_start(void)
{
    const char *dir = getenv("IOLAB_TRACE_DIR");
    iolab_core_busy = 1;
    iolab_resolve_all();
    if (!dir || !*dir || strlen(dir) >= sizeof iolab_core.outdir / 2 || is_launcher() ||
        another_tracer_first()) {
        iolab_core_busy = 0;
        return; /* not asked for, a launcher, or traced by another copy: pass through */
    }
    if (dir[0] == '/' || !getcwd(iolab_core.outdir, sizeof iolab_core.outdir) ||
        strlen(iolab_core.outdir) + strlen(dir) + 2 > sizeof iolab_core.outdir)
        iolab_core.outdir[0] = '\0';
    else
        strcat(iolab_core.outdir, "/"); /* relative: to the start folder, whatever chdir does */
    strcat(iolab_core.outdir, dir);
    iolab_core.outdir_len = strlen(iolab_core.outdir);
    while (iolab_core.outdir_len > 1 && iolab_core.outdir[iolab_core.outdir_len - 1] == '/')
        iolab_core.outdir[--iolab_core.outdir_len] = '\0';
    iolab_core_tracing = env_long("IOLAB_TRACE_DXT", 0, 0, 1) == 1;
    iolab_core.mem_alignment = env_long("IOLAB_MEM_ALIGNMENT", (long)sizeof(void *), 1, 1L << 20);
    iolab_core_mem_align = (uint64_t)iolab_core.mem_alignment;
    if (alloc_tables() != 0) {
        iolab_core_busy = 0;
        return;
    }
    guess_rank();
    iolab_stdio_std_open();
    iolab_core_use_tsc = tsc_invariant() && env_long("IOLAB_TRACE_CLOCK_GETTIME", 0, 0, 1) == 0;
    set_clock();
    pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
    iolab_signals_install();
    iolab_core_active = 1;
    iolab_core_busy = 0;
}

__attribute__((destructor)) static void iolab_core_stop(void)
{
    if (iolab_core_active)
        iolab_trace_flush("exit", 0);
}

void iolab_trace_flush_before_exec(void)
{
    iolab_trace_flush("exec", 0);
}

void iolab_trace_exec_failed(void)
{
    /* Still this image: the profile at exit replaces the one written before exec (same name). */
    if (iolab_core_active && getpid() == iolab_core.pid) {
        atomic_store(&iolab_core.flushed, 0);
        atomic_store(&iolab_core.written, 0);
    }
}

void iolab_trace_flush(const char *reason, int partial)
{
    if (!iolab_core_active || getpid() != iolab_core.pid) /* vfork child: not our profile */
        return;
    if (atomic_exchange(&iolab_core.written, 1)) {
        /* Another thread is writing it (exit racing a signal): let it finish first. */
        for (int i = 0; i < 2000 && !atomic_load(&iolab_core.flushed); i++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        return;
    }
    int was = iolab_core_busy;
    int saved = errno;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    /* A SIGTERM arriving now (multiprocessing's terminate()) waits until the file is complete. */
    pthread_sigmask(SIG_BLOCK, &block, &old);
    iolab_core_busy = 1;
    iolab_writer_write(reason, partial);
    atomic_store(&iolab_core.flushed, 1);
    iolab_core_busy = was;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
}
