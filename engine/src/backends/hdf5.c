/* iolab-bench backend "hdf5": parallel HDF5 through its MPI-IO driver (H5Pset_fapl_mpio).
 *
 * Each file holds one 1-D dataset "data" of bytes whose extent is the layout's file size, so
 * a layout offset is a dataset index and the core's layouts, verify and aggregation apply
 * unchanged. The dataset is contiguous, or chunked with --hdf5.chunk; --hdf5.align sets
 * H5Pset_alignment (objects land on file-system block or stripe boundaries). A transfer is a
 * hyperslab selection written with H5FD_MPIO_INDEPENDENT or, with --collective,
 * H5FD_MPIO_COLLECTIVE; --file-view selects a rank's whole strided share as one hyperslab and
 * moves it with one H5Dwrite/H5Dread. The subarray layout (and btio) makes the dataset the
 * N-D array instead (record dimension first, unsigned integers of --elem bytes) and moves a
 * rank's boxes as one union of hyperslabs per call. HDF5's own error printing is off: errors
 * become an errno and one line (the innermost message of HDF5's error stack, which names the
 * MPI error). */
#include <errno.h>
#include <limits.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backend.h"
#include "mpifile.h"

#define DATASET "data"

typedef struct hdf5_opts {
    uint64_t align, align_threshold, chunk;
    bool direct, coll_metadata;
    bool segment_datasets;  /* IOR's layout: a dataset per segment (see seg_switch) */
} hdf5_opts_t;

static const iolab_option_t hdf5_options[] = {
    {"hdf5.align", "hdf5_align", IOLAB_OPT_SIZE, "0", "bytes", NULL,
     "hdf5 api: H5Pset_alignment: place objects at multiples of this (0 = off)",
     offsetof(hdf5_opts_t, align)},
    {"hdf5.align-threshold", "hdf5_align_threshold", IOLAB_OPT_SIZE, "0", "bytes", NULL,
     "hdf5 api: only objects of at least this size are aligned (0 = the raw data: the "
     "dataset, or one chunk)",
     offsetof(hdf5_opts_t, align_threshold)},
    {"hdf5.chunk", "hdf5_chunk", IOLAB_OPT_SIZE, "0", "bytes", NULL,
     "hdf5 api: chunked dataset with chunks of this many bytes (0 = contiguous)",
     offsetof(hdf5_opts_t, chunk)},
    {"hdf5.direct", "hdf5_direct", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "hdf5 api: HDF5's direct driver (H5Pset_fapl_direct: O_DIRECT, one process per file, "
     "--layout fpp) where this HDF5 was built with it", offsetof(hdf5_opts_t, direct)},
    {"hdf5.coll-metadata", "hdf5_coll_metadata", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "hdf5 api: collective metadata: reads done once and shared (H5Pset_all_coll_metadata_ops) "
     "and metadata flushed with collective writes (H5Pset_coll_metadata_write)",
     offsetof(hdf5_opts_t, coll_metadata)},
    {"hdf5.segment-datasets", "hdf5_segment_datasets", IOLAB_OPT_BOOL, "false", NULL, NULL,
     "hdf5 api: IOR's file: a dataset per segment, Dataset-0000.NNNN, of 8-byte integers "
     "(ranks x --block bytes, --block with fpp), created in segment order (IOR -a HDF5)",
     offsetof(hdf5_opts_t, segment_datasets)},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, 0}};

typedef struct hdf5_state {
    const hdf5_opts_t *o;
    const iolab_cfg_t *cfg;
    uint64_t lbs, fs_block;  /* --hdf5.direct: alignment and block size for the driver */
    uint64_t seg_bytes;      /* --hdf5.segment-datasets: bytes of one segment's dataset */
} hdf5_state_t;

typedef struct hdf5_file {
    hid_t file, dset, fspace, dxpl;
    hid_t mspace;       /* memory space of mlen bytes, kept while lengths repeat */
    hsize_t mlen;
    hid_t mnone;        /* selects nothing: a rank's zero-byte part of a collective call */
    hsize_t extent;     /* 1-D: bytes; N-D: elements of the first dimension */
    hid_t mtype;        /* element type in memory and file (bytes, or --elem-byte integers) */
    const iolab_decomp_t *array;  /* subarray layout: the N-D array (the core's), or NULL */
    char *path;         /* for error analysis (is the file system full?) */
    MPI_Comm comm;      /* the ranks that opened the file (the core's; valid until close) */
    int wrote, failed;  /* opened for writing; a transfer failed */
    MPI_File *mpifh;    /* the MPI file under HDF5 (its driver's; NULL if not found) */
    uint64_t seg_bytes; /* --hdf5.segment-datasets: bytes per segment dataset (0: off) */
    int64_t seg;        /* the segment whose dataset is open (-1: none yet) */
} hdf5_file_t;

