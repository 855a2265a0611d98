/* iolab-bench backend "mpiio": MPI-IO on the communicator the core gives.
 *
 * Independent transfers are MPI_File_write_at / read_at, collective ones (--collective)
 * MPI_File_write_at_all / read_at_all. --file-view (IOLAB_CAP_VECTOR) moves a rank's whole
 * strided share with one call through a file view, as applications do: IOR's per-transfer
 * collectives (one collective call per 4 KiB) measured 2x-14x slower than one call with a view
 * on these machines, so both shapes must be measurable. Hints arrive as the MPI_Info of open;
 * the effective ones are read back with MPI_File_get_info (the core judges whether the library
 * really reports them: ROMIO does, Open MPI only echoes). The subarray layout (and btio)
 * moves a rank's boxes of an N-D array through a view made with MPI_Type_create_subarray,
 * independently or collectively. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "mpifile.h"

typedef struct mpiio_opts {
    bool set_size_zero;
} mpiio_opts_t;

static const iolab_option_t mpiio_options[] = {
    {"mpiio.set-size-zero", "mpiio_set_size_zero", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "mpiio api: MPI_File_set_size(0) on each file a write opens, right after the open, as "
     "IOR's MPIIO create does (--use-existing does it anyway)",
     offsetof(mpiio_opts_t, set_size_zero)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

typedef struct mpiio_state {
    const iolab_cfg_t *cfg;
    const mpiio_opts_t *o;
} mpiio_state_t;

typedef struct mpiio_file {
    MPI_File fh;
    int collective;
    char *path;         /* for error analysis (is the file system full?) */
    const iolab_decomp_t *array;  /* subarray layout: the N-D array (the core's) */
} mpiio_file_t;

/* errno for an MPI error code on path. Library-specific classes are mapped first; for the
 * generic ones (OMPIO reports a failed pwrite as MPI_ERR_OTHER or MPI_ERR_IO) the errno left
 * by the failed system call, or a full file system, tells more. */
static int mpi_errno(int rc, int sys_errno, const char *path)
{
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(rc, &cls);
    switch (cls) {
    case MPI_ERR_NO_SUCH_FILE: return ENOENT;
    case MPI_ERR_ACCESS: return EACCES;
    case MPI_ERR_NO_SPACE: return ENOSPC;
    case MPI_ERR_QUOTA: return EDQUOT;
    case MPI_ERR_READ_ONLY: return EROFS;
    case MPI_ERR_FILE_EXISTS: return EEXIST;
    case MPI_ERR_FILE_IN_USE: return EBUSY;
    case MPI_ERR_UNSUPPORTED_OPERATION: return ENOTSUP;
    case MPI_ERR_AMODE: case MPI_ERR_NOT_SAME: case MPI_ERR_ARG: return EINVAL;
    default: return iolab_mpifile_errno(sys_errno, path);
    }
}

