/* iolab-bench backend "pnetcdf": PnetCDF (parallel netCDF) over MPI-IO.
 *
 * Each file is a CDF-5 file (NC_64BIT_DATA: 64-bit sizes, so files past 4 GiB work) with one
 * 1-D NC_BYTE variable "data" whose length is the layout's file size; a layout offset is a
 * variable index. Transfers are ncmpi_put_vara_schar_all / get_vara_schar_all (collective
 * data mode, --collective) or the same without _all in independent data mode. --file-view
 * moves a rank's whole strided share with one ncmpi_put_varn/get_varn call (n pieces, one
 * request). Fill mode is off unless --pnetcdf.fill: filling writes the whole variable at
 * ncmpi_enddef, a hidden first write that would be timed as part of open. */
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
    bool fill;
} pnetcdf_opts_t;

static const iolab_option_t pnetcdf_options[] = {
    {"pnetcdf.fill", "pnetcdf_fill", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "pnetcdf api: write fill values when the variable is defined (ncmpi_set_fill NC_FILL)",
     offsetof(pnetcdf_opts_t, fill)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

typedef struct nc_state {
    const pnetcdf_opts_t *o;
    const iolab_cfg_t *cfg;
} nc_state_t;

typedef struct nc_file {
    int ncid, varid, collective;
    MPI_Offset extent;
    char *path;         /* for error analysis (is the file system full?) */
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
    (void)env, (void)world, (void)err, (void)errlen;
    nc_state_t *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    *s = (nc_state_t){opts, cfg};
    *state = s;
    return 0;
}

static void pnetcdf_fini(void *state) { free(state); }

/* Define the file's one dimension and variable, then leave define mode. */
static int define(const nc_state_t *s, const iolab_open_args_t *a, nc_file_t *f, char *err,
                  size_t errlen)
{
    int dimid, old, st;
    if ((st = ncmpi_def_dim(f->ncid, "x", (MPI_Offset)a->file_bytes, &dimid)) != NC_NOERR ||
        (st = ncmpi_def_var(f->ncid, VARIABLE, NC_BYTE, 1, &dimid, &f->varid)) != NC_NOERR ||
        (st = ncmpi_set_fill(f->ncid, s->o->fill ? NC_FILL : NC_NOFILL, &old)) != NC_NOERR ||
        (st = ncmpi_enddef(f->ncid)) != NC_NOERR) {
        nc_errline(err, errlen, "defining variable " VARIABLE " of", a->path, st);
        return st;
    }
    f->extent = (MPI_Offset)a->file_bytes;
    return NC_NOERR;
}

/* Find the variable of an existing file and its length. */
static int lookup(const iolab_open_args_t *a, nc_file_t *f, char *err, size_t errlen)
{
    int dimid, st;
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
    nc_file_t f = {-1, -1, s->cfg->collective, 0, NULL};
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

/* One vara call; count may be 0 (an empty part of a collective call). */
static int vara(const nc_file_t *f, iolab_dir_t dir, void *buf, MPI_Offset start,
                MPI_Offset count)
{
    signed char *p = buf;
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
    int st = dir == IOLAB_WRITE
        ? (f->collective ? ncmpi_put_varn_schar_all(f->ncid, f->varid, num, starts, counts, p)
                         : ncmpi_put_varn_schar(f->ncid, f->varid, num, starts, counts, p))
        : (f->collective ? ncmpi_get_varn_schar_all(f->ncid, f->varid, num, starts, counts, p)
                         : ncmpi_get_varn_schar(f->ncid, f->varid, num, starts, counts, p));
    int e = dir == IOLAB_WRITE ? nc_write_errno(st, errno, f->path)
                               : st == NC_NOERR ? 0 : nc_errno(st, errno, f->path);
    if (!e && nomem)
        e = ENOMEM;
    free(vals);
    free(ptrs);
    return e ? -e : (int64_t)(v->count * v->length);
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
    .summary = "PnetCDF: one 1-D NC_BYTE variable in a CDF-5 file, vara (varn with "
               "--file-view) calls, independent or collective data mode",
    .caps = IOLAB_CAP_SHARED | IOLAB_CAP_COLLECTIVE | IOLAB_CAP_VECTOR | IOLAB_CAP_HINTS |
            IOLAB_CAP_PLAIN_FILES | IOLAB_CAP_STORES_DATA,
    .options = pnetcdf_options,
    .options_size = sizeof(pnetcdf_opts_t),
    .max_call_bytes = PNETCDF_MAX_CALL_BYTES,
    .max_call_why = "PnetCDF 1.12 cannot move 2 GiB or more in one call",
    .init = pnetcdf_init,
    .fini = pnetcdf_fini,
    .open = pnetcdf_open,
    .xfer = pnetcdf_xfer,
    .xfer_vec = pnetcdf_xfer_vec,
    .sync = pnetcdf_sync,
    .get_info = pnetcdf_get_info,
    .close = pnetcdf_close,
    .remove = pnetcdf_remove,
};