/* The innermost message of HDF5's error stack (the one naming the real cause, e.g. the MPI
 * error string), on one line; clears the stack. */
static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc)
        snprintf(data, 512, "%s", e->desc);
    return 0;
}

static void h5_errline(char *err, size_t errlen, const char *what, const char *path)
{
    char inner[512] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, inner);
    H5Eclear2(H5E_DEFAULT);
    for (char *p = inner; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    snprintf(err, errlen, "%s %s failed%s%s", what, path, inner[0] ? ": " : "", inner);
}

/* --hdf5.direct: the driver exists in this HDF5 (H5_HAVE_DIRECT), and the run is one it can
 * serve: serial files (a file per process), no MPI-IO hints, whole logical blocks. */
static int check_direct(const iolab_cfg_t *cfg, const iolab_env_t *env, char *err,
                        size_t errlen)
{
#ifndef H5_HAVE_DIRECT
    (void)cfg, (void)env;
    snprintf(err, errlen, "--hdf5.direct: this HDF5 (%d.%d.%d) was built without its direct "
             "driver (H5_HAVE_DIRECT undefined; HDF5's --enable-direct-vfd); use --api posix "
             "--posix.mode direct to measure O_DIRECT", H5_VERS_MAJOR, H5_VERS_MINOR,
             H5_VERS_RELEASE);
    return -1;
#else
    uint64_t lbs = env->logical_block_size ? env->logical_block_size : 512;
    if (cfg->layout != IOLAB_LAYOUT_FPP || cfg->collective || cfg->file_view ||
        cfg->hint.n || cfg->hints_file)
        snprintf(err, errlen, "--hdf5.direct is a serial driver: use --layout fpp, without "
                 "--collective, --file-view or hints");
    else if (cfg->transfer % lbs)
        snprintf(err, errlen, "--hdf5.direct: --transfer %llu is not a multiple of the logical "
                 "block size %llu", (unsigned long long)cfg->transfer,
                 (unsigned long long)lbs);
    else
        return 0;
    return -1;
#endif
}

/* --- IOR's dataset per segment (--hdf5.segment-datasets) --- */
/* IOR -a HDF5 writes segment s of the file as dataset Dataset-0000.<s> of 8-byte integers,
 * ranks * block bytes (block with a file per process), each rank its block of it; datasets
 * are created as the transfers reach them, so every rank must reach them in the same order
 * (sequential transfers, no deadline). Sets *seg_bytes; 0 or -1 with err. */
static int check_segment_datasets(const hdf5_opts_t *o, const iolab_cfg_t *cfg,
                                  MPI_Comm world, uint64_t *seg_bytes, char *err,
                                  size_t errlen)
{
    int ranks = 1;
    MPI_Comm_size(world, &ranks);
    const char *why = NULL;
    if (cfg->layout != IOLAB_LAYOUT_FPP && cfg->layout != IOLAB_LAYOUT_SEGMENTED)
        why = "applies to --layout fpp and segmented (IOR's files)";
    else if (cfg->transfer % 8 || cfg->block % 8)
        why = "needs --transfer and --block in whole 8-byte integers, as IOR";
    else if (cfg->file_view || cfg->threads > 1 || o->chunk ||
             (cfg->segments > 1 && (cfg->random || cfg->random_repeat || cfg->stonewall > 0)))
        why = "creates the datasets in segment order on every rank: no --file-view, "
              "--threads or --hdf5.chunk, and with several --segments no --random or "
              "--stonewall";
    if (why) {
        snprintf(err, errlen, "--hdf5.segment-datasets %s", why);
        return -1;
    }
    *seg_bytes = cfg->layout == IOLAB_LAYOUT_FPP ? cfg->block : (uint64_t)ranks * cfg->block;
    return 0;
}

static int seg_switch(hdf5_file_t *h, int64_t seg, char *err, size_t errlen);
/* --- end IOR's dataset per segment --- */

