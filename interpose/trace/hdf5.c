/* libiolab-trace-hdf5: the HDF5 layer (Darshan's H5F and H5D modules).
 *
 * Used by `iolab profile` for programs that load an HDF5 library, inside
 * libiolab-trace-mpi-hdf5.so with the tracer and the MPI shim (or preloaded before them): one
 * build per HDF5/MPI pair, like the MPI shim. It wraps HDF5's
 * public calls (H5Fcreate/open/flush/close, H5Dcreate1/2, H5Dopen1/2, H5Dread/write/flush/
 * close, and H5Oopen/H5Oopen_by_idx/H5Oopen_by_addr/H5Oclose for datasets opened as generic
 * objects, as h5py and generic readers do, like Darshan 3.5). It reaches every HDF5 call,
 * its own and the queries the recording makes, through dlsym(RTLD_NEXT) and does not link
 * HDF5 (see the H5_REAL_DECL list). Records live in the core's H5F and H5D pools: H5F per
 * file path, H5D per "file path:/dataset path", as in Darshan. Counting follows Darshan
 * 3.5's HDF5 module: an access's size is the points of the file selection (the whole
 * dataspace for H5S_ALL) x the dataset's type size; a regular hyperslab's count x block and
 * stride per dimension go, in Darshan's reversed order, into LENGTH_D5..D1 and
 * STRIDE_D5..D1 (the first dimension in D5, the second in D4...); the 4 most common (size,
 * lengths, strides) tuples are ACCESS1..4. What HDF5 does below (MPI-IO, POSIX) is traced
 * as usual.
 */
#include <hdf5.h>

#include "iolab_trace.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define C(r, n) ((r)->c[IOLAB_##n])
#define F(r, n) ((r)->f[IOLAB_##n])
#define MAP_H5F 2
#define MAP_H5D 3
#define NDIMS 5                /* Darshan's H5D_MAX_NDIMS */
#define TUPLE (1 + 2 * NDIMS) /* size, lengths, strides */
#define TUPLES_MAX 32          /* distinct access tuples tracked per dataset */
#define DSETS_TRACKED 1024     /* datasets whose access tuples are tracked */

#ifdef IOLAB_LAYER_LIBRARY
/* The HDF5 this layer is built for, by real path: `iolab profile` reads it here to preload the
 * layer only for programs that load that very file. */
__attribute__((used)) const char iolab_layer_library[] = "iolab-layer-library=" IOLAB_LAYER_LIBRARY;
#endif

/* The next definition of an HDF5 call after this library: the program's HDF5. One it opened
 * with dlopen(RTLD_LOCAL) is not in that search: then that same file, when loaded. */
static void *h5_lookup(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
#ifdef IOLAB_LAYER_LIBRARY
    if (!f) {
        void *lib = dlopen(IOLAB_LAYER_LIBRARY, RTLD_LAZY | RTLD_NOLOAD);
        if (lib) {
            f = dlsym(lib, name);
            dlclose(lib); /* drops the reference RTLD_NOLOAD took; the program's stays */
        }
    }
#endif
    return f;
}

static void *h5_resolve(const char *name)
{
    void *f = h5_lookup(name);
    if (!f) {
        static const char msg[] = "iolab-trace-hdf5: the HDF5 library is not loaded\n";
        if (write(2, msg, sizeof msg - 1) < 0) {
        }
        abort();
    }
    return f;
}

