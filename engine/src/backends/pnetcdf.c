/* iolab-bench backend "pnetcdf": PnetCDF (parallel netCDF) over MPI-IO.
 *
 * Each file is a CDF-5 file (NC_64BIT_DATA: 64-bit sizes, so files past 4 GiB work) with one
 * 1-D NC_BYTE variable "data" whose length is the layout's file size; a layout offset is a
 * variable index. Transfers are ncmpi_put_vara_schar_all / get_vara_schar_all (collective
 * data mode, --collective) or the same without _all in independent data mode. --file-view
 * moves a rank's whole strided share with one ncmpi_put_varn/get_varn call (n pieces, one
 * request). The subarray layout (and btio) makes the variable the N-D array with an unlimited
 * record dimension first (NC_BYTE, NC_SHORT, NC_INT or NC_INT64 for --elem 1, 2, 4, 8) and
 * moves a rank's boxes with one vara call each. --pnetcdf.nonblocking posts iput/iget
 * requests instead and completes them with ncmpi_wait_all (collective data mode) or
 * ncmpi_wait (independent), as BTIO's non-blocking method does per time step. Fill mode is
 * off unless --pnetcdf.fill: filling writes the whole variable at ncmpi_enddef, a hidden
 * first write that would be timed as part of open. */
#include <errno.h>
#include <limits.h>
#include <pnetcdf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "mpifile.h"

#define VARIABLE "data"

typedef struct pnetcdf_opts {
    bool fill, nonblocking;
} pnetcdf_opts_t;

