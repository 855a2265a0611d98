/* iolab-bench backend "mpiio": MPI-IO on the communicator the core gives.
 *
 * Independent transfers are MPI_File_write_at / read_at, collective ones (--collective)
 * MPI_File_write_at_all / read_at_all. --file-view (IOLAB_CAP_VECTOR) moves a rank's whole
 * strided share with one call through a file view, as applications do: IOR's per-transfer
 * collectives (one collective call per 4 KiB) measured 2x-14x slower than one call with a view
 * on these machines, so both shapes must be measurable. Hints arrive as the MPI_Info of open;
 * the effective ones are read back with MPI_File_get_info (the core judges whether the library
 * really reports them: ROMIO does, Open MPI only echoes). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "mpifile.h"

typedef struct mpiio_state {
    const iolab_cfg_t *cfg;
} mpiio_state_t;

typedef struct mpiio_file {
    MPI_File fh;
    int collective;
    char *path;         /* for error analysis (is the file system full?) */
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
    (void)opts, (void)env, (void)world, (void)err, (void)errlen;
    mpiio_state_t *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    s->cfg = cfg;
    /* Files inherit MPI_FILE_NULL's handler; the standard default is ERRORS_RETURN, but a
     * site's MPI may be configured otherwise, and an abort would leave every rank hanging. */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    *state = s;
    return 0;
}

static void mpiio_fini(void *state) { free(state); }

/* Open (writes: create afresh) the file over a->comm with the requested hints. */
static int mpiio_open(void *state, const iolab_open_args_t *a, void **fh, char *err,
                      size_t errlen)
{
    const mpiio_state_t *s = state;
    int amode = a->dir == IOLAB_WRITE ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    if (a->dir == IOLAB_WRITE)
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
    mpiio_file_t *m = malloc(sizeof *m);
    char *path = strdup(a->path);
    if (!m || !path) {
        free(m);
        free(path);
        MPI_File_close(&f);  /* collective; a rank out of memory is not worth a hang here */
        return ENOMEM;
    }
    *m = (mpiio_file_t){f, s->cfg->collective, path};
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
            IOLAB_CAP_PLAIN_FILES | IOLAB_CAP_STORES_DATA,
    .options = NULL,
    .options_size = 0,
    .init = mpiio_init,
    .fini = mpiio_fini,
    .open = mpiio_open,
    .xfer = mpiio_xfer,
    .xfer_vec = mpiio_xfer_vec,
    .sync = mpiio_sync,
    .get_info = mpiio_get_info,
    .close = mpiio_close,
    .remove = mpiio_remove,
};