#define H5_REAL_DECL(name)                                                                   \
    static __typeof__(name) *real_##name;                                                    \
    static inline __typeof__(name) *get_##name(void)                                         \
    {                                                                                        \
        if (__builtin_expect(real_##name == NULL, 0))                                        \
            real_##name = (__typeof__(real_##name))h5_resolve(#name);                        \
        return real_##name;                                                                  \
    }
#define REAL(name) (get_##name())

/* > 0 inside a wrapped call: HDF5 calling its own public API is counted once. */
static __thread int h5_depth __attribute__((tls_model("initial-exec")));

/* Time the real call with the depth guard held; then `record` with the core's guard. */
#define H5_WRAP(type, name, args, record)                                                    \
    do {                                                                                     \
        if (h5_depth || !iolab_core_ready())                                                 \
            return REAL(name) args;                                                          \
        h5_depth++;                                                                          \
        double t0_ = iolab_now();                                                            \
        type ret = REAL(name) args;                                                          \
        double t1_ = iolab_now();                                                            \
        h5_depth--;                                                                          \
        int errno_ = errno;                                                                  \
        if (ret >= 0) {                                                                      \
            h5_depth++; /* HDF5 queries made while recording are not recorded */            \
            iolab_core_busy = 1;                                                             \
            record;                                                                          \
            iolab_core_leave();                                                              \
            h5_depth--;                                                                      \
        }                                                                                    \
        errno = errno_;                                                                      \
        return ret;                                                                          \
    } while (0)

/* The HDF5 calls the recording makes, reached like the wrapped ones: this library does not
 * link HDF5, so a launcher or a shell given the preload does not load HDF5 and its ~40
 * dependencies (libcurl, TLS, Kerberos...) for nothing. */
H5_REAL_DECL(H5Dget_create_plist)
H5_REAL_DECL(H5Dget_space)
H5_REAL_DECL(H5Dget_type)
H5_REAL_DECL(H5Fget_name)
H5_REAL_DECL(H5Iget_file_id)
H5_REAL_DECL(H5Iget_name)
H5_REAL_DECL(H5Iget_type)
H5_REAL_DECL(H5Pclose)
H5_REAL_DECL(H5Pget_chunk)
H5_REAL_DECL(H5Pget_driver)
H5_REAL_DECL(H5Pget_dxpl_mpio)
H5_REAL_DECL(H5Pget_layout)
H5_REAL_DECL(H5Sclose)
H5_REAL_DECL(H5Sget_regular_hyperslab)
H5_REAL_DECL(H5Sget_select_npoints)
H5_REAL_DECL(H5Sget_select_type)
H5_REAL_DECL(H5Sget_simple_extent_ndims)
H5_REAL_DECL(H5Sget_simple_extent_npoints)
H5_REAL_DECL(H5Sis_regular_hyperslab)
H5_REAL_DECL(H5Tclose)
H5_REAL_DECL(H5Tget_size)
#ifdef H5_HAVE_PARALLEL
H5_REAL_DECL(H5FD_mpio_init)
#endif

/* ---- access tuples (Darshan's common-value counters over 11 values) ---- */

typedef struct {
    int64_t v[TUPLES_MAX][TUPLE];
    int64_t freq[TUPLES_MAX];
    int n;
} tuples_t;

static tuples_t *dset_tuples; /* DSETS_TRACKED entries, mapped on first use */

static void tuple_add(iolab_rec_t *r, int32_t idx, const int64_t *t)
{
    if (idx < 0 || idx >= DSETS_TRACKED)
        return;
    if (!dset_tuples) {
        void *p = mmap(NULL, DSETS_TRACKED * sizeof(tuples_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return;
        dset_tuples = p;
    }
    tuples_t *ts = &dset_tuples[idx];
    int i = 0;
    while (i < ts->n && memcmp(ts->v[i], t, sizeof ts->v[i]) != 0)
        i++;
    if (i == ts->n) {
        if (ts->n == TUPLES_MAX)
            return; /* as Darshan: values past the first distinct ones are not tracked */
        memcpy(ts->v[i], t, sizeof ts->v[i]);
        ts->freq[i] = 0;
        ts->n++;
    }
    ts->freq[i]++;
    /* The 4 most frequent, ties to the larger size: rewritten in full (n <= 32). */
    int top[4] = {-1, -1, -1, -1};
    for (int k = 0; k < ts->n; k++) {
        for (int s = 0; s < 4; s++) {
            if (top[s] < 0 || ts->freq[k] > ts->freq[top[s]] ||
                (ts->freq[k] == ts->freq[top[s]] && ts->v[k][0] > ts->v[top[s]][0])) {
                memmove(&top[s + 1], &top[s], (size_t)(3 - s) * sizeof top[0]);
                top[s] = k;
                break;
            }
        }
    }
    static const int first[4] = {IOLAB_H5D_ACCESS1_ACCESS, IOLAB_H5D_ACCESS2_ACCESS,
                                 IOLAB_H5D_ACCESS3_ACCESS, IOLAB_H5D_ACCESS4_ACCESS};
    for (int s = 0; s < 4; s++) {
        for (int j = 0; j < TUPLE; j++)
            r->c[first[s] + j] = top[s] >= 0 ? ts->v[top[s]][j] : 0;
        r->c[IOLAB_H5D_ACCESS1_COUNT + s] = top[s] >= 0 ? ts->freq[top[s]] : 0;
    }
}

/* ---- files ---- */

static iolab_rec_t *file_record(const char *name, char *abs, size_t len)
{
    name = iolab_core_strip_fs_prefix(name); /* "ufs:path": the file ROMIO opens */
    if (iolab_core_abspath(NULL, name, abs, len) != 0 || iolab_core_excluded(abs))
        return NULL;
    return iolab_core_record(IOLAB_MOD_H5F, abs);
}

static void rec_file_open(hid_t fid, const char *name, hid_t fapl, double t0, double t1)
{
    char abs[PATH_MAX];
    iolab_rec_t *r = file_record(name, abs, sizeof abs);
    if (!r)
        return;
    int mpio = 0;
#ifdef H5_HAVE_PARALLEL
    mpio = fapl != H5P_DEFAULT && REAL(H5Pget_driver)(fapl) == REAL(H5FD_mpio_init)();
#else
    (void)fapl;
#endif
    iolab_core_handle_put(MAP_H5F, (uintptr_t)fid, iolab_core_rec_index(r));
    iolab_rec_lock(r);
    C(r, H5F_USE_MPIIO) = mpio;
    C(r, H5F_OPENS)++;
    iolab_stamp(&F(r, H5F_F_OPEN_START_TIMESTAMP), &F(r, H5F_F_OPEN_END_TIMESTAMP), t0, t1);
    iolab_time_add(&F(r, H5F_F_META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

static iolab_rec_t *by_handle(int map, iolab_module_t mod, hid_t id)
{
    return iolab_core_rec_at(mod, iolab_core_handle_get(map, (uintptr_t)id));
}

static void rec_file_meta(hid_t fid, int close, int flush, double t0, double t1)
{
    iolab_rec_t *r = by_handle(MAP_H5F, IOLAB_MOD_H5F, fid);
    if (!r)
        return;
    iolab_rec_lock(r);
    if (flush)
        C(r, H5F_FLUSHES)++;
    if (close)
        iolab_stamp(&F(r, H5F_F_CLOSE_START_TIMESTAMP), &F(r, H5F_F_CLOSE_END_TIMESTAMP), t0, t1);
    iolab_time_add(&F(r, H5F_F_META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
    if (close)
        iolab_core_handle_del(MAP_H5F, (uintptr_t)fid);
}

H5_REAL_DECL(H5Fcreate)
H5_REAL_DECL(H5Fopen)
H5_REAL_DECL(H5Fflush)
H5_REAL_DECL(H5Fclose)

hid_t H5Fcreate(const char *filename, unsigned flags, hid_t fcpl, hid_t fapl)
{
    H5_WRAP(hid_t, H5Fcreate, (filename, flags, fcpl, fapl),
            rec_file_open(ret, filename, fapl, t0_, t1_));
}

hid_t H5Fopen(const char *filename, unsigned flags, hid_t fapl)
{
    H5_WRAP(hid_t, H5Fopen, (filename, flags, fapl), rec_file_open(ret, filename, fapl, t0_, t1_));
}

herr_t H5Fflush(hid_t object_id, H5F_scope_t scope)
{
    H5_WRAP(herr_t, H5Fflush, (object_id, scope), do {
        hid_t fid = REAL(H5Iget_file_id)(object_id);
        if (fid >= 0) {
            rec_file_meta(fid, 0, 1, t0_, t1_);
            REAL(H5Fclose)(fid); /* H5Iget_file_id took a reference */
        }
    } while (0));
}

herr_t H5Fclose(hid_t file_id)
{
    H5_WRAP(herr_t, H5Fclose, (file_id), rec_file_meta(file_id, 1, 0, t0_, t1_));
}

/* ---- datasets ---- */

/* "file path:/dataset path": the dataset's own full name (H5Iget_name), one record per
 * dataset however it is reached. Darshan 3.5 appends the name given to the location's path
 * without a separator ("/grp" + "b" = "/grpb", "/" + "/grp/c" = "//grp/c"); the names are
 * equal for a name relative to the file id ("a", "grp/sub/d"), and on purpose not otherwise
 * (docs/profile.md, tests/profile/test_profile_hdf5_names.py). */
static iolab_rec_t *dataset_record(hid_t dset)
{
    char file[PATH_MAX], abs[PATH_MAX], name[PATH_MAX + 512];
    ssize_t n = REAL(H5Fget_name)(dset, file, sizeof file);
    if (n <= 0 || (size_t)n >= sizeof file)
        return NULL;
    const char *fname = iolab_core_strip_fs_prefix(file);
    if (iolab_core_abspath(NULL, fname, abs, sizeof abs) != 0 || iolab_core_excluded(abs))
        return NULL;
    size_t used = strlen(abs);
    memcpy(name, abs, used);
    name[used++] = ':';
    ssize_t m = REAL(H5Iget_name)(dset, name + used, sizeof name - used);
    if (m <= 0 || (size_t)m >= sizeof name - used)
        return NULL;
    return iolab_core_record(IOLAB_MOD_H5D, name);
}

static void rec_dset_open(hid_t dset, hid_t type, hid_t space, hid_t dcpl, int deprecated,
                          double t0, double t1)
{
    iolab_rec_t *r = dataset_record(dset);
    if (!r)
        return;
    hsize_t chunk[NDIMS] = {0};
    int nchunk = 0;
    if (dcpl != H5P_DEFAULT && REAL(H5Pget_layout)(dcpl) == H5D_CHUNKED) {
        nchunk = REAL(H5Pget_chunk)(dcpl, NDIMS, chunk);
        nchunk = nchunk < NDIMS ? nchunk : NDIMS;
    }
    int ndims = REAL(H5Sget_simple_extent_ndims)(space);
    hssize_t npoints = REAL(H5Sget_simple_extent_npoints)(space);
    size_t tsize = REAL(H5Tget_size)(type);
    iolab_core_handle_put(MAP_H5D, (uintptr_t)dset, iolab_core_rec_index(r));
    iolab_rec_lock(r);
    C(r, H5D_OPENS)++;
    C(r, H5D_USE_DEPRECATED) = deprecated;
    C(r, H5D_DATASPACE_NDIMS) = ndims;
    C(r, H5D_DATASPACE_NPOINTS) = npoints;
    C(r, H5D_DATATYPE_SIZE) = (int64_t)tsize;
    for (int i = 0; i < nchunk; i++) /* D1 holds the last dimension, as in Darshan */
        r->c[IOLAB_H5D_CHUNK_SIZE_D1 + i] = (int64_t)chunk[nchunk - i - 1];
    iolab_stamp(&F(r, H5D_F_OPEN_START_TIMESTAMP), &F(r, H5D_F_OPEN_END_TIMESTAMP), t0, t1);
    iolab_time_add(&F(r, H5D_F_META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
}

/* H5Dopen: the type, space and creation properties are asked from the dataset. */
static void rec_dset_opened(hid_t dset, int deprecated, double t0, double t1)
{
    hid_t type = REAL(H5Dget_type)(dset), space = REAL(H5Dget_space)(dset);
    hid_t dcpl = REAL(H5Dget_create_plist)(dset);
    if (type >= 0 && space >= 0 && dcpl >= 0)
        rec_dset_open(dset, type, space, dcpl, deprecated, t0, t1);
    if (type >= 0)
        REAL(H5Tclose)(type);
    if (space >= 0)
        REAL(H5Sclose)(space);
    if (dcpl >= 0)
        REAL(H5Pclose)(dcpl);
}

static void rec_dset_io(hid_t dset, int write, hid_t fspace, hid_t dxpl, double t0, double t1)
{
    iolab_rec_t *r = by_handle(MAP_H5D, IOLAB_MOD_H5D, dset);
    if (!r)
        return;
    int64_t t[TUPLE] = {0};
    int64_t npoints;
    H5S_sel_type sel;
    if (fspace == H5S_ALL) {
        npoints = C(r, H5D_DATASPACE_NPOINTS);
        sel = H5S_SEL_ALL;
    } else {
        npoints = REAL(H5Sget_select_npoints)(fspace);
        sel = REAL(H5Sget_select_type)(fspace);
    }
    /* An "all" selection (H5S_ALL or H5Sselect_all) is none of the three kinds: Darshan 3.5
     * counts only hyperslab and point selections. */
    int regular = 0, irregular = 0, points = sel == H5S_SEL_POINTS;
    if (sel == H5S_SEL_HYPERSLABS) {
        if (REAL(H5Sis_regular_hyperslab)(fspace) > 0) {
            hsize_t start[NDIMS] = {0}, stride[NDIMS] = {0}, count[NDIMS] = {0},
                    block[NDIMS] = {0};
            int nd = REAL(H5Sget_simple_extent_ndims)(fspace);
            if (nd > 0 && nd <= NDIMS &&
                REAL(H5Sget_regular_hyperslab)(fspace, start, stride, count, block) >= 0) {
                for (int i = 0; i < NDIMS; i++) { /* dimension d in slot D(5-d), as Darshan */
                    t[1 + i] = (int64_t)(count[NDIMS - i - 1] * block[NDIMS - i - 1]);
                    t[1 + NDIMS + i] = (int64_t)stride[NDIMS - i - 1];
                }
            }
            regular = 1;
        } else {
            irregular = 1;
        }
    }
    int coll = 0;
#ifdef H5_HAVE_PARALLEL
    H5FD_mpio_xfer_t mode;
    coll = dxpl != H5P_DEFAULT && REAL(H5Pget_dxpl_mpio)(dxpl, &mode) >= 0 &&
           mode == H5FD_MPIO_COLLECTIVE;
#else
    (void)dxpl;
#endif
    iolab_rec_lock(r);
    int64_t n = npoints * C(r, H5D_DATATYPE_SIZE);
    t[0] = n;
    double el = t1 - t0;
    C(r, H5D_REGULAR_HYPERSLAB_SELECTS) += regular;
    C(r, H5D_IRREGULAR_HYPERSLAB_SELECTS) += irregular;
    C(r, H5D_POINT_SELECTS) += points;
    if (coll)
        C(r, H5D_USE_MPIIO_COLLECTIVE) = 1;
    if (r->last_io == (write ? IOLAB_IO_READ : IOLAB_IO_WRITE))
        C(r, H5D_RW_SWITCHES)++;
    r->last_io = write ? IOLAB_IO_WRITE : IOLAB_IO_READ;
    r->c[(write ? IOLAB_H5D_SIZE_WRITE_AGG_0_100 : IOLAB_H5D_SIZE_READ_AGG_0_100) +
         iolab_size_bin(n)]++;
    tuple_add(r, iolab_core_rec_index(r), t);
    if (write) {
        C(r, H5D_WRITES)++;
        C(r, H5D_BYTES_WRITTEN) += n;
        iolab_stamp(&F(r, H5D_F_WRITE_START_TIMESTAMP), &F(r, H5D_F_WRITE_END_TIMESTAMP), t0, t1);
        if (F(r, H5D_F_MAX_WRITE_TIME) < el) {
            F(r, H5D_F_MAX_WRITE_TIME) = el;
            C(r, H5D_MAX_WRITE_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, H5D_F_WRITE_TIME), t0, t1, &r->last_write_end);
    } else {
        C(r, H5D_READS)++;
        C(r, H5D_BYTES_READ) += n;
        iolab_stamp(&F(r, H5D_F_READ_START_TIMESTAMP), &F(r, H5D_F_READ_END_TIMESTAMP), t0, t1);
        if (F(r, H5D_F_MAX_READ_TIME) < el) {
            F(r, H5D_F_MAX_READ_TIME) = el;
            C(r, H5D_MAX_READ_TIME_SIZE) = n;
        }
        iolab_time_add(&F(r, H5D_F_READ_TIME), t0, t1, &r->last_read_end);
    }
    iolab_rec_unlock(r);
}

static void rec_dset_meta(hid_t dset, int close, double t0, double t1)
{
    iolab_rec_t *r = by_handle(MAP_H5D, IOLAB_MOD_H5D, dset);
    if (!r)
        return;
    iolab_rec_lock(r);
    if (close)
        iolab_stamp(&F(r, H5D_F_CLOSE_START_TIMESTAMP), &F(r, H5D_F_CLOSE_END_TIMESTAMP), t0, t1);
    else
        C(r, H5D_FLUSHES)++;
    iolab_time_add(&F(r, H5D_F_META_TIME), t0, t1, &r->last_meta_end);
    iolab_rec_unlock(r);
    if (close)
        iolab_core_handle_del(MAP_H5D, (uintptr_t)dset);
}

H5_REAL_DECL(H5Dcreate2)
H5_REAL_DECL(H5Dopen2)
H5_REAL_DECL(H5Dread)
H5_REAL_DECL(H5Dwrite)
H5_REAL_DECL(H5Dflush)
H5_REAL_DECL(H5Dclose)

hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl,
                 hid_t dapl)
{
    H5_WRAP(hid_t, H5Dcreate2, (loc, name, type, space, lcpl, dcpl, dapl),
            rec_dset_open(ret, type, space, dcpl, 0, t0_, t1_));
}

hid_t H5Dopen2(hid_t loc, const char *name, hid_t dapl)
{
    H5_WRAP(hid_t, H5Dopen2, (loc, name, dapl), rec_dset_opened(ret, 0, t0_, t1_));
}

#ifndef H5_NO_DEPRECATED_SYMBOLS
H5_REAL_DECL(H5Dcreate1)
H5_REAL_DECL(H5Dopen1)

hid_t H5Dcreate1(hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl)
{
    H5_WRAP(hid_t, H5Dcreate1, (loc, name, type, space, dcpl),
            rec_dset_open(ret, type, space, dcpl, 1, t0_, t1_));
}

hid_t H5Dopen1(hid_t loc, const char *name)
{
    H5_WRAP(hid_t, H5Dopen1, (loc, name), rec_dset_opened(ret, 1, t0_, t1_));
}
#endif

/* A dataset opened as a generic object counts as a dataset open (Darshan 3.5 wraps H5Oopen*
 * for this); groups and named datatypes opened this way are not recorded. */
static void rec_obj_opened(hid_t obj, double t0, double t1)
{
    if (REAL(H5Iget_type)(obj) == H5I_DATASET)
        rec_dset_opened(obj, 0, t0, t1);
}

H5_REAL_DECL(H5Oopen)
H5_REAL_DECL(H5Oopen_by_idx)
H5_REAL_DECL(H5Oopen_by_addr)
H5_REAL_DECL(H5Oclose)

hid_t H5Oopen(hid_t loc, const char *name, hid_t lapl)
{
    H5_WRAP(hid_t, H5Oopen, (loc, name, lapl), rec_obj_opened(ret, t0_, t1_));
}

hid_t H5Oopen_by_idx(hid_t loc, const char *group_name, H5_index_t idx_type,
                     H5_iter_order_t order, hsize_t n, hid_t lapl)
{
    H5_WRAP(hid_t, H5Oopen_by_idx, (loc, group_name, idx_type, order, n, lapl),
            rec_obj_opened(ret, t0_, t1_));
}

hid_t H5Oopen_by_addr(hid_t loc, haddr_t addr)
{
    H5_WRAP(hid_t, H5Oopen_by_addr, (loc, addr), rec_obj_opened(ret, t0_, t1_));
}

/* Closes whatever object; only a dataset this library recorded has a record (by handle). */
herr_t H5Oclose(hid_t obj)
{
    H5_WRAP(herr_t, H5Oclose, (obj), rec_dset_meta(obj, 1, t0_, t1_));
}

herr_t H5Dread(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, hid_t dxpl, void *buf)
{
    H5_WRAP(herr_t, H5Dread, (dset, mtype, mspace, fspace, dxpl, buf),
            rec_dset_io(dset, 0, fspace, dxpl, t0_, t1_));
}

herr_t H5Dwrite(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, hid_t dxpl, const void *buf)
{
    H5_WRAP(herr_t, H5Dwrite, (dset, mtype, mspace, fspace, dxpl, buf),
            rec_dset_io(dset, 1, fspace, dxpl, t0_, t1_));
}

herr_t H5Dflush(hid_t dset)
{
    H5_WRAP(herr_t, H5Dflush, (dset), rec_dset_meta(dset, 0, t0_, t1_));
}

herr_t H5Dclose(hid_t dset)
{
    H5_WRAP(herr_t, H5Dclose, (dset), rec_dset_meta(dset, 1, t0_, t1_));
}