static int hdf5_init(void **state, const void *opts, const iolab_cfg_t *cfg,
                     const iolab_env_t *env, MPI_Comm world, char *err, size_t errlen)
{
    const hdf5_opts_t *o = opts;
    if (cfg->layout == IOLAB_LAYOUT_SUBARRAY && (o->chunk || (cfg->elem != 1 &&
        cfg->elem != 2 && cfg->elem != 4 && cfg->elem != 8))) {
        snprintf(err, errlen, "api hdf5 with --layout subarray or --workload btio: --elem must "
                 "be 1, 2, 4 or 8 (an integer type; got %llu) and --hdf5.chunk is not "
                 "supported", (unsigned long long)cfg->elem);
        return EINVAL;
    }
    /* HDF5 1.10 limits a chunk to 4 GiB - 1 bytes. */
    if (o->chunk >= (1ull << 32)) {
        snprintf(err, errlen, "--hdf5.chunk %llu: HDF5 chunks must be below 4 GiB; use a "
                 "smaller chunk", (unsigned long long)o->chunk);
        return EINVAL;
    }
    if (o->align_threshold && !o->align) {
        snprintf(err, errlen, "--hdf5.align-threshold needs --hdf5.align (the alignment)");
        return EINVAL;
    }
    if (o->direct && o->coll_metadata) {
        snprintf(err, errlen, "--hdf5.coll-metadata needs HDF5's MPI-IO driver: leave out "
                 "--hdf5.direct");
        return EINVAL;
    }
    if (o->direct && check_direct(cfg, env, err, errlen) != 0)
        return EINVAL;
    uint64_t seg_bytes = 0;
    if (o->segment_datasets && check_segment_datasets(o, cfg, world, &seg_bytes, err,
                                                      errlen) != 0)
        return EINVAL;
    hdf5_state_t *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    *s = (hdf5_state_t){o, cfg, env->logical_block_size ? env->logical_block_size : 512,
                        env->fs_block_size ? env->fs_block_size : 4096, seg_bytes};
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);  /* errors are reported as one line, not a dump */
    *state = s;
    return 0;
}

static void hdf5_fini(void *state)
{
    free(state);
}

/* The file driver: MPI-IO over comm with the hints, or (--hdf5.direct) the direct driver
 * with the device's alignment, the file system's block and one transfer of copy buffer. */
static herr_t set_driver(const hdf5_state_t *s, hid_t fapl, const iolab_open_args_t *a)
{
#ifdef H5_HAVE_DIRECT
    if (s->o->direct)
        return H5Pset_fapl_direct(fapl, s->lbs, s->fs_block, s->cfg->transfer);
#else
    (void)s;
#endif
    return H5Pset_fapl_mpio(fapl, a->comm, a->info);
}

/* File access: the driver, collective metadata, and the alignment. */
static hid_t make_fapl(const hdf5_state_t *s, const iolab_open_args_t *a)
{
    const hdf5_opts_t *o = s->o;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || set_driver(s, fapl, a) < 0)
        goto fail;
    /* Every rank opens, creates and closes together here, as the property requires. */
    if (o->coll_metadata && (H5Pset_all_coll_metadata_ops(fapl, 1) < 0 ||
                             H5Pset_coll_metadata_write(fapl, 1) < 0))
        goto fail;
    if (o->align) {
        /* By default align the raw data (the dataset, or each chunk) and nothing smaller:
         * IOR's threshold (= the alignment) silently skips datasets smaller than it, and
         * threshold 1 would pad every small metadata block to the alignment. */
        hsize_t raw = o->chunk && o->chunk < a->file_bytes ? o->chunk : a->file_bytes;
        hsize_t threshold = o->align_threshold ? o->align_threshold : raw;
        if (H5Pset_alignment(fapl, threshold, o->align) < 0)
            goto fail;
    }
    return fapl;
fail:
    if (fapl >= 0)
        H5Pclose(fapl);
    return H5I_INVALID_HID;
}

/* The element type of the file's dataset: bytes, or an N-D array's --elem-byte integers
 * (native in memory and file: no conversion, the bytes round-trip). */
static hid_t elem_type(const iolab_decomp_t *array)
{
    if (!array)
        return H5T_NATIVE_UCHAR;
    switch (array->elem) {
    case 2: return H5T_NATIVE_UINT16;
    case 4: return H5T_NATIVE_UINT32;
    case 8: return H5T_NATIVE_UINT64;
    default: return H5T_NATIVE_UCHAR;
    }
}

/* Create the file and its dataset (extent a->file_bytes, or the N-D array's dimensions).
 * Fill values are never written: a parallel dataset is allocated at creation, and filling
 * it would be a hidden first write. */
