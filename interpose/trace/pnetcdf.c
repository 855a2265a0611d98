/* libiolab-trace-pnetcdf: the PnetCDF layer (Darshan's PNETCDF_FILE and PNETCDF_VAR modules).
 *
 * Preloaded by `iolab profile` (before the MPI shim) for programs that load the PnetCDF
 * library it was built against. It wraps PnetCDF's public calls: ncmpi_create/open/close/
 * enddef/redef/sync/wait/wait_all, ncmpi_def_var/inq_varid, and every get/put of data —
 * blocking (independent and _all), non-blocking (iget, iput, bput), for the var, var1, vara,
 * vars, varm and varn kinds, each typed form and the flexible one, and vard — generated
 * below from one list of kinds and one of types. The library's own functions are reached
 * through dlsym(RTLD_NEXT). Records: PNETCDF_FILE per file path, PNETCDF_VAR per
 * "file path:variable name", found by (ncid, varid) (Darshan keys variables by varid alone,
 * which mixes two files' variables; here each file's are its own).
 * Counting follows Darshan 3.5: an access's size is the count's points x the variable's
 * external type size (var: the variable's points, x the record count for a record variable;
 * var1: one point; varn: the sum over the requests; vard: the filetype's size); the
 * (size, counts, strides) of vara/vars/varm are the common-access tuples, the first of the
 * last 5 dimensions in D1.
 */
#include <pnetcdf.h>

#include "iolab_trace.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define C(r, n) ((r)->c[IOLAB_##n])
#define F(r, n) ((r)->f[IOLAB_##n])
#define MAP_NCFILE 4
#define MAP_NCVAR 5
#define NDIMS 5
#define TUPLE (1 + 2 * NDIMS)
#define TUPLES_MAX 32
#define VARS_TRACKED 1024
#define MAX_VAR_DIMS 1024 /* variables of more dimensions are not traced */

static void *nc_resolve(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        static const char msg[] = "iolab-trace-pnetcdf: the PnetCDF library is not loaded\n";
        if (write(2, msg, sizeof msg - 1) < 0) {
        }
        abort();
    }
    return f;
}