/* "<what> <path>: <MPI error string>" into err. */
static void mpi_errline(char *err, size_t errlen, const char *what, const char *path, int rc)
{
    char msg[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    for (char *p = msg; *p; p++)  /* one line: ROMIO's strings can span several */
        if (*p == '\n')
            *p = ' ';
    snprintf(err, errlen, "%s %s: %s", what, path, msg);
}

/* A datatype of len bytes and its count, for MPI calls whose count is an int: len up to
 * INT_MAX is (MPI_BYTE, len); larger is 1 GiB pieces plus a remainder in one derived type.
 * *t must be freed with free_type. Returns 0 or an errno. */
static int byte_type(uint64_t len, MPI_Datatype *t, int *count)
{
    if (len <= INT_MAX) {
        *t = MPI_BYTE;
        *count = (int)len;
        return 0;
    }
    const uint64_t piece = 1u << 30;
    uint64_t q = len / piece, r = len % piece;
    if (q > INT_MAX)
        return EOVERFLOW;
    MPI_Datatype gib, pieces;
    MPI_Type_contiguous((int)piece, MPI_BYTE, &gib);
    MPI_Type_contiguous((int)q, gib, &pieces);
    MPI_Type_free(&gib);
    if (r == 0) {
        *t = pieces;
    } else {
        int lens[2] = {1, (int)r};
        MPI_Aint disps[2] = {0, (MPI_Aint)(q * piece)};
        MPI_Datatype types[2] = {pieces, MPI_BYTE};
        MPI_Type_create_struct(2, lens, disps, types, t);
        MPI_Type_free(&pieces);
    }
    MPI_Type_commit(t);
    *count = 1;
    return 0;
}

static void free_type(MPI_Datatype *t)
{
    if (*t != MPI_BYTE && *t != MPI_DATATYPE_NULL)
        MPI_Type_free(t);
}

static int mpiio_init(void **state, const void *opts, const iolab_cfg_t *cfg,
                      const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen)
{
    (void)env, (void)world, (void)err, (void)errlen;
    mpiio_state_t *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    s->cfg = cfg;
    s->o = opts;
    /* Files inherit MPI_FILE_NULL's handler; the standard default is ERRORS_RETURN, but a
     * site's MPI may be configured otherwise, and an abort would leave every rank hanging. */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    *state = s;
    return 0;
}

static void mpiio_fini(void *state) { free(state); }

/* Open (writes: create afresh) the file over a->comm with the requested hints. With
 * --use-existing (IOR -E) the file is not deleted first but emptied once open with
 * MPI_File_set_size(0), as IOR's MPIIO create does (it truncates even under -E);
 * --mpiio.set-size-zero makes that call on every write open (IOR's create, without -E). */
static int mpiio_open(void *state, const iolab_open_args_t *a, void **fh, char *err,
                      size_t errlen)
{
    const mpiio_state_t *s = state;
    int amode = a->dir == IOLAB_WRITE ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    int keep_existing = a->dir == IOLAB_WRITE && s->cfg->use_existing;
    int set_size_zero = a->dir == IOLAB_WRITE && (keep_existing || s->o->set_size_zero);
    if (a->dir == IOLAB_WRITE && !keep_existing)
        iolab_mpifile_fresh(a->comm, a->path);
    MPI_File f = MPI_FILE_NULL;
    errno = 0;
    int rc = MPI_File_open(a->comm, a->path, amode, a->info, &f);
    int e = rc == MPI_SUCCESS ? 0 : mpi_errno(rc, errno, a->path);
    if (e)
        mpi_errline(err, errlen, "MPI_File_open", a->path, rc);
    if (iolab_mpifile_other_failed(a->comm, e != 0)) {
        /* The handle stays open: closing it is collective over ranks that have none. */
        snprintf(err, errlen, "MPI_File_open %s failed on another rank of its communicator",
                 a->path);
        return EIO;
    }
    if (e)
        return e;
    MPI_File_set_errhandler(f, MPI_ERRORS_RETURN);
    if (set_size_zero) {  /* collective over a->comm; every rank learns any failure */
        errno = 0;
        rc = MPI_File_set_size(f, 0);
        e = rc == MPI_SUCCESS ? 0 : mpi_errno(rc, errno, a->path);
        if (e)
            mpi_errline(err, errlen, "MPI_File_set_size", a->path, rc);
        int other = iolab_mpifile_other_failed(a->comm, e != 0);
        if (e || other) {
            MPI_File_close(&f);  /* collective: every rank has its handle here */
            if (other)
                snprintf(err, errlen, "MPI_File_set_size %s failed on another rank of its "
                         "communicator", a->path);
            return e ? e : EIO;
        }
    }
    mpiio_file_t *m = malloc(sizeof *m);
    char *path = strdup(a->path);
    if (!m || !path) {
        free(m);
        free(path);
        MPI_File_close(&f);  /* collective; a rank out of memory is not worth a hang here */
        return ENOMEM;
    }
    *m = (mpiio_file_t){f, s->cfg->collective, path, a->array};
    *fh = m;
    return 0;
}

/* One read or write of count items of type t at offset (in etypes of the current view). */
static int64_t rw_at(const mpiio_file_t *m, iolab_dir_t dir, void *buf, MPI_Offset offset,
                     int count, MPI_Datatype t)
{
    MPI_Status st;
    int rc;
    errno = 0;
    if (dir == IOLAB_WRITE)
        rc = m->collective ? MPI_File_write_at_all(m->fh, offset, buf, count, t, &st)
                           : MPI_File_write_at(m->fh, offset, buf, count, t, &st);
    else
        rc = m->collective ? MPI_File_read_at_all(m->fh, offset, buf, count, t, &st)
                           : MPI_File_read_at(m->fh, offset, buf, count, t, &st);
    int sys = errno;
    if (rc != MPI_SUCCESS)
        return -mpi_errno(rc, sys, m->path);
    /* OMPIO returns success, with a short count or even a full one, when a pwrite under it
     * failed (ENOSPC): the errno it left is the only trace. */
    if (dir == IOLAB_WRITE && iolab_mpifile_write_errno(sys))
        return -sys;
    if (count == 0)
        return 0;
    /* Bytes really moved: a read at the end of the file is short, and the core reports it. */
    MPI_Count n = 0, want = 0;
    MPI_Get_elements_x(&st, t, &n);
    MPI_Type_size_x(t, &want);
    if (n == MPI_UNDEFINED)
        return -EIO;
    /* OMPIO passes a partial pwrite on as a short count: a full file system is the usual
     * cause, and saying so beats "short write". */
    if (dir == IOLAB_WRITE && n < want * count && iolab_mpifile_errno(sys, m->path) != EIO)
        return -iolab_mpifile_errno(sys, m->path);
    return (int64_t)n;
}

/* Move len bytes at byte offset (the default view: etype and filetype MPI_BYTE). */
static int64_t mpiio_xfer(void *fh, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len)
{
    const mpiio_file_t *m = fh;
    MPI_Datatype t;
    int count, e = byte_type(len, &t, &count);
    if (e)
        return -e;
    int64_t n = rw_at(m, dir, buf, (MPI_Offset)offset, count, t);
    free_type(&t);
    return n;
}

/* The file type of a strided access: count pieces of length bytes, stride bytes apart,
 * resized to count * stride so that the pattern would continue if the view were tiled. */
static int strided_type(const iolab_vec_t *v, MPI_Datatype *ft)
{
    if (v->count > INT_MAX)
        return EOVERFLOW;
    MPI_Datatype piece, vec;
    int pcount, e = byte_type(v->length, &piece, &pcount);
    if (e)
        return e;
    if (piece == MPI_BYTE) {  /* hvector needs one item per block */
        MPI_Type_contiguous(pcount, MPI_BYTE, &piece);
        MPI_Type_commit(&piece);
    }
    MPI_Type_create_hvector((int)v->count, 1, (MPI_Aint)v->stride, piece, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(v->count * v->stride), ft);
    MPI_Type_commit(ft);
    MPI_Type_free(&vec);
    MPI_Type_free(&piece);
    return 0;
}

/* --file-view: one call per rank. Setting the view is collective over the file's
 * communicator, so every rank comes here (count 0 when it has nothing to move). */
static int64_t mpiio_xfer_vec(void *fh, iolab_dir_t dir, void *buf, const iolab_vec_t *v)
{
    const mpiio_file_t *m = fh;
    MPI_Datatype ft = MPI_BYTE, mt = MPI_BYTE;
    int count = 0, e = 0;
    if (v->count && v->length && (e = strided_type(v, &ft)) != 0)
        return -e;
    e = byte_type(v->count * v->length, &mt, &count);
    if (e) {
        free_type(&ft);
        return -e;
    }
    MPI_Offset disp = ft == MPI_BYTE ? 0 : (MPI_Offset)v->offset;
    errno = 0;
    int rc = MPI_File_set_view(m->fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    int64_t n = rc == MPI_SUCCESS ? rw_at(m, dir, buf, 0, count, mt)
                                  : -mpi_errno(rc, errno, m->path);
    free_type(&ft);
    free_type(&mt);
    return n;
}

/* One box as a subarray of the whole N-D array of elem-byte elements (the record dimension
 * included: its start selects the step). Dimensions fit an int (the core checks). */
static void box_type(const iolab_decomp_t *d, const iolab_box_t *b, MPI_Datatype elem,
                     MPI_Datatype *t)
{
    int sizes[IOLAB_DECOMP_MAXDIMS], subs[IOLAB_DECOMP_MAXDIMS], starts[IOLAB_DECOMP_MAXDIMS];
    for (int i = 0; i < d->nd; i++) {
        sizes[i] = (int)d->dims[i];
        subs[i] = (int)b->count[i];
        starts[i] = (int)b->start[i];
    }
    MPI_Type_create_subarray(d->nd, sizes, subs, starts, MPI_ORDER_C, elem, t);
    MPI_Type_commit(t);
}

/* The file type of boxes in file order: one subarray, or a struct of them (all at
 * displacement 0: each subarray already places itself). Empty boxes are left out; *ft stays
 * MPI_BYTE when nothing is left. */
static void boxes_type(const iolab_decomp_t *d, const iolab_box_t *b, int n, MPI_Datatype *ft)
{
    MPI_Datatype elem, *types = malloc((size_t)(n ? n : 1) * sizeof *types);
    int *ones = malloc((size_t)(n ? n : 1) * sizeof *ones), used = 0;
    MPI_Aint *zeros = calloc((size_t)(n ? n : 1), sizeof *zeros);
    *ft = MPI_BYTE;
    if (!types || !ones || !zeros)
        goto out;
    MPI_Type_contiguous((int)d->elem, MPI_BYTE, &elem);
    MPI_Type_commit(&elem);
    for (int k = 0; k < n; k++)
        if (iolab_box_elems(d, &b[k])) {
            box_type(d, &b[k], elem, &types[used]);
            ones[used++] = 1;
        }
    if (used == 1) {
        *ft = types[0];
    } else if (used > 1) {
        MPI_Type_create_struct(used, ones, zeros, types, ft);
        MPI_Type_commit(ft);
        for (int k = 0; k < used; k++)
            MPI_Type_free(&types[k]);
    }
    MPI_Type_free(&elem);
out:
    free(types);
    free(ones);
    free(zeros);
}

/* One call through a view of the boxes (MPI_File_set_view is collective over the file's
 * ranks: every rank comes, with empty boxes when it has nothing). */
static int64_t view_call(const mpiio_file_t *m, iolab_dir_t dir, void *buf,
                         const iolab_decomp_t *d, const iolab_box_t *b, int n)
{
    uint64_t bytes = 0;
    for (int k = 0; k < n; k++)
        bytes += iolab_box_elems(d, &b[k]) * d->elem;
    MPI_Datatype ft, mt;
    int count = 0, e = byte_type(bytes, &mt, &count);
    if (e)
        return -e;
    boxes_type(d, b, n, &ft);
    if (bytes && ft == MPI_BYTE) {
        free_type(&mt);
        return -ENOMEM;
    }
    errno = 0;
    int rc = MPI_File_set_view(m->fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    int64_t r = rc == MPI_SUCCESS ? rw_at(m, dir, buf, 0, count, mt)
                                  : -mpi_errno(rc, errno, m->path);
    free_type(&ft);
    free_type(&mt);
    return r;
}

/* Subarray layout: the boxes through one file view (MPI_Type_create_subarray, a struct of
 * them for several boxes), one call. Boxes out of file order would make a view MPI forbids
 * (its type map must not go backwards): then one view and call per box. */
static int64_t mpiio_xfer_boxes(void *fh, iolab_dir_t dir, void *buf, const iolab_box_t *b,
                                int n)
{
    const mpiio_file_t *m = fh;
    const iolab_decomp_t *d = m->array;
    if (iolab_boxes_ordered(d, b, n))
        return view_call(m, dir, buf, d, b, n);
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        int64_t r = view_call(m, dir, (char *)buf + total, d, &b[k], 1);
        if (r < 0)
            return r;
        total += r;
    }
    return total;
}

static int mpiio_sync(void *fh)
{
    const mpiio_file_t *m = fh;
    errno = 0;
    int rc = MPI_File_sync(m->fh);
    return rc == MPI_SUCCESS ? 0 : mpi_errno(rc, errno, m->path);
}

/* The hints in effect. ROMIO returns its whole effective set (requested keys it does not
 * know are dropped); Open MPI returns what it was given. */
static int mpiio_get_info(void *fh, MPI_Info *info)
{
    const mpiio_file_t *m = fh;
    int rc = MPI_File_get_info(m->fh, info);
    return rc == MPI_SUCCESS ? 0 : mpi_errno(rc, 0, NULL);
}

static int mpiio_close(void *fh)
{
    mpiio_file_t *m = fh;
    errno = 0;
    int rc = MPI_File_close(&m->fh);
    int e = rc == MPI_SUCCESS ? 0 : mpi_errno(rc, errno, m->path);
    free(m->path);
    free(m);
    return e;
}

/* Called by one rank per file; a missing file is not an error. */
static int mpiio_remove(void *state, const char *path)
{
    (void)state;
    return iolab_mpifile_remove(path);
}

const iolab_backend_t iolab_backend_mpiio = {
    .name = "mpiio",
    .summary = "MPI_File_write_at/read_at, _at_all with --collective, one call through a "
               "strided view with --file-view; MPI-IO hints",
    .caps = IOLAB_CAP_SHARED | IOLAB_CAP_COLLECTIVE | IOLAB_CAP_VECTOR | IOLAB_CAP_HINTS |
            IOLAB_CAP_PLAIN_FILES | IOLAB_CAP_STORES_DATA | IOLAB_CAP_BOXES,
    .options = mpiio_options,
    .options_size = sizeof(mpiio_opts_t),
    .init = mpiio_init,
    .fini = mpiio_fini,
    .open = mpiio_open,
    .xfer = mpiio_xfer,
    .xfer_vec = mpiio_xfer_vec,
    .xfer_boxes = mpiio_xfer_boxes,
    .sync = mpiio_sync,
    .get_info = mpiio_get_info,
    .close = mpiio_close,
    .remove = mpiio_remove,
};
