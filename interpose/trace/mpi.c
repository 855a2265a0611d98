/* libiolab-trace-mpi: the MPI-IO module, through the PMPI profiling interface.
 *
 * Used by `iolab profile` for MPI programs only, inside libiolab-trace-with-mpi.so (or
 * libiolab-trace-mpi-hdf5.so) with the tracer, or as libiolab-trace-mpi.so preloaded before
 * libiolab-trace.so when those are not built: it defines
 * both MPI_x and PMPI_x for MPI_Init*, MPI_Finalize and MPI_File_* (Open MPI's Fortran
 * bindings, and any PMPI tool, call PMPI_x directly: a wrapper of MPI_x alone misses them)
 * and reaches the MPI library's PMPI_x through dlsym(RTLD_NEXT), never by name (the name
 * binds back here). A thread-local depth guard counts a call once when the library's
 * MPI_x calls another wrapped function inside (as Darshan does); records live in the core's
 * MPI-IO pool. The shared records are reduced at MPI_Finalize, as Darshan does
 * (mpi_reduce.c); with IOLAB_TRACE_NO_REDUCE=1 the loader reduces them instead
 * (src/iolab/sources/profile_reduce.py). Counting follows Darshan's MPI-IO module:
 * an access's size is count x datatype size; split collectives count at _begin.
 */
#include <mpi.h>

#include "iolab_trace.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#define C(r, n) ((r)->c[IOLAB_MPIIO_##n])
#define F(r, n) ((r)->f[IOLAB_MPIIO_F_##n])
#define MAP_MPIIO 1

enum { K_INDEP, K_COLL, K_SPLIT, K_NB };

static inline uintptr_t fh_key(MPI_File fh) { return (uintptr_t)fh; }

/* The file's record, NULL when not traced: one inlined hash probe, no call into the core. */
static inline iolab_rec_t *fh_rec(MPI_File fh)
{
    if (!iolab_core_mpiio_handles)
        return NULL;
    int32_t i = iolab_handle_lookup(iolab_core_mpiio_handles, fh_key(fh));
    return i >= 0 ? &iolab_core_mpiio_recs[i] : NULL;
}

/* ---- recording ---- */

static void set_rank(void)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    iolab_trace_set_rank(rank, size);
}

/* The hints the MPI library uses for this file, as "key=value;...". */
static void note_hints(MPI_File fh, const char *path)
{
    MPI_Info info;
    int nkeys = 0, flag = 0;
    char key[MPI_MAX_INFO_KEY + 1], val[256], text[4096];
    size_t used = 0;
    if (PMPI_File_get_info(fh, &info) != MPI_SUCCESS)
        return;
    PMPI_Info_get_nkeys(info, &nkeys);
    text[0] = '\0';
    for (int i = 0; i < nkeys && used < sizeof text; i++) {
        if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS)
            continue;
        PMPI_Info_get(info, key, (int)sizeof val - 1, val, &flag);
        if (flag)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%s=%s", used ? ";" : "",
                                     key, val);
    }
    PMPI_Info_free(&info);
    iolab_trace_note_hints(path, text);
}