static const iolab_option_t pnetcdf_options[] = {
    {"pnetcdf.fill", "pnetcdf_fill", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "pnetcdf api: write fill values when the variable is defined (ncmpi_set_fill NC_FILL)",
     offsetof(pnetcdf_opts_t, fill)},
    {"pnetcdf.nonblocking", "pnetcdf_nonblocking", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "pnetcdf api: non-blocking requests (ncmpi_iput/iget_vara, _varn), completed per call "
     "with ncmpi_wait_all (collective) or ncmpi_wait (independent data mode)",
     offsetof(pnetcdf_opts_t, nonblocking)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

typedef struct nc_state {
    const pnetcdf_opts_t *o;
    const iolab_cfg_t *cfg;
} nc_state_t;

typedef struct nc_file {
    int ncid, varid, collective, nonblocking;
    MPI_Offset extent;
    char *path;         /* for error analysis (is the file system full?) */
    const iolab_decomp_t *array;  /* subarray layout: the N-D array (the core's), or NULL */
    MPI_Datatype mtype; /* the elements in memory (MPI_SIGNED_CHAR ... MPI_LONG_LONG) */
} nc_file_t;

/* errno for a PnetCDF status on path: positive values are already system errnos; the
 * generic file errors go to the shared analysis (the system call's errno, a full file
 * system). */
static int nc_errno(int st, int sys_errno, const char *path)
{
    if (st > 0)
        return st;
    switch (st) {
    case NC_ENOENT: return ENOENT;
    case NC_EACCESS: case NC_EPERM: return EACCES;
    case NC_EEXIST: return EEXIST;
    case NC_ENO_SPACE: return ENOSPC;
    case NC_EQUOTA: return EDQUOT;
    case NC_ENOMEM: return ENOMEM;
    case NC_EINVAL: return EINVAL;
    default: return iolab_mpifile_errno(sys_errno, path);
    }
}

/* After a call that writes: its errno, or a write-failure errno the call left although it
 * reported success (PnetCDF over OMPIO after pwrite failed with ENOSPC). */
static int nc_write_errno(int st, int sys_errno, const char *path)
{
    if (st != NC_NOERR)
        return nc_errno(st, sys_errno, path);
    return iolab_mpifile_write_errno(sys_errno);
}

static void nc_errline(char *err, size_t errlen, const char *what, const char *path, int st)
{
    snprintf(err, errlen, "%s %s: %s", what, path, ncmpi_strerror(st));
}

static int pnetcdf_init(void **state, const void *opts, const iolab_cfg_t *cfg,
                        const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen)
{
    (void)env, (void)world;
    if (cfg->layout == IOLAB_LAYOUT_SUBARRAY && cfg->elem != 1 && cfg->elem != 2 &&
        cfg->elem != 4 && cfg->elem != 8) {
        snprintf(err, errlen, "api pnetcdf with --layout subarray or --workload btio: --elem "
                 "must be 1, 2, 4 or 8 (NC_BYTE, NC_SHORT, NC_INT, NC_INT64; got %llu)",
                 (unsigned long long)cfg->elem);
        return EINVAL;
    }
    nc_state_t *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    *s = (nc_state_t){opts, cfg};
    *state = s;
    return 0;
}

static void pnetcdf_fini(void *state) { free(state); }

/* The netCDF type and MPI memory type of an array's --elem-byte elements. */
static nc_type elem_types(uint64_t elem, MPI_Datatype *mtype)
{
    switch (elem) {
    case 2: *mtype = MPI_SHORT; return NC_SHORT;
    case 4: *mtype = MPI_INT; return NC_INT;
    case 8: *mtype = MPI_LONG_LONG; return NC_INT64;
    default: *mtype = MPI_SIGNED_CHAR; return NC_BYTE;
    }
}

/* The dimensions of the file: "x" (the 1-D layouts), or the N-D array's: "time" (unlimited,
 * the record), then d0, d1 ... Returns a status. */
static int define_dims(const iolab_open_args_t *a, nc_file_t *f, int *dimids, int *nd)
{
    const iolab_decomp_t *d = a->array;
    int st = NC_NOERR;
    if (!d) {
        *nd = 1;
        return ncmpi_def_dim(f->ncid, "x", (MPI_Offset)a->file_bytes, &dimids[0]);
    }
    *nd = d->nd;
    for (int i = 0; i < d->nd && st == NC_NOERR; i++) {
        char name[16];
        snprintf(name, sizeof name, "d%d", i - 1);
        st = ncmpi_def_dim(f->ncid, i == 0 ? "time" : name,
                           i == 0 ? NC_UNLIMITED : (MPI_Offset)d->dims[i], &dimids[i]);
    }
    return st;
}

/* Define the file's dimensions and its variable, then leave define mode. */
static int define(const nc_state_t *s, const iolab_open_args_t *a, nc_file_t *f, char *err,
                  size_t errlen)
{
    int dimids[IOLAB_DECOMP_MAXDIMS], nd = 1, old, st;
    nc_type type = a->array ? elem_types(a->array->elem, &f->mtype) : NC_BYTE;
    if ((st = define_dims(a, f, dimids, &nd)) != NC_NOERR ||
        (st = ncmpi_def_var(f->ncid, VARIABLE, type, nd, dimids, &f->varid)) != NC_NOERR ||
        (st = ncmpi_set_fill(f->ncid, s->o->fill ? NC_FILL : NC_NOFILL, &old)) != NC_NOERR ||
        (st = ncmpi_enddef(f->ncid)) != NC_NOERR) {
        nc_errline(err, errlen, "defining variable " VARIABLE " of", a->path, st);
        return st;
    }
    f->extent = (MPI_Offset)a->file_bytes;
    return NC_NOERR;
}

/* An existing file's variable has the array's shape (records: at least the steps). */
static int lookup_array(const iolab_open_args_t *a, nc_file_t *f, char *err, size_t errlen)
{
    const iolab_decomp_t *d = a->array;
    int dimids[IOLAB_DECOMP_MAXDIMS], nd = 0, st, same;
    nc_type type, want = elem_types(d->elem, &f->mtype);
    if ((st = ncmpi_inq_varid(f->ncid, VARIABLE, &f->varid)) != NC_NOERR ||
        (st = ncmpi_inq_varndims(f->ncid, f->varid, &nd)) != NC_NOERR ||
        (st = ncmpi_inq_vartype(f->ncid, f->varid, &type)) != NC_NOERR) {
        nc_errline(err, errlen, "finding variable " VARIABLE " in", a->path, st);
        return st;
    }
    same = nd == d->nd && type == want &&
           ncmpi_inq_vardimid(f->ncid, f->varid, dimids) == NC_NOERR;
    for (int i = 0; same && i < nd; i++) {
        MPI_Offset len = 0;
        same = ncmpi_inq_dimlen(f->ncid, dimids[i], &len) == NC_NOERR &&
               (i == 0 ? (uint64_t)len >= d->dims[0] : (uint64_t)len == d->dims[i]);
    }
    if (!same) {
        snprintf(err, errlen, "%s: variable " VARIABLE " has another shape or type than the "
                 "array of this run; write it first with the same --grid, --elem, --steps and "
                 "layout (--write --keep)", a->path);
        return NC_EEDGE;
    }
    return NC_NOERR;
}

/* Find the variable of an existing file and its length. */
static int lookup(const iolab_open_args_t *a, nc_file_t *f, char *err, size_t errlen)
{
    int dimid, st;
    if (a->array)
        return lookup_array(a, f, err, errlen);
    if ((st = ncmpi_inq_varid(f->ncid, VARIABLE, &f->varid)) != NC_NOERR ||
        (st = ncmpi_inq_vardimid(f->ncid, f->varid, &dimid)) != NC_NOERR ||
        (st = ncmpi_inq_dimlen(f->ncid, dimid, &f->extent)) != NC_NOERR) {
        nc_errline(err, errlen, "finding variable " VARIABLE " in", a->path, st);
        return st;
    }
    if ((uint64_t)f->extent < a->file_bytes) {
        snprintf(err, errlen, "%s: variable " VARIABLE " has %lld bytes but the layout reads "
                 "%llu; write it first with the same sizes and layout (--write --keep)",
                 a->path, (long long)f->extent, (unsigned long long)a->file_bytes);
        return NC_EEDGE;
    }
    return NC_NOERR;
}

/* Create (writes; NC_CLOBBER replaces an old file) or open the file over a->comm with the
 * hints, and enter independent data mode unless transfers are collective. */
static int pnetcdf_open(void *state, const iolab_open_args_t *a, void **fh, char *err,
                        size_t errlen)
{
    const nc_state_t *s = state;
    nc_file_t f = {-1, -1, s->cfg->collective, s->o->nonblocking, 0, NULL, a->array,
                   MPI_SIGNED_CHAR};
    errno = 0;
    int st = a->dir == IOLAB_WRITE
                 ? ncmpi_create(a->comm, a->path, NC_CLOBBER | NC_64BIT_DATA, a->info, &f.ncid)
                 : ncmpi_open(a->comm, a->path, NC_NOWRITE, a->info, &f.ncid);
    if (st != NC_NOERR)
        nc_errline(err, errlen, a->dir == IOLAB_WRITE ? "ncmpi_create" : "ncmpi_open",
                   a->path, st);
    else
        st = a->dir == IOLAB_WRITE ? define(s, a, &f, err, errlen)
                                   : lookup(a, &f, err, errlen);
    if (st == NC_NOERR && !f.collective && (st = ncmpi_begin_indep_data(f.ncid)) != NC_NOERR)
        nc_errline(err, errlen, "ncmpi_begin_indep_data", a->path, st);
    int e = a->dir == IOLAB_WRITE ? nc_write_errno(st, errno, a->path)
                                  : st == NC_NOERR ? 0 : nc_errno(st, errno, a->path);
    if (!e && !(f.path = strdup(a->path)))
        e = ENOMEM;
    if (iolab_mpifile_other_failed(a->comm, e != 0)) {
        /* this rank's file stays open: closing it is collective over ranks that have none */
        snprintf(err, errlen, "opening %s failed on another rank of its communicator",
                 a->path);
        free(f.path);
        return EIO;
    }
    if (e) {
        if (f.ncid >= 0)  /* every rank failed, so this close is matched */
            ncmpi_close(f.ncid);
        return e;
    }
    nc_file_t *h = malloc(sizeof *h);
    if (!h) {
        ncmpi_close(f.ncid);  /* collective; a rank out of memory is not worth a hang here */
        free(f.path);
        return ENOMEM;
    }
    *h = f;
    *fh = h;
    return 0;
}

/* Complete n posted requests: collectively in collective data mode. */
static int wait_requests(const nc_file_t *f, int n, int *reqs)
{
    int *sts = malloc((size_t)(n ? n : 1) * sizeof *sts);
    if (!sts)
        return NC_ENOMEM;
    int st = f->collective ? ncmpi_wait_all(f->ncid, n, reqs, sts)
                           : ncmpi_wait(f->ncid, n, reqs, sts);
    for (int i = 0; st == NC_NOERR && i < n; i++)
        st = sts[i];
    free(sts);
    return st;
}

/* One vara call; count may be 0 (an empty part of a collective call). */
static int vara(const nc_file_t *f, iolab_dir_t dir, void *buf, MPI_Offset start,
                MPI_Offset count)
{
    signed char *p = buf;
    if (f->nonblocking) {
        int req = NC_REQ_NULL, st = dir == IOLAB_WRITE
            ? ncmpi_iput_vara_schar(f->ncid, f->varid, &start, &count, p, &req)
            : ncmpi_iget_vara_schar(f->ncid, f->varid, &start, &count, p, &req);
        int wst = wait_requests(f, 1, &req);  /* collective: made even after a failed post */
        return st != NC_NOERR ? st : wst;
    }
    if (dir == IOLAB_WRITE)
        return f->collective ? ncmpi_put_vara_schar_all(f->ncid, f->varid, &start, &count, p)
                             : ncmpi_put_vara_schar(f->ncid, f->varid, &start, &count, p);
    return f->collective ? ncmpi_get_vara_schar_all(f->ncid, f->varid, &start, &count, p)
                         : ncmpi_get_vara_schar(f->ncid, f->varid, &start, &count, p);
}

/* len bytes at variable index offset. A range past the variable's end is a short transfer,
 * as a read past the end of a plain file. */
static int64_t pnetcdf_xfer(void *fh, iolab_dir_t dir, void *buf, uint64_t offset,
                            uint64_t len)
{
    const nc_file_t *f = fh;
    uint64_t ext = (uint64_t)f->extent;
    uint64_t n = offset >= ext ? 0 : ext - offset < len ? ext - offset : len;
    errno = 0;
    int st = vara(f, dir, buf, n ? (MPI_Offset)offset : 0, (MPI_Offset)n);
    int e = dir == IOLAB_WRITE ? nc_write_errno(st, errno, f->path)
                               : st == NC_NOERR ? 0 : nc_errno(st, errno, f->path);
    return e ? -e : (int64_t)n;
}

/* --file-view: the rank's v->count pieces as one varn request. */
static int64_t pnetcdf_xfer_vec(void *fh, iolab_dir_t dir, void *buf, const iolab_vec_t *v)
{
    const nc_file_t *f = fh;
    if (v->count > INT_MAX)
        return -EOVERFLOW;
    int num = (int)v->count;
    MPI_Offset dummy = 0, *dptr = &dummy;
    MPI_Offset *vals = num ? malloc(2 * (size_t)num * sizeof *vals) : NULL;
    MPI_Offset **ptrs = num ? malloc(2 * (size_t)num * sizeof *ptrs) : NULL;
    int nomem = num && (!vals || !ptrs);
    if (nomem && !f->collective) {
        free(vals);
        free(ptrs);
        return -ENOMEM;
    }
    if (nomem)  /* still take part, with nothing: the others wait in the collective call */
        num = 0;
    for (int i = 0; i < num; i++) {
        vals[2 * i] = (MPI_Offset)(v->offset + (uint64_t)i * v->stride);
        vals[2 * i + 1] = (MPI_Offset)v->length;
        ptrs[i] = &vals[2 * i];
        ptrs[num + i] = &vals[2 * i + 1];
    }
    MPI_Offset *const *starts = num ? ptrs : &dptr, *const *counts = num ? ptrs + num : &dptr;
    signed char *p = buf;
    errno = 0;
    int st, req = NC_REQ_NULL;
    if (f->nonblocking) {
        st = dir == IOLAB_WRITE
            ? ncmpi_iput_varn_schar(f->ncid, f->varid, num, starts, counts, p, &req)
            : ncmpi_iget_varn_schar(f->ncid, f->varid, num, starts, counts, p, &req);
        int wst = wait_requests(f, 1, &req);
        st = st != NC_NOERR ? st : wst;
    } else {
        st = dir == IOLAB_WRITE
            ? (f->collective ? ncmpi_put_varn_schar_all(f->ncid, f->varid, num, starts, counts, p)
                             : ncmpi_put_varn_schar(f->ncid, f->varid, num, starts, counts, p))
            : (f->collective ? ncmpi_get_varn_schar_all(f->ncid, f->varid, num, starts, counts, p)
                             : ncmpi_get_varn_schar(f->ncid, f->varid, num, starts, counts, p));
    }
    int e = dir == IOLAB_WRITE ? nc_write_errno(st, errno, f->path)
                               : st == NC_NOERR ? 0 : nc_errno(st, errno, f->path);
    if (!e && nomem)
        e = ENOMEM;
    free(vals);
    free(ptrs);
    return e ? -e : (int64_t)(v->count * v->length);
}

/* One box: a blocking vara call (flexible API, the memory type of the elements), or a posted
 * request. An empty box is an empty call (collective mode: the others make theirs). */
static int box_call(const nc_file_t *f, iolab_dir_t dir, void *buf, const iolab_box_t *b,
                    uint64_t elems, int *req)
{
    const iolab_decomp_t *d = f->array;
    MPI_Offset start[IOLAB_DECOMP_MAXDIMS], count[IOLAB_DECOMP_MAXDIMS];
    for (int i = 0; i < d->nd; i++) {
        start[i] = elems ? (MPI_Offset)b->start[i] : 0;
        count[i] = elems ? (MPI_Offset)b->count[i] : 0;
    }
    MPI_Offset n = (MPI_Offset)elems;
    if (f->nonblocking)
        return dir == IOLAB_WRITE
            ? ncmpi_iput_vara(f->ncid, f->varid, start, count, buf, n, f->mtype, req)
            : ncmpi_iget_vara(f->ncid, f->varid, start, count, buf, n, f->mtype, req);
    if (dir == IOLAB_WRITE)
        return f->collective
            ? ncmpi_put_vara_all(f->ncid, f->varid, start, count, buf, n, f->mtype)
            : ncmpi_put_vara(f->ncid, f->varid, start, count, buf, n, f->mtype);
    return f->collective ? ncmpi_get_vara_all(f->ncid, f->varid, start, count, buf, n, f->mtype)
                         : ncmpi_get_vara(f->ncid, f->varid, start, count, buf, n, f->mtype);
}

/* Subarray layout: one vara call per box (BTIO's PnetCDF methods write each cell so), or
 * with --pnetcdf.nonblocking one request per box and one wait for all of them. */
static int64_t pnetcdf_xfer_boxes(void *fh, iolab_dir_t dir, void *buf, const iolab_box_t *b,
                                  int n)
{
    const nc_file_t *f = fh;
    const iolab_decomp_t *d = f->array;
    int *reqs = calloc((size_t)(n ? n : 1), sizeof *reqs), nreq = 0, st = NC_NOERR;
    uint64_t done = 0;
    if (!reqs)
        return -ENOMEM;
    errno = 0;
    for (int k = 0; k < n; k++) {
        uint64_t elems = iolab_box_elems(d, &b[k]);
        if (!elems && !f->collective)
            continue;
        /* after a failure: empty calls, so collective ones still match */
        int s2 = box_call(f, dir, (char *)buf + done, &b[k], st == NC_NOERR ? elems : 0,
                          &reqs[nreq]);
        if (f->nonblocking && s2 == NC_NOERR)
            nreq++;
        st = st != NC_NOERR ? st : s2;
        done += elems * d->elem;
    }
    if (f->nonblocking) {
        int wst = wait_requests(f, nreq, reqs);
        st = st != NC_NOERR ? st : wst;
    }
    free(reqs);
    int e = dir == IOLAB_WRITE ? nc_write_errno(st, errno, f->path)
                               : st == NC_NOERR ? 0 : nc_errno(st, errno, f->path);
    return e ? -e : (int64_t)done;
}

/* ncmpi_sync is collective: it flushes PnetCDF's buffers and calls MPI_File_sync. */
static int pnetcdf_sync(void *fh)
{
    const nc_file_t *f = fh;
    errno = 0;
    int st = ncmpi_sync(f->ncid);
    return nc_write_errno(st, errno, f->path);
}

/* The MPI-IO hints in effect plus PnetCDF's own (nc_header_align_size, ...). */
static int pnetcdf_get_info(void *fh, MPI_Info *info)
{
    const nc_file_t *f = fh;
    int st = ncmpi_inq_file_info(f->ncid, info);
    return st == NC_NOERR ? 0 : nc_errno(st, 0, NULL);
}

static int pnetcdf_close(void *fh)
{
    nc_file_t *f = fh;
    errno = 0;
    int st = ncmpi_close(f->ncid);
    /* closing a written file writes its header: a write-failure errno counts */
    int e = nc_write_errno(st, errno, f->path);
    free(f->path);
    free(f);
    return e;
}

/* Called by one rank per file; a missing file is not an error. (ncmpi_delete is
 * MPI_File_delete underneath.) */
static int pnetcdf_remove(void *state, const char *path)
{
    (void)state;
    return iolab_mpifile_remove(path);
}

/* PnetCDF 1.12 fails a single vara/varn call of 2 GiB or more with a bare I/O error
 * (measured with Debian's 1.12.3); later versions are left to report for themselves. */
#if PNETCDF_VERSION_MAJOR == 1 && PNETCDF_VERSION_MINOR <= 12
#define PNETCDF_MAX_CALL_BYTES ((uint64_t)INT_MAX)
#else
#define PNETCDF_MAX_CALL_BYTES 0
#endif

const iolab_backend_t iolab_backend_pnetcdf = {
    .name = "pnetcdf",
    .summary = "PnetCDF: one 1-D NC_BYTE variable in a CDF-5 file (an N-D record variable "
               "for subarray/btio), vara (varn with --file-view) calls, blocking or "
               "non-blocking, independent or collective data mode",
    .caps = IOLAB_CAP_SHARED | IOLAB_CAP_COLLECTIVE | IOLAB_CAP_VECTOR | IOLAB_CAP_HINTS |
            IOLAB_CAP_PLAIN_FILES | IOLAB_CAP_STORES_DATA | IOLAB_CAP_BOXES,
    .options = pnetcdf_options,
    .options_size = sizeof(pnetcdf_opts_t),
    .max_call_bytes = PNETCDF_MAX_CALL_BYTES,
    .max_call_why = "PnetCDF 1.12 cannot move 2 GiB or more in one call",
    .init = pnetcdf_init,
    .fini = pnetcdf_fini,
    .open = pnetcdf_open,
    .xfer = pnetcdf_xfer,
    .xfer_vec = pnetcdf_xfer_vec,
    .xfer_boxes = pnetcdf_xfer_boxes,
    .sync = pnetcdf_sync,
    .get_info = pnetcdf_get_info,
    .close = pnetcdf_close,
    .remove = pnetcdf_remove,
};