static int create_file(const hdf5_opts_t *o, const iolab_open_args_t *a, hid_t fapl,
                       hdf5_file_t *h, char *err, size_t errlen)
{
    hsize_t dims[IOLAB_DECOMP_MAXDIMS] = {a->file_bytes};
    int nd = a->array ? a->array->nd : 1;
    for (int i = 0; a->array && i < nd; i++)
        dims[i] = a->array->dims[i];
    h->file = H5Fcreate(a->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (h->file < 0) {
        h5_errline(err, errlen, "H5Fcreate", a->path);
        return -1;
    }
    if (h->seg_bytes)  /* the datasets come as the transfers reach them (seg_switch) */
        return 0;
    hid_t space = H5Screate_simple(nd, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int ok = space >= 0 && dcpl >= 0 && H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0;
    if (ok && o->chunk) {
        /* a fixed-size dataset cannot have chunks larger than itself */
        hsize_t chunk = o->chunk < dims[0] ? o->chunk : dims[0];
        ok = H5Pset_chunk(dcpl, 1, &chunk) >= 0;
    }
    if (ok)
        h->dset = H5Dcreate2(h->file, DATASET, h->mtype, space, H5P_DEFAULT, dcpl,
                             H5P_DEFAULT);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (h->dset < 0) {
        h5_errline(err, errlen, "H5Dcreate2 /" DATASET " in", a->path);
        return -1;
    }
    return 0;
}

/* Open an existing file; its dataset must be as long as the layout's file. */
static int open_file(const iolab_open_args_t *a, hid_t fapl, hdf5_file_t *h, char *err,
                     size_t errlen)
{
    h->file = H5Fopen(a->path, H5F_ACC_RDONLY, fapl);
    if (h->file < 0) {
        h5_errline(err, errlen, "H5Fopen", a->path);
        return -1;
    }
    if (h->seg_bytes)
        return seg_switch(h, 0, err, errlen);  /* is it IOR's file? */
    h->dset = H5Dopen2(h->file, DATASET, H5P_DEFAULT);
    if (h->dset < 0) {
        h5_errline(err, errlen, "H5Dopen2 /" DATASET " in", a->path);
        return -1;
    }
    return 0;
}

/* 1 when the dataset's dimensions are the N-D array's (a read of another run's file). */
static int same_dims(const hdf5_file_t *h)
{
    hsize_t dims[IOLAB_DECOMP_MAXDIMS];
    if (H5Sget_simple_extent_ndims(h->fspace) != h->array->nd)
        return 0;
    H5Sget_simple_extent_dims(h->fspace, dims, NULL);
    for (int i = 0; i < h->array->nd; i++)
        if (dims[i] != h->array->dims[i])
            return 0;
    return 1;
}

/* The transfer property list and the empty memory space (no dataset needed). */
static int prepare_xfer(hdf5_file_t *h, int collective, char *err, size_t errlen,
                        const char *path)
{
    hsize_t one = 1;
    h->mnone = H5Screate_simple(1, &one, NULL);
    h->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (h->mnone < 0 || h->dxpl < 0 || H5Sselect_none(h->mnone) < 0 ||
        H5Pset_dxpl_mpio(h->dxpl, collective ? H5FD_MPIO_COLLECTIVE
                                             : H5FD_MPIO_INDEPENDENT) < 0) {
        h5_errline(err, errlen, "preparing the transfers of", path);
        return -1;
    }
    return 0;
}

/* Dataspaces and the transfer property list of an open dataset. */
static int prepare(hdf5_file_t *h, int collective, char *err, size_t errlen, const char *path)
{
    hsize_t one = 1;
    int nd = h->array ? h->array->nd : 1;
    if (h->seg_bytes && h->dset < 0)
        return prepare_xfer(h, collective, err, errlen, path);  /* no dataset yet */
    h->fspace = h->fspace >= 0 ? h->fspace : H5Dget_space(h->dset);
    h->mnone = H5Screate_simple(1, &one, NULL);
    h->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (h->fspace < 0 || h->mnone < 0 || h->dxpl < 0 || H5Sselect_none(h->mnone) < 0 ||
        H5Pset_dxpl_mpio(h->dxpl, collective ? H5FD_MPIO_COLLECTIVE
                                             : H5FD_MPIO_INDEPENDENT) < 0 ||
        H5Sget_simple_extent_ndims(h->fspace) < 1) {
        h5_errline(err, errlen, "preparing the dataset of", path);
        return -1;
    }
    if (h->array ? !same_dims(h) : H5Sget_simple_extent_ndims(h->fspace) != nd) {
        snprintf(err, errlen, "%s: dataset /" DATASET " has other dimensions than the array "
                 "of this run; write it first with the same --grid, --steps and layout "
                 "(--write --keep)", path);
        return -1;
    }
    hsize_t dims[IOLAB_DECOMP_MAXDIMS];
    H5Sget_simple_extent_dims(h->fspace, dims, NULL);
    h->extent = dims[0];
    return 0;
}

/* Close whatever of h is open. Returns 0 or EIO. */
static int close_all(hdf5_file_t *h)
{
    int bad = 0;
    hid_t spaces[3] = {h->mspace, h->mnone, h->fspace};
    for (int i = 0; i < 3; i++)
        if (spaces[i] >= 0)
            bad |= H5Sclose(spaces[i]) < 0;
    if (h->dxpl >= 0)
        bad |= H5Pclose(h->dxpl) < 0;
    if (h->dset >= 0)
        bad |= H5Dclose(h->dset) < 0;
    if (h->file >= 0)
        bad |= H5Fclose(h->file) < 0;
    H5Eclear2(H5E_DEFAULT);
    return bad ? EIO : 0;
}

/* The MPI file under an HDF5 file, or NULL. H5Fget_access_plist duplicates the driver's
 * communicator (collective), so this is called where every rank of the file is. */
static MPI_File *mpi_file_of(hid_t file)
{
    hid_t fapl = H5Fget_access_plist(file);
    void *handle = NULL;
    if (fapl < 0 || H5Fget_vfd_handle(file, fapl, &handle) < 0)
        handle = NULL;
    if (fapl >= 0)
        H5Pclose(fapl);
    H5Eclear2(H5E_DEFAULT);
    return handle;
}

/* Written file on a full file system: HDF5 1.10 cannot survive a failed H5Fclose (the file's
 * ID stays registered with its memory freed, and H5close at MPI_Finalize crashes on it), and
 * the close fails when its metadata cannot be written. So when a transfer failed on a rank of
 * the file, or the file system is full, its first rank truncates the file (the run has failed;
 * its data is lost anyway) to give the metadata room, and the metadata is flushed before the
 * close, again until it fits: a failed H5Fflush leaves the cache dirty and can be repeated,
 * and after one that succeeded the close writes only blocks the file already has. The retries
 * wait for the run's other files (fpp, subset) to be truncated by their own ranks, which may
 * still be writing (seconds late on a loaded machine: a fixed wait for free space was not
 * enough, and a close writes only a page, so waiting for more than that is waiting for
 * nothing). Collective over the file's ranks. Returns ENOSPC when it truncated, so that the
 * run cannot pass as ok. */
#define FLUSH_RETRIES 3000       /* 30 s: only runs that already failed wait here */
#define FLUSH_RETRY_US 10000

static void flush_until_it_fits(hdf5_file_t *h)
{
    for (int i = 0; i < FLUSH_RETRIES; i++) {
        int ok = H5Fflush(h->file, H5F_SCOPE_LOCAL) >= 0, all = 0;
        H5Eclear2(H5E_DEFAULT);
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, h->comm);
        if (all)
            return;
        usleep(FLUSH_RETRY_US);
    }
}

static int make_room(hdf5_file_t *h)
{
    struct statvfs sv;
    const char *p = iolab_env_strip_prefix(h->path);
    int mine = h->failed || (statvfs(p, &sv) == 0 && sv.f_bfree == 0), any = 0, crank = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, h->comm);
    if (!any)
        return 0;
    MPI_Comm_rank(h->comm, &crank);
    int bad = crank == 0 && truncate(p, 0) != 0 && errno != ENOENT;
    MPI_Barrier(h->comm);
    if (h->file >= 0)
        flush_until_it_fits(h);
    return bad ? EIO : ENOSPC;
}