#define NC_REAL_DECL(name)                                                                   \
    static __typeof__(name) *real_##name;                                                    \
    static inline __typeof__(name) *get_##name(void)                                         \
    {                                                                                        \
        if (__builtin_expect(real_##name == NULL, 0))                                        \
            real_##name = (__typeof__(real_##name))nc_resolve(#name);                        \
        return real_##name;                                                                  \
    }
#define REAL(name) (get_##name())

/* > 0 inside a wrapped call: PnetCDF calling its own API is counted once. */
static __thread int nc_depth __attribute__((tls_model("initial-exec")));

/* Time the real call with the depth guard held; `record` (with `ret`, `t0_`, `t1_`) runs
 * with the core's guard, also after a failed call (the waits count failures). */
#define NC_WRAP(name, args, record)                                                          \
    do {                                                                                     \
        if (nc_depth || !iolab_core_ready())                                                 \
            return REAL(name) args;                                                          \
        nc_depth++;                                                                          \
        double t0_ = iolab_now();                                                            \
        int ret = REAL(name) args;                                                           \
        double t1_ = iolab_now();                                                            \
        int errno_ = errno;                                                                  \
        iolab_core_busy = 1;                                                                 \
        record;                                                                              \
        iolab_core_leave();                                                                  \
        nc_depth--;                                                                          \
        errno = errno_;                                                                      \
        return ret;                                                                          \
    } while (0)

static inline uintptr_t file_key(int ncid) { return (uintptr_t)(unsigned)ncid + 2; }
static inline uintptr_t var_key(int ncid, int varid)
{
    return ((uintptr_t)(unsigned)ncid << 32 | (unsigned)varid) + 2;
}

static iolab_rec_t *by_key(int map, iolab_module_t mod, uintptr_t key)
{
    return iolab_core_rec_at(mod, iolab_core_handle_get(map, key));
}

/* ---- access tuples (Darshan's common values over 11 numbers) ---- */

typedef struct {
    int64_t v[TUPLES_MAX][TUPLE];
    int64_t freq[TUPLES_MAX];
    int n;
} tuples_t;

static tuples_t *var_tuples;

static void tuple_add(iolab_rec_t *r, const int64_t *t)
{
    int32_t idx = iolab_core_rec_index(r);
    if (idx < 0 || idx >= VARS_TRACKED)
        return;
    if (!var_tuples) {
        void *p = mmap(NULL, VARS_TRACKED * sizeof(tuples_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return;
        var_tuples = p;
    }
    tuples_t *ts = &var_tuples[idx];
    int i = 0;
    while (i < ts->n && memcmp(ts->v[i], t, sizeof ts->v[i]) != 0)
        i++;
    if (i == ts->n) {
        if (ts->n == TUPLES_MAX)
            return;
        memcpy(ts->v[i], t, sizeof ts->v[i]);
        ts->freq[i] = 0;
        ts->n++;
    }
    ts->freq[i]++;
    int top[4] = {-1, -1, -1, -1};
    for (int k = 0; k < ts->n; k++)
        for (int s = 0; s < 4; s++)
            if (top[s] < 0 || ts->freq[k] > ts->freq[top[s]] ||
                (ts->freq[k] == ts->freq[top[s]] && ts->v[k][0] > ts->v[top[s]][0])) {
                memmove(&top[s + 1], &top[s], (size_t)(3 - s) * sizeof top[0]);
                top[s] = k;
                break;
            }
    static const int first[4] = {IOLAB_PNETCDF_VAR_ACCESS1_ACCESS, IOLAB_PNETCDF_VAR_ACCESS2_ACCESS,
                                 IOLAB_PNETCDF_VAR_ACCESS3_ACCESS, IOLAB_PNETCDF_VAR_ACCESS4_ACCESS};
    for (int s = 0; s < 4; s++) {
        for (int j = 0; j < TUPLE; j++)
            r->c[first[s] + j] = top[s] >= 0 ? ts->v[top[s]][j] : 0;
        r->c[IOLAB_PNETCDF_VAR_ACCESS1_COUNT + s] = top[s] >= 0 ? ts->freq[top[s]] : 0;
    }
}

/* ---- files ---- */

static void rec_file_open(int ok, const char *path, const int *ncidp, int create, double t0,
                          double t1)
{
    char abs[PATH_MAX];
    if (!ok || !ncidp)
        return;
    path = iolab_core_strip_fs_prefix(path); /* "ufs:path": the file ROMIO opens */
    if (iolab_core_abspath(NULL, path, abs, sizeof abs) != 0 || iolab_core_excluded(abs))
        return;
    iolab_rec_t *r = iolab_core_record(IOLAB_MOD_PNCF, abs);
    if (!r)
        return;
    iolab_core_handle_put(MAP_NCFILE, file_key(*ncidp), iolab_core_rec_index(r));
    iolab_rec_lock(r);
    if (create)
        C(r, PNETCDF_FILE_CREATES)++;
    else
        C(r, PNETCDF_FILE_OPENS)++;
    iolab_stamp(&F(r, PNETCDF_FILE_F_OPEN_START_TIMESTAMP), &F(r, PNETCDF_FILE_F_OPEN_END_TIMESTAMP),
                t0, t1);
    iolab_time_add(&F(r, PNETCDF_FILE_F_META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

/* what: 0 meta (enddef), 1 redef, 2 sync, 3 close (put/get sizes), 4 wait, 5 wait_all */
static void rec_file(int ncid, int what, int ok, MPI_Offset put, MPI_Offset get, double t0,
                     double t1)
{
    iolab_rec_t *r = by_key(MAP_NCFILE, IOLAB_MOD_PNCF, file_key(ncid));
    if (!r || (!ok && what < 4))
        return;
    iolab_rec_lock(r);
    if (what >= 4) {
        if (!ok)
            C(r, PNETCDF_FILE_WAIT_FAILURES)++;
        else if (what == 4)
            C(r, PNETCDF_FILE_INDEP_WAITS)++;
        else
            C(r, PNETCDF_FILE_COLL_WAITS)++;
        iolab_stamp(&F(r, PNETCDF_FILE_F_WAIT_START_TIMESTAMP),
                    &F(r, PNETCDF_FILE_F_WAIT_END_TIMESTAMP), t0, t1);
        iolab_time_add(&F(r, PNETCDF_FILE_F_WAIT_TIME), t0, t1, &r->last_write_end);
        iolab_rec_unlock(r);
        return;
    }
    if (what == 1)
        C(r, PNETCDF_FILE_REDEFS)++;
    if (what == 2)
        C(r, PNETCDF_FILE_SYNCS)++;
    if (what == 3) {
        C(r, PNETCDF_FILE_BYTES_WRITTEN) =
            put >= 0 && C(r, PNETCDF_FILE_BYTES_WRITTEN) >= 0 ? C(r, PNETCDF_FILE_BYTES_WRITTEN) + put : -1;
        C(r, PNETCDF_FILE_BYTES_READ) =
            get >= 0 && C(r, PNETCDF_FILE_BYTES_READ) >= 0 ? C(r, PNETCDF_FILE_BYTES_READ) + get : -1;
        iolab_stamp(&F(r, PNETCDF_FILE_F_CLOSE_START_TIMESTAMP),
                    &F(r, PNETCDF_FILE_F_CLOSE_END_TIMESTAMP), t0, t1);
    }
    iolab_time_add(&F(r, PNETCDF_FILE_F_META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
    if (what == 3)
        iolab_core_handle_del(MAP_NCFILE, file_key(ncid));
}

NC_REAL_DECL(ncmpi_create)
NC_REAL_DECL(ncmpi_open)
NC_REAL_DECL(ncmpi_close)
NC_REAL_DECL(ncmpi_enddef)
NC_REAL_DECL(ncmpi_redef)
NC_REAL_DECL(ncmpi_sync)
NC_REAL_DECL(ncmpi_wait)
NC_REAL_DECL(ncmpi_wait_all)
NC_REAL_DECL(ncmpi_def_var)
NC_REAL_DECL(ncmpi_inq_varid)

int ncmpi_create(MPI_Comm comm, const char *path, int cmode, MPI_Info info, int *ncidp)
{
    NC_WRAP(ncmpi_create, (comm, path, cmode, info, ncidp),
            rec_file_open(ret == NC_NOERR, path, ncidp, 1, t0_, t1_));
}

int ncmpi_open(MPI_Comm comm, const char *path, int omode, MPI_Info info, int *ncidp)
{
    NC_WRAP(ncmpi_open, (comm, path, omode, info, ncidp),
            rec_file_open(ret == NC_NOERR, path, ncidp, 0, t0_, t1_));
}

int ncmpi_close(int ncid)
{
    MPI_Offset put = -1, get = -1;
    if (!nc_depth && iolab_core_ready()) { /* what the file moved, asked before it goes */
        nc_depth++;
        if (ncmpi_inq_put_size(ncid, &put) != NC_NOERR)
            put = -1;
        if (ncmpi_inq_get_size(ncid, &get) != NC_NOERR)
            get = -1;
        nc_depth--;
    }
    NC_WRAP(ncmpi_close, (ncid), rec_file(ncid, 3, ret == NC_NOERR, put, get, t0_, t1_));
}

int ncmpi_enddef(int ncid)
{
    NC_WRAP(ncmpi_enddef, (ncid), rec_file(ncid, 0, ret == NC_NOERR, 0, 0, t0_, t1_));
}

int ncmpi_redef(int ncid)
{
    NC_WRAP(ncmpi_redef, (ncid), rec_file(ncid, 1, ret == NC_NOERR, 0, 0, t0_, t1_));
}

int ncmpi_sync(int ncid)
{
    NC_WRAP(ncmpi_sync, (ncid), rec_file(ncid, 2, ret == NC_NOERR, 0, 0, t0_, t1_));
}

int ncmpi_wait(int ncid, int num, int reqs[], int statuses[])
{
    NC_WRAP(ncmpi_wait, (ncid, num, reqs, statuses),
            rec_file(ncid, 4, ret == NC_NOERR, 0, 0, t0_, t1_));
}

int ncmpi_wait_all(int ncid, int num, int reqs[], int statuses[])
{
    NC_WRAP(ncmpi_wait_all, (ncid, num, reqs, statuses),
            rec_file(ncid, 5, ret == NC_NOERR, 0, 0, t0_, t1_));
}

/* ---- variables ---- */

static int type_size(nc_type t)
{
    switch (t) {
    case NC_BYTE: case NC_CHAR: case NC_UBYTE: return 1;
    case NC_SHORT: case NC_USHORT: return 2;
    case NC_INT: case NC_UINT: case NC_FLOAT: return 4;
    default: return 8;
    }
}

/* Per variable record: the file's unlimited dimension, for record variables' sizes. */
static int var_unlimdim[VARS_TRACKED];

static void rec_var_open(int ncid, const char *name, int varid, double t0, double t1)
{
    char path[PATH_MAX], abs[PATH_MAX], rec[2 * PATH_MAX];
    int len = 0, ndims = 0, dimids[MAX_VAR_DIMS], unlim = -1;
    nc_type xtype;
    if (ncmpi_inq_path(ncid, &len, NULL) != NC_NOERR || len <= 0 || len >= PATH_MAX ||
        ncmpi_inq_path(ncid, NULL, path) != NC_NOERR)
        return;
    /* PnetCDF's NC_MAX_VAR_DIMS is INT_MAX (CDF-5 has no limit): ask first, bounded here. */
    if (ncmpi_inq_varndims(ncid, varid, &ndims) != NC_NOERR || ndims > MAX_VAR_DIMS ||
        ncmpi_inq_var(ncid, varid, NULL, &xtype, &ndims, dimids, NULL) != NC_NOERR)
        return;
    const char *fname = iolab_core_strip_fs_prefix(path);
    if (iolab_core_abspath(NULL, fname, abs, sizeof abs) != 0 || iolab_core_excluded(abs))
        return;
    snprintf(rec, sizeof rec, "%s:%s", abs, name);
    iolab_rec_t *r = iolab_core_record(IOLAB_MOD_PNCV, rec);
    if (!r)
        return;
    ncmpi_inq_unlimdim(ncid, &unlim);
    int first = 0, is_rec = 0;
    if (ndims > 0 && unlim >= 0 && dimids[0] == unlim)
        is_rec = first = 1;
    MPI_Offset npoints = 1;
    for (int i = first; i < ndims; i++) {
        MPI_Offset n = 0;
        ncmpi_inq_dimlen(ncid, dimids[i], &n);
        npoints *= n;
    }
    int32_t idx = iolab_core_rec_index(r);
    if (idx >= 0 && idx < VARS_TRACKED)
        var_unlimdim[idx] = unlim;
    iolab_core_handle_put(MAP_NCVAR, var_key(ncid, varid), idx);
    iolab_rec_lock(r);
    C(r, PNETCDF_VAR_OPENS)++;
    C(r, PNETCDF_VAR_NDIMS) = ndims;
    C(r, PNETCDF_VAR_NPOINTS) = npoints;
    C(r, PNETCDF_VAR_DATATYPE_SIZE) = type_size(xtype);
    C(r, PNETCDF_VAR_IS_RECORD_VAR) = is_rec;
    iolab_stamp(&F(r, PNETCDF_VAR_F_OPEN_START_TIMESTAMP), &F(r, PNETCDF_VAR_F_OPEN_END_TIMESTAMP),
                t0, t1);
    iolab_time_add(&F(r, PNETCDF_VAR_F_META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

int ncmpi_def_var(int ncid, const char *name, nc_type xtype, int ndims, const int dimids[],
                  int *varidp)
{
    NC_WRAP(ncmpi_def_var, (ncid, name, xtype, ndims, dimids, varidp),
            if (ret == NC_NOERR && varidp) rec_var_open(ncid, name, *varidp, t0_, t1_));
}

int ncmpi_inq_varid(int ncid, const char *name, int *varidp)
{
    NC_WRAP(ncmpi_inq_varid, (ncid, name, varidp),
            if (ret == NC_NOERR && varidp) rec_var_open(ncid, name, *varidp, t0_, t1_));
}

/* The request of one get/put: its kind's size and tuple. */
typedef struct {
    int kind; /* 0 var, 1 var1, 2 vara, 3 vars, 4 varm, 5 varn, 6 vard */
    const MPI_Offset *count, *stride;
    int num;
    MPI_Offset *const *counts;
    MPI_Datatype filetype;
} req_t;

enum { DIR_PUT, DIR_GET, DIR_IPUT, DIR_IGET, DIR_BPUT };
enum { MODE_INDEP, MODE_COLL, MODE_NB };

static int64_t req_size(iolab_rec_t *r, int ncid, const req_t *q, int64_t *t)
{
    int64_t nd = C(r, PNETCDF_VAR_NDIMS), n = 1;
    switch (q->kind) {
    case 0: {
        n = C(r, PNETCDF_VAR_NPOINTS);
        int32_t idx = iolab_core_rec_index(r);
        if (C(r, PNETCDF_VAR_IS_RECORD_VAR) && idx >= 0 && idx < VARS_TRACKED) {
            MPI_Offset recs = 0;
            ncmpi_inq_dimlen(ncid, var_unlimdim[idx], &recs);
            n *= recs;
        }
        break;
    }
    case 1:
        n = 1;
        break;
    case 2: case 3: case 4: {
        int start = nd > NDIMS ? (int)nd - NDIMS : 0;
        for (int i = 0; i < nd; i++)
            n *= q->count ? q->count[i] : 1;
        for (int i = start; i < nd; i++) {
            t[1 + i - start] = q->count ? q->count[i] : 0;
            if (q->kind != 2)
                t[1 + NDIMS + i - start] = q->stride ? q->stride[i] : 1;
        }
        break;
    }
    case 5:
        if (!q->counts) {
            n = q->num;
            break;
        }
        n = 0;
        for (int i = 0; i < q->num; i++) {
            int64_t one = 1;
            for (int j = 0; j < nd; j++)
                one *= q->counts[i][j];
            n += one;
        }
        break;
    default: {
        int s = 0;
        if (q->filetype != MPI_DATATYPE_NULL)
            PMPI_Type_size(q->filetype, &s);
        return t[0] = s;
    }
    }
    return t[0] = n * C(r, PNETCDF_VAR_DATATYPE_SIZE);
}

static const int kind_counter[5][6] = {
    {IOLAB_PNETCDF_VAR_PUT_VAR, IOLAB_PNETCDF_VAR_PUT_VAR1, IOLAB_PNETCDF_VAR_PUT_VARA,
     IOLAB_PNETCDF_VAR_PUT_VARS, IOLAB_PNETCDF_VAR_PUT_VARM, IOLAB_PNETCDF_VAR_PUT_VARN},
    {IOLAB_PNETCDF_VAR_GET_VAR, IOLAB_PNETCDF_VAR_GET_VAR1, IOLAB_PNETCDF_VAR_GET_VARA,
     IOLAB_PNETCDF_VAR_GET_VARS, IOLAB_PNETCDF_VAR_GET_VARM, IOLAB_PNETCDF_VAR_GET_VARN},
    {IOLAB_PNETCDF_VAR_IPUT_VAR, IOLAB_PNETCDF_VAR_IPUT_VAR1, IOLAB_PNETCDF_VAR_IPUT_VARA,
     IOLAB_PNETCDF_VAR_IPUT_VARS, IOLAB_PNETCDF_VAR_IPUT_VARM, IOLAB_PNETCDF_VAR_IPUT_VARN},
    {IOLAB_PNETCDF_VAR_IGET_VAR, IOLAB_PNETCDF_VAR_IGET_VAR1, IOLAB_PNETCDF_VAR_IGET_VARA,
     IOLAB_PNETCDF_VAR_IGET_VARS, IOLAB_PNETCDF_VAR_IGET_VARM, IOLAB_PNETCDF_VAR_IGET_VARN},
    {IOLAB_PNETCDF_VAR_BPUT_VAR, IOLAB_PNETCDF_VAR_BPUT_VAR1, IOLAB_PNETCDF_VAR_BPUT_VARA,
     IOLAB_PNETCDF_VAR_BPUT_VARS, IOLAB_PNETCDF_VAR_BPUT_VARM, IOLAB_PNETCDF_VAR_BPUT_VARN}};

static void rec_io(int ok, int ncid, int varid, int dir, int mode, const req_t *q, double t0,
                   double t1)
{
    if (!ok)
        return;
    iolab_rec_t *r = by_key(MAP_NCVAR, IOLAB_MOD_PNCV, var_key(ncid, varid));
    if (!r)
        return;
    int64_t t[TUPLE] = {0};
    int write = dir == DIR_PUT || dir == DIR_IPUT || dir == DIR_BPUT;
    double el = t1 - t0;
    iolab_rec_lock(r);
    int64_t n = req_size(r, ncid, q, t);
    if (q->kind == 6)
        C(r, PNETCDF_VAR_PUT_VARD) += write, C(r, PNETCDF_VAR_GET_VARD) += !write;
    else
        r->c[kind_counter[dir][q->kind]]++;
    if (mode == MODE_NB)
        r->c[write ? IOLAB_PNETCDF_VAR_NB_WRITES : IOLAB_PNETCDF_VAR_NB_READS]++;
    else if (mode == MODE_COLL)
        r->c[write ? IOLAB_PNETCDF_VAR_COLL_WRITES : IOLAB_PNETCDF_VAR_COLL_READS]++;
    else
        r->c[write ? IOLAB_PNETCDF_VAR_INDEP_WRITES : IOLAB_PNETCDF_VAR_INDEP_READS]++;
    if (r->last_io == (write ? IOLAB_IO_READ : IOLAB_IO_WRITE))
        C(r, PNETCDF_VAR_RW_SWITCHES)++;
    r->last_io = write ? IOLAB_IO_WRITE : IOLAB_IO_READ;
    r->c[(write ? IOLAB_PNETCDF_VAR_SIZE_WRITE_AGG_0_100 : IOLAB_PNETCDF_VAR_SIZE_READ_AGG_0_100) +
         iolab_size_bin(n)]++;
    tuple_add(r, t);
    if (write) {
        C(r, PNETCDF_VAR_BYTES_WRITTEN) += n;
        iolab_stamp(&F(r, PNETCDF_VAR_F_WRITE_START_TIMESTAMP),
                    &F(r, PNETCDF_VAR_F_WRITE_END_TIMESTAMP), t0, t1);
        if (F(r, PNETCDF_VAR_F_MAX_WRITE_TIME) < el) {
            F(r, PNETCDF_VAR_F_MAX_WRITE_TIME) = el;
            C(r, PNETCDF_VAR_MAX_WRITE_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, PNETCDF_VAR_F_WRITE_TIME), t0, t1, &r->last_write_end);
    } else {
        C(r, PNETCDF_VAR_BYTES_READ) += n;
        iolab_stamp(&F(r, PNETCDF_VAR_F_READ_START_TIMESTAMP),
                    &F(r, PNETCDF_VAR_F_READ_END_TIMESTAMP), t0, t1);
        if (F(r, PNETCDF_VAR_F_MAX_READ_TIME) < el) {
            F(r, PNETCDF_VAR_F_MAX_READ_TIME) = el;
            C(r, PNETCDF_VAR_MAX_READ_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, PNETCDF_VAR_F_READ_TIME), t0, t1, &r->last_read_end);
    }
    iolab_rec_unlock(r);
}

/* ---- the data calls, generated: direction x kind x mode x type ----
 * Each kind: its parameters after varid (P_), the same as arguments (A_), its request (Q_). */
#define P_var
#define A_var
#define Q_var {0, NULL, NULL, 0, NULL, MPI_DATATYPE_NULL}
#define P_var1 const MPI_Offset *start,
#define A_var1 start,
#define Q_var1 {1, NULL, NULL, 0, NULL, MPI_DATATYPE_NULL}
#define P_vara const MPI_Offset *start, const MPI_Offset *count,
#define A_vara start, count,
#define Q_vara {2, count, NULL, 0, NULL, MPI_DATATYPE_NULL}
#define P_vars const MPI_Offset *start, const MPI_Offset *count, const MPI_Offset *stride,
#define A_vars start, count, stride,
#define Q_vars {3, count, stride, 0, NULL, MPI_DATATYPE_NULL}
#define P_varm                                                                               \
    const MPI_Offset *start, const MPI_Offset *count, const MPI_Offset *stride,              \
        const MPI_Offset *imap,
#define A_varm start, count, stride, imap,
#define Q_varm {4, count, stride, 0, NULL, MPI_DATATYPE_NULL}
#define P_varn int num, MPI_Offset *const *starts, MPI_Offset *const *counts,
#define A_varn num, starts, counts,
#define Q_varn {5, NULL, NULL, num, counts, MPI_DATATYPE_NULL}

/* Buffers: const for puts. */
#define BUF_put const
#define BUF_get
#define BUF_iput const
#define BUF_iget
#define BUF_bput const
#define DIR_put DIR_PUT
#define DIR_get DIR_GET
#define DIR_iput DIR_IPUT
#define DIR_iget DIR_IGET
#define DIR_bput DIR_BPUT
#define MODE_ MODE_INDEP
#define MODE__all MODE_COLL

#define REQ_DECL(q, kind) const req_t q = Q_##kind

/* Blocking, typed: ncmpi_<dir>_<kind>_<type><mode> */
#define GP_TYPED(dir, kind, tname, ctype, mode)                                              \
    NC_REAL_DECL(ncmpi_##dir##_##kind##_##tname##mode)                                       \
    int ncmpi_##dir##_##kind##_##tname##mode(int ncid, int varid, P_##kind BUF_##dir ctype *buf) \
    {                                                                                        \
        REQ_DECL(q_, kind);                                                                  \
        NC_WRAP(ncmpi_##dir##_##kind##_##tname##mode, (ncid, varid, A_##kind buf),           \
                rec_io(ret == NC_NOERR, ncid, varid, DIR_##dir, MODE_##mode, &q_, t0_, t1_)); \
    }
/* Blocking, flexible: ncmpi_<dir>_<kind><mode> */
#define GP_FLEX(dir, kind, mode)                                                             \
    NC_REAL_DECL(ncmpi_##dir##_##kind##mode)                                                 \
    int ncmpi_##dir##_##kind##mode(int ncid, int varid, P_##kind BUF_##dir void *buf,        \
                                   MPI_Offset bufcount, MPI_Datatype buftype)                \
    {                                                                                        \
        REQ_DECL(q_, kind);                                                                  \
        NC_WRAP(ncmpi_##dir##_##kind##mode, (ncid, varid, A_##kind buf, bufcount, buftype),  \
                rec_io(ret == NC_NOERR, ncid, varid, DIR_##dir, MODE_##mode, &q_, t0_, t1_)); \
    }
/* Non-blocking, typed and flexible: ncmpi_<i|b><dir>_<kind>[_<type>] */
#define NB_TYPED(dir, kind, tname, ctype)                                                    \
    NC_REAL_DECL(ncmpi_##dir##_##kind##_##tname)                                             \
    int ncmpi_##dir##_##kind##_##tname(int ncid, int varid, P_##kind BUF_##dir ctype *buf,   \
                                       int *req)                                             \
    {                                                                                        \
        REQ_DECL(q_, kind);                                                                  \
        NC_WRAP(ncmpi_##dir##_##kind##_##tname, (ncid, varid, A_##kind buf, req),            \
                rec_io(ret == NC_NOERR, ncid, varid, DIR_##dir, MODE_NB, &q_, t0_, t1_));    \
    }
#define NB_FLEX(dir, kind)                                                                   \
    NC_REAL_DECL(ncmpi_##dir##_##kind)                                                       \
    int ncmpi_##dir##_##kind(int ncid, int varid, P_##kind BUF_##dir void *buf,              \
                             MPI_Offset bufcount, MPI_Datatype buftype, int *req)            \
    {                                                                                        \
        REQ_DECL(q_, kind);                                                                  \
        NC_WRAP(ncmpi_##dir##_##kind, (ncid, varid, A_##kind buf, bufcount, buftype, req),   \
                rec_io(ret == NC_NOERR, ncid, varid, DIR_##dir, MODE_NB, &q_, t0_, t1_));    \
    }

/* PnetCDF's 12 buffer types. */
#define NC_TYPES(X, ...)                                                                     \
    X(__VA_ARGS__, text, char)                                                               \
    X(__VA_ARGS__, schar, signed char)                                                       \
    X(__VA_ARGS__, uchar, unsigned char)                                                     \
    X(__VA_ARGS__, short, short)                                                             \
    X(__VA_ARGS__, ushort, unsigned short)                                                   \
    X(__VA_ARGS__, int, int)                                                                 \
    X(__VA_ARGS__, uint, unsigned int)                                                       \
    X(__VA_ARGS__, long, long)                                                               \
    X(__VA_ARGS__, float, float)                                                             \
    X(__VA_ARGS__, double, double)                                                           \
    X(__VA_ARGS__, longlong, long long)                                                      \
    X(__VA_ARGS__, ulonglong, unsigned long long)

#define GP_T_INDEP(dir, kind, tname, ctype) GP_TYPED(dir, kind, tname, ctype, )
#define GP_T_COLL(dir, kind, tname, ctype) GP_TYPED(dir, kind, tname, ctype, _all)
#define NB_T(dir, kind, tname, ctype) NB_TYPED(dir, kind, tname, ctype)

#define BLOCKING(dir, kind)                                                                  \
    GP_FLEX(dir, kind, )                                                                     \
    GP_FLEX(dir, kind, _all)                                                                 \
    NC_TYPES(GP_T_INDEP, dir, kind)                                                          \
    NC_TYPES(GP_T_COLL, dir, kind)
#define NONBLOCKING(dir, kind)                                                               \
    NB_FLEX(dir, kind)                                                                       \
    NC_TYPES(NB_T, dir, kind)

#define ALL_KINDS(M, dir) M(dir, var) M(dir, var1) M(dir, vara) M(dir, vars) M(dir, varm) M(dir, varn)

ALL_KINDS(BLOCKING, put)
ALL_KINDS(BLOCKING, get)
ALL_KINDS(NONBLOCKING, iput)
ALL_KINDS(NONBLOCKING, iget)
ALL_KINDS(NONBLOCKING, bput)

/* vard: a filetype instead of start/count. */
#define GP_VARD(dir, mode)                                                                   \
    NC_REAL_DECL(ncmpi_##dir##_vard##mode)                                                   \
    int ncmpi_##dir##_vard##mode(int ncid, int varid, MPI_Datatype filetype,                 \
                                 BUF_##dir void *buf, MPI_Offset bufcount,                   \
                                 MPI_Datatype buftype)                                       \
    {                                                                                        \
        const req_t q_ = {6, NULL, NULL, 0, NULL, filetype};                                 \
        NC_WRAP(ncmpi_##dir##_vard##mode, (ncid, varid, filetype, buf, bufcount, buftype),   \
                rec_io(ret == NC_NOERR, ncid, varid, DIR_##dir, MODE_##mode, &q_, t0_, t1_)); \
    }
GP_VARD(put, )
GP_VARD(put, _all)
GP_VARD(get, )
GP_VARD(get, _all)