static void rec_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh,
                     int ret, double t0, double t1)
{
    char abs[PATH_MAX];
    if (ret != MPI_SUCCESS || !fh ||
        iolab_core_abspath(NULL, iolab_core_strip_fs_prefix(name), abs, sizeof abs) != 0)
        return;
    iolab_rec_t *r = iolab_core_record(IOLAB_MOD_MPIIO, abs);
    if (!r)
        return;
    int size = 1;
    PMPI_Comm_size(comm, &size);
    iolab_core_handle_put(MAP_MPIIO, fh_key(*fh), iolab_core_rec_index(r));
    note_hints(*fh, abs);
    iolab_rec_lock(r);
    C(r, MODE) = amode;
    if (size == 1)
        C(r, INDEP_OPENS)++;
    else
        C(r, COLL_OPENS)++;
    if (info != MPI_INFO_NULL)
        C(r, HINTS)++;
    iolab_stamp(&F(r, OPEN_START_TIMESTAMP), &F(r, OPEN_END_TIMESTAMP), t0, t1);
    iolab_time_add(&F(r, META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

/* off: the file byte the access starts at, for the trace (trace_start), -1 when unknown.
 * Inlined into each wrapper: direction and kind are constants there. */
static inline __attribute__((always_inline)) void rec_io(MPI_File fh, const int write,
                                                         const int kind, int64_t off,
                                                         int64_t count,
                                                         MPI_Datatype type, int ret, double t0,
                                                         double t1)
{
    static const int ctr[2][4] = {
        {IOLAB_MPIIO_INDEP_READS, IOLAB_MPIIO_COLL_READS, IOLAB_MPIIO_SPLIT_READS, IOLAB_MPIIO_NB_READS},
        {IOLAB_MPIIO_INDEP_WRITES, IOLAB_MPIIO_COLL_WRITES, IOLAB_MPIIO_SPLIT_WRITES,
         IOLAB_MPIIO_NB_WRITES}};
    if (ret != MPI_SUCCESS)
        return;
    iolab_rec_t *r = fh_rec(fh);
    if (!r)
        return;
    int tsize = 0;
    PMPI_Type_size(type, &tsize);
    int64_t n = count * tsize;
    double el = t1 - t0;
    iolab_rec_lock(r);
    r->c[ctr[write][kind]]++;
    r->c[(write ? IOLAB_MPIIO_SIZE_WRITE_AGG_0_100 : IOLAB_MPIIO_SIZE_READ_AGG_0_100) + iolab_size_bin(n)]++;
    iolab_cval_add(&r->access, n, &C(r, ACCESS1_ACCESS), &C(r, ACCESS1_COUNT));
    if (r->last_io == (write ? IOLAB_IO_READ : IOLAB_IO_WRITE))
        C(r, RW_SWITCHES)++;
    r->last_io = write ? IOLAB_IO_WRITE : IOLAB_IO_READ;
    if (write) {
        C(r, BYTES_WRITTEN) += n;
        iolab_stamp(&F(r, WRITE_START_TIMESTAMP), &F(r, WRITE_END_TIMESTAMP), t0, t1);
        if (F(r, MAX_WRITE_TIME) < el) {
            F(r, MAX_WRITE_TIME) = el;
            C(r, MAX_WRITE_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, WRITE_TIME), t0, t1, &r->last_write_end);
    } else {
        C(r, BYTES_READ) += n;
        iolab_stamp(&F(r, READ_START_TIMESTAMP), &F(r, READ_END_TIMESTAMP), t0, t1);
        if (F(r, MAX_READ_TIME) < el) {
            F(r, MAX_READ_TIME) = el;
            C(r, MAX_READ_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, READ_TIME), t0, t1, &r->last_read_end);
    }
    iolab_rec_unlock(r);
    if (iolab_core_tracing)
        iolab_core_trace_add(r, write, off, n, t0, t1);
}

/* counter: VIEWS, HINTS, SYNCS (sync time is write time, as in Darshan), or -1 (close). */
static void rec_meta(MPI_File fh, int counter, int ret, double t0, double t1)
{
    if (ret != MPI_SUCCESS)
        return;
    iolab_rec_t *r = fh_rec(fh);
    if (!r)
        return;
    iolab_rec_lock(r);
    if (counter >= 0)
        r->c[counter]++;
    if (counter == IOLAB_MPIIO_SYNCS)
        iolab_time_add(&F(r, WRITE_TIME), t0, t1, &r->last_write_end);
    else
        iolab_time_add(&F(r, META_TIME), t0, t1, &r->last_meta_end);
    if (counter < 0)
        iolab_stamp(&F(r, CLOSE_START_TIMESTAMP), &F(r, CLOSE_END_TIMESTAMP), t0, t1);
    iolab_rec_unlock(r);
}

/* The MPI library's PMPI_x, looked up once (the first call, or MPI_Init for the data calls). */
static void *mpi_resolve(const char *pname);
#define MPI_REAL_DECL(name)                                                                  \
    static __typeof__(P##name) *real_##name;                                                 \
    static inline __typeof__(P##name) *get_##name(void)                                      \
    {                                                                                        \
        if (__builtin_expect(real_##name == NULL, 0))                                        \
            real_##name = (__typeof__(real_##name))mpi_resolve("P" #name);                   \
        return real_##name;                                                                  \
    }
#define REAL_PMPI(name) (get_##name())

static void *mpi_resolve(const char *pname)
{
    void *f = dlsym(RTLD_NEXT, pname);
    if (!f) { /* no MPI library below us: nothing sensible to call */
        static const char msg[] = "iolab-trace-mpi: no MPI library defines the PMPI functions\n";
        if (write(2, msg, sizeof msg - 1) < 0) {
        }
        abort();
    }
    return f;
}

/* > 0 while this thread is inside a wrapped MPI call: an inner wrapped call passes through. */
static __thread int mpi_depth __attribute__((tls_model("initial-exec")));

/* The one wrapper skeleton, MPI flavour: time the real call, record, keep errno. The depth
 * guard is held during the call (an MPI_x calling PMPI_y inside is counted once), the core's
 * guard only while recording (what MPI-IO does below, in POSIX, is traced). */
#define IOLAB_MPI_WRAP(name, args, record)                                                   \
    do {                                                                                     \
        if (mpi_depth || !iolab_core_ready())                                                \
            return REAL_PMPI(name) args;                                                      \
        const int tsc_ = iolab_core_use_tsc;                                                 \
        mpi_depth++;                                                                         \
        double t0_ = iolab_now_with(tsc_);                                                   \
        int ret = REAL_PMPI(name) args;                                                       \
        double t1_ = iolab_now_with(tsc_);                                                   \
        mpi_depth--;                                                                         \
        int errno_ = errno;                                                                  \
        iolab_core_busy = 1;                                                                 \
        record;                                                                              \
        iolab_core_leave();                                                                  \
        errno = errno_;                                                                      \
        return ret;                                                                          \
    } while (0)

/* PMPI_x: the same function as MPI_x (the alias shares its code and its guard). */
#define MPI_BOTH(name) extern __typeof__(name) P##name __attribute__((alias(#name)));

/* ---- start and end ---- */

MPI_REAL_DECL(MPI_Init)
MPI_REAL_DECL(MPI_Init_thread)
MPI_REAL_DECL(MPI_Finalize)

int MPI_Init(int *argc, char ***argv)
{
    if (mpi_depth)
        return REAL_PMPI(MPI_Init)(argc, argv);
    mpi_depth++;
    int ret = REAL_PMPI(MPI_Init)(argc, argv);
    mpi_depth--;
    if (ret == MPI_SUCCESS)
        set_rank();
    return ret;
}
MPI_BOTH(MPI_Init)

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (mpi_depth)
        return REAL_PMPI(MPI_Init_thread)(argc, argv, required, provided);
    mpi_depth++;
    int ret = REAL_PMPI(MPI_Init_thread)(argc, argv, required, provided);
    mpi_depth--;
    if (ret == MPI_SUCCESS)
        set_rank();
    return ret;
}
MPI_BOTH(MPI_Init_thread)

/* Shared-file reduction (mpi_reduce.c), before MPI goes away; IOLAB_TRACE_NO_REDUCE=1 leaves
 * it to the loader. */
void iolab_mpi_reduce_shared(void);

int MPI_Finalize(void)
{
    const char *no = getenv("IOLAB_TRACE_NO_REDUCE");
    if (!mpi_depth && iolab_core_ready() && !(no && *no == '1')) {
        iolab_core_busy = 1;
        iolab_mpi_reduce_shared();
        iolab_core_busy = 0;
    }
    mpi_depth++;
    int ret = REAL_PMPI(MPI_Finalize)();
    mpi_depth--;
    return ret;
}
MPI_BOTH(MPI_Finalize)

/* ---- open, close, views, hints, sync ---- */

MPI_REAL_DECL(MPI_File_open)
MPI_REAL_DECL(MPI_File_close)
MPI_REAL_DECL(MPI_File_set_view)
MPI_REAL_DECL(MPI_File_set_info)
MPI_REAL_DECL(MPI_File_sync)

int MPI_File_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh)
{
    IOLAB_MPI_WRAP(MPI_File_open, (comm, name, amode, info, fh),
                   rec_open(comm, name, amode, info, fh, ret, t0_, t1_));
}
MPI_BOTH(MPI_File_open)

int MPI_File_close(MPI_File *fh)
{
    MPI_File old = fh ? *fh : MPI_FILE_NULL;
    IOLAB_MPI_WRAP(MPI_File_close, (fh), do {
        rec_meta(old, -1, ret, t0_, t1_);
        iolab_core_handle_del(MAP_MPIIO, fh_key(old));
    } while (0));
}
MPI_BOTH(MPI_File_close)

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    /* Hints given with the view count as hints too, as in Darshan. */
    IOLAB_MPI_WRAP(MPI_File_set_view, (fh, disp, etype, filetype, datarep, info), do {
        rec_meta(fh, IOLAB_MPIIO_VIEWS, ret, t0_, t1_);
        if (info != MPI_INFO_NULL)
            rec_meta(fh, IOLAB_MPIIO_HINTS, ret, t0_, t0_);
    } while (0));
}
MPI_BOTH(MPI_File_set_view)

int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    IOLAB_MPI_WRAP(MPI_File_set_info, (fh, info), rec_meta(fh, IOLAB_MPIIO_HINTS, ret, t0_, t1_));
}
MPI_BOTH(MPI_File_set_info)

int MPI_File_sync(MPI_File fh)
{
    IOLAB_MPI_WRAP(MPI_File_sync, (fh), rec_meta(fh, IOLAB_MPIIO_SYNCS, ret, t0_, t1_));
}
MPI_BOTH(MPI_File_sync)

/* ---- where a traced access starts ---- */

enum { PTR_INDIVIDUAL = 0, PTR_EXPLICIT = 1, PTR_SHARED = 2 };

/* A datatype get_view returned, freed when it is a derived one (the caller owns those). */
static void free_view_type(MPI_Datatype *t)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(*t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
        combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(t);
}

/* The file byte where the access at off (explicit offset in etypes of the view) or at the
 * individual or shared file pointer starts, for the trace only: Darshan's DXT offsets
 * (MPI_File_get_byte_offset through the view). Asked before the call, since the call moves
 * the pointers. -1 when the view cannot say: a filetype of size 0 (Open MPI divides by it,
 * which is why Darshan asks nothing under Open MPI). errno is the caller's to keep. */
static int64_t trace_byte_offset(MPI_File fh, int ptr, MPI_Offset off)
{
    MPI_Offset pos = off, disp = 0, byte = -1;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING];
    int fsize = 0;
    if (ptr == PTR_INDIVIDUAL && PMPI_File_get_position(fh, &pos) != MPI_SUCCESS)
        return -1;
    if (ptr == PTR_SHARED && PMPI_File_get_position_shared(fh, &pos) != MPI_SUCCESS)
        return -1;
    if (PMPI_File_get_view(fh, &disp, &etype, &ftype, rep) != MPI_SUCCESS)
        return -1;
    PMPI_Type_size(ftype, &fsize);
    if (fsize > 0 && PMPI_File_get_byte_offset(fh, pos, &byte) != MPI_SUCCESS)
        byte = -1;
    free_view_type(&etype);
    free_view_type(&ftype);
    return fsize > 0 ? (int64_t)byte : -1;
}

/* trace_byte_offset when this call is traced, in a trace run; -1 otherwise (one branch). */
static inline int64_t trace_start(MPI_File fh, int ptr, MPI_Offset off)
{
    if (__builtin_expect(!iolab_core_tracing, 1) || mpi_depth || !iolab_core_ready() ||
        !fh_rec(fh))
        return -1;
    int errno_ = errno;
    iolab_core_busy = 1;
    int64_t byte = trace_byte_offset(fh, ptr, off);
    iolab_core_leave();
    errno = errno_;
    return byte;
}

/* ---- data: one line per MPI function ----
 * DATA(name, direction, kind, file pointer (0 individual, 1 explicit offset, 2 shared), count
 * type, last parameter): the real-symbol pointer, MPI_name, and PMPI_name. */

#define OFF_PARAM_1 MPI_Offset off,
#define OFF_PARAM_0
#define OFF_PARAM_2
#define OFF_ARG_1 off,
#define OFF_ARG_0
#define OFF_ARG_2
#define OFF_VAL_1 off
#define OFF_VAL_0 0
#define OFF_VAL_2 0
#define BUF_0 void *buf
#define BUF_1 const void *buf
#define TAIL_ST MPI_Status *st
#define TAIL_RQ MPI_Request *rq
#define TAIL_NO
#define TAILARG_ST , st
#define TAILARG_RQ , rq
#define TAILARG_NO
#define TAILP_ST , TAIL_ST
#define TAILP_RQ , TAIL_RQ
#define TAILP_NO

#define DATA(name, write, kind, at, ctype, tail)                                            \
    MPI_REAL_DECL(name)                                                                      \
    int name(MPI_File fh, OFF_PARAM_##at BUF_##write, ctype count,                           \
             MPI_Datatype type TAILP_##tail)                                                 \
    {                                                                                        \
        const int64_t start_ = trace_start(fh, at, OFF_VAL_##at);                            \
        IOLAB_MPI_WRAP(name, (fh, OFF_ARG_##at buf, count, type TAILARG_##tail),             \
                       rec_io(fh, write, kind, start_, (int64_t)count, type, ret, t0_, t1_)); \
    }                                                                                        \
    MPI_BOTH(name)

#define DATA_ALL(sfx, ctype)                                                                 \
    DATA(MPI_File_read##sfx, 0, K_INDEP, 0, ctype, ST)                                       \
    DATA(MPI_File_write##sfx, 1, K_INDEP, 0, ctype, ST)                                      \
    DATA(MPI_File_read_at##sfx, 0, K_INDEP, 1, ctype, ST)                                    \
    DATA(MPI_File_write_at##sfx, 1, K_INDEP, 1, ctype, ST)                                   \
    DATA(MPI_File_read_shared##sfx, 0, K_INDEP, 2, ctype, ST)                                \
    DATA(MPI_File_write_shared##sfx, 1, K_INDEP, 2, ctype, ST)                               \
    DATA(MPI_File_read_all##sfx, 0, K_COLL, 0, ctype, ST)                                    \
    DATA(MPI_File_write_all##sfx, 1, K_COLL, 0, ctype, ST)                                   \
    DATA(MPI_File_read_at_all##sfx, 0, K_COLL, 1, ctype, ST)                                 \
    DATA(MPI_File_write_at_all##sfx, 1, K_COLL, 1, ctype, ST)                                \
    DATA(MPI_File_read_ordered##sfx, 0, K_COLL, 2, ctype, ST)                                \
    DATA(MPI_File_write_ordered##sfx, 1, K_COLL, 2, ctype, ST)                               \
    DATA(MPI_File_read_all_begin##sfx, 0, K_SPLIT, 0, ctype, NO)                             \
    DATA(MPI_File_write_all_begin##sfx, 1, K_SPLIT, 0, ctype, NO)                            \
    DATA(MPI_File_read_at_all_begin##sfx, 0, K_SPLIT, 1, ctype, NO)                          \
    DATA(MPI_File_write_at_all_begin##sfx, 1, K_SPLIT, 1, ctype, NO)                         \
    DATA(MPI_File_read_ordered_begin##sfx, 0, K_SPLIT, 2, ctype, NO)                         \
    DATA(MPI_File_write_ordered_begin##sfx, 1, K_SPLIT, 2, ctype, NO)                        \
    DATA(MPI_File_iread##sfx, 0, K_NB, 0, ctype, RQ)                                         \
    DATA(MPI_File_iwrite##sfx, 1, K_NB, 0, ctype, RQ)                                        \
    DATA(MPI_File_iread_at##sfx, 0, K_NB, 1, ctype, RQ)                                      \
    DATA(MPI_File_iwrite_at##sfx, 1, K_NB, 1, ctype, RQ)                                     \
    DATA(MPI_File_iread_shared##sfx, 0, K_NB, 2, ctype, RQ)                                  \
    DATA(MPI_File_iwrite_shared##sfx, 1, K_NB, 2, ctype, RQ)

/* The non-blocking collectives came with MPI 3.1. */
#define DATA_NB_COLL(sfx, ctype)                                                             \
    DATA(MPI_File_iread_all##sfx, 0, K_NB, 0, ctype, RQ)                                     \
    DATA(MPI_File_iwrite_all##sfx, 1, K_NB, 0, ctype, RQ)                                    \
    DATA(MPI_File_iread_at_all##sfx, 0, K_NB, 1, ctype, RQ)                                  \
    DATA(MPI_File_iwrite_at_all##sfx, 1, K_NB, 1, ctype, RQ)

DATA_ALL(, int)
#if MPI_VERSION > 3 || (MPI_VERSION == 3 && MPI_SUBVERSION >= 1)
DATA_NB_COLL(, int)
#endif
/* MPI 4's large-count forms (MPICH >= 4.0; its Fortran 2008 bindings may call them). */
#if MPI_VERSION >= 4
DATA_ALL(_c, MPI_Count)
DATA_NB_COLL(_c, MPI_Count)
#endif