static int hdf5_open(void *state, const iolab_open_args_t *a, void **fh, char *err,
                     size_t errlen)
{
    const hdf5_state_t *s = state;
    hdf5_file_t *h = malloc(sizeof *h);
    if (!h)
        return ENOMEM;
    *h = (hdf5_file_t){H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID,
                       H5I_INVALID_HID, 0, H5I_INVALID_HID, 0, elem_type(a->array), a->array,
                       strdup(a->path), a->comm, a->dir == IOLAB_WRITE, 0, NULL,
                       a->array ? 0 : s->seg_bytes, -1};
    if (h->seg_bytes)
        h->mtype = H5T_NATIVE_LLONG;  /* IOR's 8-byte integers */
    if (a->dir == IOLAB_WRITE)
        iolab_mpifile_fresh(a->comm, a->path);
    errno = 0;
    hid_t fapl = make_fapl(s, a);
    int rc = fapl < 0 ? (h5_errline(err, errlen, "setting the file driver for", a->path), -1)
             : a->dir == IOLAB_WRITE ? create_file(s->o, a, fapl, h, err, errlen)
                                     : open_file(a, fapl, h, err, errlen);
    int e = rc ? iolab_mpifile_errno(errno, a->path) : 0;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (!e && prepare(h, s->cfg->collective, err, errlen, a->path) != 0)
        e = EIO;
    if (!e && a->dir == IOLAB_READ && !a->array && !h->seg_bytes &&
        h->extent < a->file_bytes) {
        snprintf(err, errlen, "%s: dataset /" DATASET " has %llu bytes but the layout reads "
                 "%llu; write it first with the same sizes and layout (--write --keep)",
                 a->path, (unsigned long long)h->extent, (unsigned long long)a->file_bytes);
        e = EIO;
    }
    if (!e && !h->path)
        e = ENOMEM;
    /* Agree over the file's ranks: who failed, and did all (then the clean-up below is
     * collective and matched; a rank left with a file alone cannot close it). */
    int mine = e != 0, nfail = 0, csize = 1;
    MPI_Comm_size(a->comm, &csize);
    MPI_Allreduce(&mine, &nfail, 1, MPI_INT, MPI_SUM, a->comm);
    if (nfail && nfail < csize) {
        if (!e)
            snprintf(err, errlen, "opening %s failed on another rank of its communicator",
                     a->path);
        free(h->path);
        free(h);  /* this rank's file stays open: closing it is collective over ranks that
                     have none */
        return e ? e : EIO;
    }
    if (e) {
        /* every rank failed, so closing what did open is matched; a dataset that did not
         * fit leaves a file whose close would fail (see make_room) */
        if (a->dir == IOLAB_WRITE && h->path) {
            h->failed = 1;  /* whatever statvfs says now (another rank of an fpp run may
                               have freed or taken the last blocks): this file is broken */
            make_room(h);
        }
        close_all(h);
        free(h->path);
        free(h);
        return e;
    }
    h->mpifh = s->o->direct ? NULL : mpi_file_of(h->file);  /* the direct driver's is an fd */
    *fh = h;
    return 0;
}

