/* libiolab-trace: writes one process's profile as compact JSON lines (docs/profile.md).
 *
 *   {"type":"process","v":1,...}                      who, when, how it ended, what was left out
 *   {"type":"names","v":1,"module":"POSIX",...}       counter names, in the order of the arrays
 *   {"type":"record","v":1,"module":"POSIX",...}      one per (module, file) used
 *   {"type":"segments","v":1,"ops":[...]}             trace mode only
 *
 * Runs once, at process end (or _exit, a fatal signal, MPI_Finalize), with the reentrancy
 * guard held; only real libc calls. The file appears atomically (written as .tmp, renamed).
 */
#include "iolab_trace_core.h"
#include "iolab_wrap.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#define OUTBUF (64 * 1024)
/* A string literal, its length counted by the compiler. */
#define OUT_LIT(o, lit) out_raw((o), (lit), sizeof(lit) - 1)

static const char *const names_posix_i[] = {
#define IOLAB_POSIX_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_posix_f[] = {
#define IOLAB_POSIX_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_stdio_i[] = {
#define IOLAB_STDIO_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_stdio_f[] = {
#define IOLAB_STDIO_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_mpiio_i[] = {
#define IOLAB_MPIIO_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_mpiio_f[] = {
#define IOLAB_MPIIO_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};

static const char *const names_h5f_i[] = {
#define IOLAB_H5F_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_h5f_f[] = {
#define IOLAB_H5F_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_h5d_i[] = {
#define IOLAB_H5D_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_h5d_f[] = {
#define IOLAB_H5D_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_pncf_i[] = {
#define IOLAB_PNETCDF_FILE_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_pncf_f[] = {
#define IOLAB_PNETCDF_FILE_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_pncv_i[] = {
#define IOLAB_PNETCDF_VAR_I(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};
static const char *const names_pncv_f[] = {
#define IOLAB_PNETCDF_VAR_F(name, kind, unit, doc) #name,
#include "iolab_counters.def"
    NULL};

static const char *const *const name_tables[IOLAB_NMODS][2] = {
    {names_posix_i, names_posix_f}, {names_stdio_i, names_stdio_f}, {names_mpiio_i, names_mpiio_f},
    {names_h5f_i, names_h5f_f},     {names_h5d_i, names_h5d_f},
    {names_pncf_i, names_pncf_f},   {names_pncv_i, names_pncv_f}};
static const int name_counts[IOLAB_NMODS][2] = {
    {IOLAB_POSIX_NI, IOLAB_POSIX_NF}, {IOLAB_STDIO_NI, IOLAB_STDIO_NF}, {IOLAB_MPIIO_NI, IOLAB_MPIIO_NF},
    {IOLAB_H5F_NI, IOLAB_H5F_NF},     {IOLAB_H5D_NI, IOLAB_H5D_NF},
    {IOLAB_PNETCDF_FILE_NI, IOLAB_PNETCDF_FILE_NF}, {IOLAB_PNETCDF_VAR_NI, IOLAB_PNETCDF_VAR_NF}};
static const char *const module_names[IOLAB_NMODS] = {"POSIX", "STDIO", "MPI-IO", "H5F", "H5D",
                                                       "PNETCDF_FILE", "PNETCDF_VAR"};

/* The counter name table, exported for the test that checks C and Python agree.
 * module: 0 POSIX, 1 STDIO, 2 MPI-IO; is_float: 0 counters, 1 fcounters. NULL past the end. */
const char *iolab_trace_counter_name(int module, int is_float, int i)
{
    if (module < 0 || module >= IOLAB_NMODS || is_float < 0 || is_float > 1 || i < 0 ||
        i >= name_counts[module][is_float])
        return NULL;
    return name_tables[module][is_float][i];
}

typedef struct {
    int fd;
    size_t len;
    int failed;
    char buf[OUTBUF];
} out_t;

static void out_flush(out_t *o)
{
    size_t done = 0;
    while (!o->failed && done < o->len) {
        ssize_t n = IOLAB_REAL(write)(o->fd, o->buf + done, o->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            o->failed = 1;
        else
            done += (size_t)n;
    }
    o->len = 0;
}

static void out_raw(out_t *o, const char *s, size_t n)
{
    while (n) {
        if (o->len == OUTBUF)
            out_flush(o);
        size_t k = OUTBUF - o->len < n ? OUTBUF - o->len : n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

__attribute__((format(printf, 2, 3))) static void out_fmt(out_t *o, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        out_raw(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A counter: most are 0, and a profile holds thousands of them, so integers are formatted
 * here rather than by vsnprintf (same text as "%lld", ~10x fewer instructions). */
static void out_int(out_t *o, int64_t v)
{
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    out_raw(o, p, (size_t)(tmp + sizeof tmp - p));
}

/* A float counter as "%.9g"; its usual value, +0, without vsnprintf. */
static void out_dbl(out_t *o, double v)
{
    if (v == 0 && !signbit(v))
        out_raw(o, "0", 1);
    else
        out_fmt(o, "%.9g", v);
}

/* A JSON string; bytes that are not printable ASCII are written as \u00XX escapes of the
 * raw byte (the reader turns them back into bytes, then decodes the path). */
static void out_str(out_t *o, const char *s, size_t n)
{
    OUT_LIT(o, "\"");
    size_t run = 0; /* start of the pending run of bytes written as they are */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c != '"' && c != '\\' && c >= 0x20 && c < 0x7f)
            continue;
        out_raw(o, s + run, i - run);
        run = i + 1;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            out_raw(o, e, 2);
        } else {
            out_fmt(o, "\\u%04x", c);
        }
    }
    out_raw(o, s + run, n - run);
    OUT_LIT(o, "\"");
}

static void write_cmdline(out_t *o)
{
    char buf[8192];
    ssize_t n = 0;
    int fd = IOLAB_REAL(open)("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = IOLAB_REAL(read)(fd, buf, sizeof buf);
        IOLAB_REAL(close)(fd);
    }
    OUT_LIT(o, "[");
    for (ssize_t i = 0, first = 1; i < n; first = 0) {
        size_t len = strnlen(buf + i, (size_t)(n - i));
        if (!first)
            OUT_LIT(o, ",");
        out_str(o, buf + i, len);
        i += (ssize_t)len + 1;
    }
    OUT_LIT(o, "]");
}

/* "hints":{"path":"k=v;...",...}: MPI-IO hints in effect at each open. */
static void write_hints(out_t *o)
{
    OUT_LIT(o, ",\"hints\":{");
    const char *p = iolab_core.hints, *end = p + iolab_core.hints_used;
    for (int first = 1; p < end; first = 0) {
        const char *tab = memchr(p, '\t', (size_t)(end - p));
        const char *nl = tab ? memchr(tab, '\n', (size_t)(end - tab)) : NULL;
        if (!nl)
            break;
        if (!first)
            OUT_LIT(o, ",");
        out_str(o, p, (size_t)(tab - p));
        OUT_LIT(o, ":");
        out_str(o, tab + 1, (size_t)(nl - tab - 1));
        p = nl + 1;
    }
    OUT_LIT(o, "}");
}

static void write_process(out_t *o, const char *reason, int partial)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double end = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    uint64_t segs = atomic_load(&iolab_core.seg_next);
    const char *jobid = getenv("SLURM_JOB_ID");
    if (!jobid)
        jobid = getenv("PBS_JOBID");
    out_fmt(o, "{\"type\":\"process\",\"v\":1,\"pid\":%d,\"ppid\":%d,\"uid\":%d,\"jobid\":",
            (int)getpid(), (int)getppid(), (int)getuid());
    out_str(o, jobid ? jobid : "", jobid ? strlen(jobid) : 0);
    OUT_LIT(o, ",\"host\":");
    out_str(o, host, strlen(host));
    out_fmt(o, ",\"rank\":%d,\"nprocs\":%d,\"mpi\":%s,\"start_unix\":%.6f,\"end_unix\":%.6f,",
            iolab_core.rank, iolab_core.nprocs, iolab_core.mpi ? "true" : "false",
            iolab_core.start_unix, end);
    out_fmt(o, "\"end\":\"%s\",\"partial\":%s,\"trace\":%s,\"cmdline\":", reason,
            partial ? "true" : "false", iolab_core_tracing ? "true" : "false");
    write_cmdline(o);
    write_hints(o);
    out_fmt(o, ",\"left_out\":{\"POSIX\":%llu,\"STDIO\":%llu,\"MPI-IO\":%llu,\"H5F\":%llu,"
               "\"H5D\":%llu,\"PNETCDF_FILE\":%llu,\"PNETCDF_VAR\":%llu,\"fds\":%llu,"
               "\"names\":%llu,\"handles\":%llu,\"hints\":%llu,\"segments\":%llu}}\n",
            (unsigned long long)iolab_core.left[0], (unsigned long long)iolab_core.left[1],
            (unsigned long long)iolab_core.left[2], (unsigned long long)iolab_core.left[3],
            (unsigned long long)iolab_core.left[4], (unsigned long long)iolab_core.left[5],
            (unsigned long long)iolab_core.left[6],
            (unsigned long long)iolab_core.left_misc[IOLAB_LEFT_FDS],
            (unsigned long long)iolab_core.left_misc[IOLAB_LEFT_NAMES],
            (unsigned long long)iolab_core.left_misc[IOLAB_LEFT_HANDLES],
            (unsigned long long)iolab_core.left_misc[IOLAB_LEFT_HINTS],
            (unsigned long long)(segs > iolab_core.seg_cap ? segs - iolab_core.seg_cap : 0));
}

static void write_names(out_t *o, int m)
{
    out_fmt(o, "{\"type\":\"names\",\"v\":1,\"module\":\"%s\"", module_names[m]);
    for (int k = 0; k < 2; k++) {
        OUT_LIT(o, ",\"");
        out_raw(o, k ? "f" : "i", 1);
        OUT_LIT(o, "\":[");
        for (int i = 0; i < name_counts[m][k]; i++) {
            if (i)
                out_raw(o, ",", 1);
            out_raw(o, "\"", 1); /* counter names: [A-Z0-9_], nothing to escape */
            out_raw(o, name_tables[m][k][i], strlen(name_tables[m][k][i]));
            out_raw(o, "\"", 1);
        }
        OUT_LIT(o, "]");
    }
    OUT_LIT(o, "}\n");
}

/* Every float counter is a time or a timestamp at run time: scaled from ticks to seconds. */
static void write_record(out_t *o, iolab_rec_t *r, int idx, int in_signal, double tick)
{
    iolab_rec_t copy;
    int locked = in_signal ? pthread_mutex_trylock(&r->lock) == 0
                           : pthread_mutex_lock(&r->lock) == 0;
    memcpy(copy.c, r->c, sizeof copy.c);
    memcpy(copy.f, r->f, sizeof copy.f);
    if (locked)
        pthread_mutex_unlock(&r->lock);
    const char *path = iolab_core.names + r->path;
    out_fmt(o, "{\"type\":\"record\",\"v\":1,\"module\":\"%s\",\"idx\":%d,\"id\":\"%016llx\",",
            module_names[r->module], idx, (unsigned long long)r->id);
    if (r->reduced) { /* already in seconds, since time_base */
        out_fmt(o, "\"rank\":-1,\"time_base_unix\":%.6f,", r->time_base);
        tick = 1.0;
    }
    OUT_LIT(o, "\"path\":");
    out_str(o, path, strlen(path));
    if (!r->used) { /* merged into rank 0's reduced record: the name only */
        static const char tail[] = ",\"merged\":true,\"i\":[],\"f\":[]}\n";
        out_raw(o, tail, sizeof tail - 1);
        return;
    }
    OUT_LIT(o, ",\"i\":[");
    for (int i = 0; i < name_counts[r->module][0]; i++) {
        if (i)
            out_raw(o, ",", 1);
        out_int(o, copy.c[i]);
    }
    OUT_LIT(o, "],\"f\":[");
    for (int i = 0; i < name_counts[r->module][1]; i++) {
        if (i)
            out_raw(o, ",", 1);
        out_dbl(o, copy.f[i] * tick);
    }
    OUT_LIT(o, "]}\n");
}

static void write_segments(out_t *o, double tick)
{
    uint64_t n = atomic_load(&iolab_core.seg_next);
    if (n > iolab_core.seg_cap)
        n = iolab_core.seg_cap;
    for (uint64_t i = 0; i < n; i++) {
        iolab_segment_t *s = &iolab_core.segs[i];
        if (i % 1000 == 0)
            out_fmt(o, "%s{\"type\":\"segments\",\"v\":1,\"ops\":[", i ? "]}\n" : "");
        out_fmt(o, "%s[\"%s\",%d,\"%c\",%lld,%lld,%.9g,%.9g]", i % 1000 ? "," : "",
                module_names[s->module], s->rec, s->write ? 'w' : 'r', (long long)s->offset,
                (long long)s->length, s->start * tick, s->end * tick);
    }
    if (n)
        OUT_LIT(o, "]}\n");
}

/* A record worth writing: touched, and for the standard streams (<STDOUT>...) read from or
 * written to, as Darshan drops them otherwise. */
static int rec_wanted(const iolab_rec_t *r)
{
    if (!r->used)
        return 0;
    return !(r->module == IOLAB_MOD_STDIO && iolab_core.names[r->path] == '<' &&
             r->c[IOLAB_STDIO_READS] == 0 && r->c[IOLAB_STDIO_WRITES] == 0);
}

static int any_records(void)
{
    for (int m = 0; m < IOLAB_NMODS; m++)
        for (uint32_t i = 0; i < iolab_core.pool[m].n; i++)
            if (rec_wanted(&iolab_core.pool[m].recs[i]))
                return 1;
    return 0;
}

static void warn_once(const char *what, const char *path)
{
    char msg[PATH_MAX + 200];
    int n = snprintf(msg, sizeof msg, "iolab-trace: warning: cannot %s %s (%s); no profile for pid %d\n",
                     what, path, strerror(errno), (int)getpid());
    if (n > 0)
        IOLAB_REAL(write)(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

void iolab_writer_write(const char *reason, int partial)
{
    static out_t out; /* 64 KiB: not on the (possibly small) stack of a signal handler */
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    char host[64] = "";
    if (!iolab_core.mpi && !any_records())
        return; /* a process that touched no file leaves no file behind */
    gethostname(host, sizeof host - 1);
    for (char *c = host; *c; c++)
        if (*c == '/' || *c == '.')
            *c = '_';
    snprintf(path, sizeof path, "%s/%s.%d.%lld.iolabp", iolab_core.outdir, host, (int)getpid(),
             (long long)(iolab_core.start_unix * 1e6));
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    out.fd = IOLAB_REAL(open)(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out.fd < 0) {
        warn_once("write the profile into", iolab_core.outdir);
        return;
    }
    out.len = 0;
    out.failed = 0;
    int in_signal = partial;
    double tick = iolab_core_seconds_per_tick();
    write_process(&out, reason, partial);
    for (int m = 0; m < IOLAB_NMODS; m++) {
        if (!iolab_core.pool[m].n)
            continue;
        write_names(&out, m);
        for (uint32_t i = 0; i < iolab_core.pool[m].n; i++)
            if (rec_wanted(&iolab_core.pool[m].recs[i]) ||
                (iolab_core_tracing && iolab_core.pool[m].recs[i].merged))
                write_record(&out, &iolab_core.pool[m].recs[i], (int)i, in_signal, tick);
    }
    if (iolab_core_tracing)
        write_segments(&out, tick);
    out_flush(&out);
    int failed = out.failed;
    IOLAB_REAL(close)(out.fd);
    if (failed || IOLAB_REAL(rename)(tmp, path) != 0) {
        warn_once("write the profile", path);
        unlink(tmp);
    }
}