/* The memory space for len contiguous bytes (kept for the next call of the same length). */
static hid_t mem_space(hdf5_file_t *h, hsize_t len)
{
    if (h->mspace >= 0 && h->mlen == len)
        return h->mspace;
    if (h->mspace >= 0)
        H5Sclose(h->mspace);
    h->mspace = H5Screate_simple(1, &len, NULL);
    h->mlen = len;
    return h->mspace;
}

/* Sets *data when HDF5's own collective MPI-IO call failed (an entry of its error stack). */
static herr_t find_coll_failure(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    if (e->desc && (strstr(e->desc, "MPI_File_write_at_all failed") ||
                    strstr(e->desc, "MPI_File_read_at_all failed")))
        *(int *)data = 1;
    return 0;
}

/* HDF5 1.10's MPI-IO driver sets a file view for a collective transfer and resets it after
 * with MPI_File_set_view (collective). When its MPI_File_*_at_all fails on this rank only
 * (ROMIO without collective buffering: ENOSPC on one rank), it returns before the reset, and
 * the other ranks wait in theirs for ever. Make the missing call here. */
static void rematch_view(const hdf5_file_t *h)
{
    int skipped = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, find_coll_failure, &skipped);
    if (skipped && h->mpifh)
        MPI_File_set_view(*h->mpifh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
}

/* One H5Dwrite/H5Dread of the current file selection; want: bytes selected. */
static int64_t move(hdf5_file_t *h, iolab_dir_t dir, void *buf, hid_t mspace, uint64_t want)
{
    errno = 0;
    herr_t rc = mspace < 0 ? -1
                : dir == IOLAB_WRITE
                    ? H5Dwrite(h->dset, h->mtype, mspace, h->fspace, h->dxpl, buf)
                    : H5Dread(h->dset, h->mtype, mspace, h->fspace, h->dxpl, buf);
    int sys = errno;
    if (rc < 0) {
        rematch_view(h);
        H5Eclear2(H5E_DEFAULT);
        h->failed = 1;
        return -iolab_mpifile_errno(sys, h->path);
    }
    if (dir == IOLAB_WRITE && iolab_mpifile_write_errno(sys)) {
        h->failed = 1;
        return -sys;  /* a failed pwrite under a write reported as done (OMPIO) */
    }
    return (int64_t)want;
}

/* A call that moves nothing: this rank's part of a collective call when it has no data, or
 * after it failed (the others still wait for it). */
static int64_t empty_call(hdf5_file_t *h, iolab_dir_t dir, void *buf)
{
    if (H5Sselect_none(h->fspace) < 0)
        return -EIO;
    return move(h, dir, buf, h->mnone, 0);
}

/* --hdf5.segment-datasets (see check_segment_datasets) */
/* Make segment seg's dataset the open one: close the previous, create it (a write) or open
 * it (a read). Returns 0 or -1 with the HDF5 error line in err. */
static int seg_switch(hdf5_file_t *h, int64_t seg, char *err, size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "Dataset-0000.%04lld", (long long)seg);
    if (h->fspace >= 0)
        H5Sclose(h->fspace);
    if (h->dset >= 0)
        H5Dclose(h->dset);
    h->fspace = h->dset = H5I_INVALID_HID;
    hsize_t n = h->seg_bytes / 8;
    if (h->wrote) {
        hid_t space = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (space >= 0 && dcpl >= 0 && H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0)
            h->dset = H5Dcreate2(h->file, name, H5T_NATIVE_LLONG, space, H5P_DEFAULT, dcpl,
                                 H5P_DEFAULT);
        if (space >= 0)
            H5Sclose(space);
        if (dcpl >= 0)
            H5Pclose(dcpl);
    } else {
        h->dset = H5Dopen2(h->file, name, H5P_DEFAULT);
    }
    h->fspace = h->dset >= 0 ? H5Dget_space(h->dset) : H5I_INVALID_HID;
    if (h->fspace < 0) {
        h5_errline(err, errlen, h->wrote ? "H5Dcreate2" : "H5Dopen2", h->path);
        return -1;
    }
    h->extent = n;
    h->seg = seg;
    return 0;
}

/* A transfer under --hdf5.segment-datasets: its segment's dataset, its 8-byte integers. */
static int64_t seg_xfer(hdf5_file_t *h, iolab_dir_t dir, void *buf, uint64_t offset,
                        uint64_t len)
{
    char err[256];
    int64_t seg = (int64_t)(offset / h->seg_bytes);
    if (seg != h->seg && seg_switch(h, seg, err, sizeof err) != 0) {
        H5Eclear2(H5E_DEFAULT);
        h->failed = 1;
        return -EIO;
    }
    hsize_t start = (offset % h->seg_bytes) / 8, count = len / 8;
    if (H5Sselect_hyperslab(h->fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0)
        return -EIO;
    return move(h, dir, buf, mem_space(h, count), len);
}
/* len bytes at dataset index offset. A range past the extent is a short transfer, as a read
 * past the end of a plain file. */
static int64_t hdf5_xfer(void *fh, iolab_dir_t dir, void *buf, uint64_t offset, uint64_t len)
{
    hdf5_file_t *h = fh;
    if (h->seg_bytes && len)
        return seg_xfer(h, dir, buf, offset, len);
    uint64_t n = offset >= h->extent ? 0 : h->extent - offset < len ? h->extent - offset : len;
    hsize_t start = offset, count = n;
    if (n == 0)
        return empty_call(h, dir, buf);
    if (H5Sselect_hyperslab(h->fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0) {
        int64_t r = empty_call(h, dir, buf);
        return r < 0 ? r : -EIO;
    }
    return move(h, dir, buf, mem_space(h, n), n);
}

/* --file-view: the rank's whole strided share as one hyperslab (count blocks of length,
 * stride apart), one call. */
static int64_t hdf5_xfer_vec(void *fh, iolab_dir_t dir, void *buf, const iolab_vec_t *v)
{
    hdf5_file_t *h = fh;
    uint64_t want = v->count * v->length;
    if (want == 0)
        return empty_call(h, dir, buf);
    hsize_t start = v->offset, stride = v->count > 1 ? v->stride : 1, count = v->count,
            block = v->length;
    /* past the extent only with a file of other sizes (the core checks plain sizes) */
    if (v->offset + (v->count - 1) * v->stride + v->length > h->extent ||
        H5Sselect_hyperslab(h->fspace, H5S_SELECT_SET, &start, &stride, &count, &block) < 0) {
        int64_t r = empty_call(h, dir, buf);
        return r < 0 ? r : -EIO;
    }
    return move(h, dir, buf, mem_space(h, want), want);
}

/* The boxes as one union of hyperslabs: H5S_SELECT_OR keeps the union in the dataset's C
 * order, which is the boxes' packed order when they come in file order (BTIO's cells sit in
 * different z-slabs); otherwise one call per box. */
static int64_t boxes_call(hdf5_file_t *h, iolab_dir_t dir, void *buf, const iolab_box_t *b,
                          int n)
{
    const iolab_decomp_t *d = h->array;
    uint64_t elems = 0;
    int first = 1;
    if (H5Sselect_none(h->fspace) < 0)
        return -EIO;
    for (int k = 0; k < n; k++) {
        uint64_t ne = iolab_box_elems(d, &b[k]);
        hsize_t start[IOLAB_DECOMP_MAXDIMS], count[IOLAB_DECOMP_MAXDIMS];
        if (!ne)
            continue;
        for (int i = 0; i < d->nd; i++) {
            start[i] = b[k].start[i];
            count[i] = b[k].count[i];
        }
        if (H5Sselect_hyperslab(h->fspace, first ? H5S_SELECT_SET : H5S_SELECT_OR, start,
                                NULL, count, NULL) < 0) {
            int64_t r = empty_call(h, dir, buf);
            return r < 0 ? r : -EIO;
        }
        first = 0;
        elems += ne;
    }
    if (!elems)
        return empty_call(h, dir, buf);
    int64_t r = move(h, dir, buf, mem_space(h, elems), elems * d->elem);
    return r;
}

static int64_t hdf5_xfer_boxes(void *fh, iolab_dir_t dir, void *buf, const iolab_box_t *b,
                               int n)
{
    hdf5_file_t *h = fh;
    if (iolab_boxes_ordered(h->array, b, n))
        return boxes_call(h, dir, buf, b, n);
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        int64_t r = boxes_call(h, dir, (char *)buf + total, &b[k], 1);
        if (r < 0)
            return r;
        total += r;
    }
    return total;
}

/* H5Fflush is collective; the MPI-IO driver ends it with MPI_File_sync. */
static int hdf5_sync(void *fh)
{
    const hdf5_file_t *h = fh;
    errno = 0;
    if (H5Fflush(h->file, H5F_SCOPE_GLOBAL) >= 0)
        return 0;
    int sys = errno;
    H5Eclear2(H5E_DEFAULT);
    return iolab_mpifile_errno(sys, h->path);
}

/* The hints of the MPI file under HDF5: MPI_File_get_info on the driver's handle (what the
 * MPI-IO library uses); H5Pget_fapl_mpio would only return the hints HDF5 was given. */
static int hdf5_get_info(void *fh, MPI_Info *info)
{
    const hdf5_file_t *h = fh;
    if (!h->mpifh)
        return ENOTSUP;
    return MPI_File_get_info(*h->mpifh, info) == MPI_SUCCESS ? 0 : EIO;
}

static int hdf5_close(void *fh)
{
    hdf5_file_t *h = fh;
    int room = h->wrote ? make_room(h) : 0;
    errno = 0;
    int e = close_all(h);
    e = e ? iolab_mpifile_errno(errno, h->path) : room;
    free(h->path);
    free(h);
    return e;
}

/* Called by one rank per file; a missing file is not an error. */
static int hdf5_remove(void *state, const char *path)
{
    (void)state;
    return iolab_mpifile_remove(path);
}

/* HDF5 before 1.14 hands a contiguous transfer to MPI-IO with an int byte count: one
 * H5Dwrite/H5Dread of 2 GiB or more fails with a bare I/O error (measured with 1.10.8). */
#if H5_VERS_MAJOR == 1 && H5_VERS_MINOR < 14
#define HDF5_MAX_CALL_BYTES ((uint64_t)INT_MAX)
#else
#define HDF5_MAX_CALL_BYTES 0
#endif

const iolab_backend_t iolab_backend_hdf5 = {
    .name = "hdf5",
    .summary = "parallel HDF5 (MPI-IO driver): one 1-D byte dataset, contiguous or chunked, "
               "hyperslab transfers, independent or collective",
    .caps = IOLAB_CAP_SHARED | IOLAB_CAP_COLLECTIVE | IOLAB_CAP_VECTOR | IOLAB_CAP_HINTS |
            IOLAB_CAP_PLAIN_FILES | IOLAB_CAP_STORES_DATA | IOLAB_CAP_BOXES,
    .options = hdf5_options,
    .options_size = sizeof(hdf5_opts_t),
    .max_call_bytes = HDF5_MAX_CALL_BYTES,
    .max_call_why = "HDF5 before 1.14 passes one call's size to MPI-IO as an int",
    .init = hdf5_init,
    .fini = hdf5_fini,
    .open = hdf5_open,
    .xfer = hdf5_xfer,
    .xfer_vec = hdf5_xfer_vec,
    .xfer_boxes = hdf5_xfer_boxes,
    .sync = hdf5_sync,
    .get_info = hdf5_get_info,
    .close = hdf5_close,
    .remove = hdf5_remove,
};
