/* iolab-bench: the metadata benchmark (--metadata), as mdtest and IO500's mdtest phases.
 *
 * Each rank creates --md-files files (open O_CREAT|O_EXCL, write --md-size bytes, close),
 * stats them, opens and reads them back, and removes them: four timed phases per repetition,
 * each shaped like a data phase (barrier, every rank times its own loop on its own clock,
 * phase time = the slowest rank's), so operations per second = all ranks' operations / time.
 * mdtest 4 times the same loop from the same barrier, but its summary rate ends each rank's
 * time after a closing barrier (its per-process "before barrier" times are this one). The
 * loop makes only each file's own calls (tests/engine/test_metadata.py checks every traced
 * call between a phase's first and last).
 * The files live in <path>.md/, all in that one shared directory (file.iolab.<rank>.<i>) or
 * in a directory per rank (<rank>/file.iolab.<rank>.<i>); the directories are made before the
 * first phase and removed after the last, outside the timing. The calls are POSIX's: this is what the file
 * system's metadata path costs, whatever the I/O library above it.
 * --md-phases dirs|both adds mdtest's directory phases before the file phases, on --md-files
 * directories per rank beside the files (dir.iolab.<rank>.<i>): mkdir, stat, rename (mdtest's
 * chain: d0 -> d0-XX, d(i) -> d(i-1), d0-XX -> d(n-2); none for a single directory), rmdir.
 * --md-step create|stat|read|remove runs one file phase and leaves the files (and their
 * directories, until the remove step) for the next run: IO500 runs each as its own phase with
 * other benchmarks in between. The create step takes --stonewall as mdtest -W: each rank stops
 * creating at the deadline, then all create on to the furthest rank's count, so the later
 * steps run on --md-files = that count (the phase's stonewall.xfers_max). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pattern.h"
#include "run.h"

#define IO500_HARD_FILE_BYTES 3901

typedef struct md_plan {
    char root[4096];    /* <path>.md: the run's directory */
    char dir[4200];     /* this rank's directory (root, or root/<rank>) */
    int unique;
    uint64_t files, size;
} md_plan_t;

void iolab_metadata_plan(const iolab_run_t *run, int *unique, uint64_t *size)
{
    const iolab_cfg_t *c = &run->cfg;
    *unique = c->md_dir == IOLAB_MD_DIR_UNIQUE ||
              (c->md_dir == IOLAB_MD_DIR_PRESET && c->metadata == IOLAB_METADATA_EASY);
    *size = c->md_size ? c->md_size
                       : c->metadata == IOLAB_METADATA_HARD ? IO500_HARD_FILE_BYTES : 0;
}

static void make_plan(const iolab_run_t *run, md_plan_t *p)
{
    iolab_metadata_plan(run, &p->unique, &p->size);
    p->files = run->cfg.md_files;
    snprintf(p->root, sizeof p->root, "%.4000s.md", iolab_env_strip_prefix(run->cfg.path));
    if (p->unique)
        snprintf(p->dir, sizeof p->dir, "%s/%d", p->root, run->rank);
    else
        snprintf(p->dir, sizeof p->dir, "%s", p->root);
}

/* <dir>/file.iolab.<rank>.<i>, in the rank's directory or the shared one. The name is as long
 * as mdtest's file.mdtest.<rank>.<i> on purpose: on ext4 a name's length sets how many entries
 * share a directory block, and a create scans its block, so a shorter name made creates 15-20%
 * slower in one shared directory (docs/benchmarks.md) and measured a different workload. */
static void file_path(const md_plan_t *p, int rank, uint64_t i, char *buf, size_t len)
{
    if (p->unique)
        snprintf(buf, len, "%.3900s/%d/file.iolab.%d.%llu", p->root, rank, rank,
                 (unsigned long long)i);
    else
        snprintf(buf, len, "%.3900s/file.iolab.%d.%llu", p->root, rank, (unsigned long long)i);
}

/* <dir>/dir.iolab.<rank>.<i> (suffix "-XX": mdtest's rename parking name), beside the files. */
static void dir_item_path(const md_plan_t *p, int rank, uint64_t i, const char *suffix,
                          char *buf, size_t len)
{
    if (p->unique)
        snprintf(buf, len, "%.3900s/%d/dir.iolab.%d.%llu%s", p->root, rank, rank,
                 (unsigned long long)i, suffix);
    else
        snprintf(buf, len, "%.3900s/dir.iolab.%d.%llu%s", p->root, rank,
                 (unsigned long long)i, suffix);
}

int iolab_metadata_ops(const iolab_run_t *run, int *ops)
{
    int n = 0, phases = run->cfg.md_phases;
    if (phases != IOLAB_MD_PHASES_FILES) {
        ops[n++] = IOLAB_MD_DIR_CREATE;
        ops[n++] = IOLAB_MD_DIR_STAT;
        if (run->cfg.md_files > 1)  /* mdtest renames only when there are two or more */
            ops[n++] = IOLAB_MD_DIR_RENAME;
        ops[n++] = IOLAB_MD_DIR_REMOVE;
    }
    if (run->cfg.md_step != IOLAB_MD_STEP_ALL) {  /* create, stat, read, remove: in order */
        ops[n++] = IOLAB_MD_CREATE + run->cfg.md_step - IOLAB_MD_STEP_CREATE;
        return n;
    }
    if (phases != IOLAB_MD_PHASES_DIRS)
        for (int op = IOLAB_MD_CREATE; op <= IOLAB_MD_REMOVE; op++)
            ops[n++] = op;
    return n;
}

/* Directory i's operation (mkdir, stat, rename, rmdir); returns 0 or an errno. The rename
 * chain is mdtest's rename_dir_test, so the same names exist before and after it. */
static int md_dir_op(const md_plan_t *p, int rank, int op, uint64_t i)
{
    char path[4400], to[4400];
    struct stat st;
    switch (op) {
    case IOLAB_MD_DIR_CREATE:
        dir_item_path(p, rank, i, "", path, sizeof path);
        return mkdir(path, 0755) != 0 ? errno : 0;
    case IOLAB_MD_DIR_STAT:
        dir_item_path(p, rank, i, "", path, sizeof path);
        if (stat(path, &st) != 0)
            return errno;
        return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    case IOLAB_MD_DIR_RENAME:
        dir_item_path(p, rank, i + 1 == p->files ? 0 : i, i + 1 == p->files ? "-XX" : "",
                      path, sizeof path);
        dir_item_path(p, rank, i == 0 ? 0 : i - 1,
                      i == 0 ? "-XX" : "", to, sizeof to);
        return rename(path, to) != 0 ? errno : 0;
    default:
        dir_item_path(p, rank, i, "", path, sizeof path);
        return rmdir(path) != 0 ? errno : 0;
    }
}

/* read or write exactly len bytes; returns 0 or an errno (EIO for a short count). */
static int full_io(int fd, unsigned char *buf, uint64_t len, int writing)
{
    while (len) {
        ssize_t n = writing ? write(fd, buf, len) : read(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        buf += n;
        len -= (uint64_t)n;
    }
    return 0;
}

/* One operation on file i of rank `rank`. Returns 0 or an errno; *bad is set when a read's
 * data differs from what the creation wrote (--verify). */
static int md_op(const iolab_run_t *run, const md_plan_t *p, int op, uint64_t i,
                 int64_t rep, unsigned char *buf, int *bad)
{
    char path[4400];
    file_path(p, run->rank, i, path, sizeof path);
    int fd, e = 0;
    struct stat st;
    if (op >= IOLAB_MD_DIR_CREATE)
        return md_dir_op(p, run->rank, op, i);
    switch (op) {
    case IOLAB_MD_CREATE:
        if ((fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644)) < 0)
            return errno;
        if (p->size && run->cfg.verify)
            iolab_pattern_fill(buf, p->size, run->rank, i * p->size, rep);
        e = p->size ? full_io(fd, buf, p->size, 1) : 0;
        return close(fd) != 0 && !e ? errno : e;
    case IOLAB_MD_STAT:
        if (stat(path, &st) != 0)
            return errno;
        return (uint64_t)st.st_size == p->size ? 0 : EIO;
    case IOLAB_MD_READ:
        if ((fd = open(path, O_RDONLY)) < 0)
            return errno;
        e = p->size ? full_io(fd, buf, p->size, 0) : 0;
        if (!e && p->size && run->cfg.verify)
            *bad = iolab_pattern_check(buf, p->size, run->rank, i * p->size, rep) >= 0;
        return close(fd) != 0 && !e ? errno : e;
    default:
        return unlink(path) != 0 ? errno : 0;
    }
}

/* Verify mismatches of a read phase: counted over all ranks; the first is reported. */
static void agree_bad_files(iolab_run_t *run, const md_plan_t *p, uint64_t nbad,
                            uint64_t first)
{
    uint64_t all = 0;
    MPI_Allreduce(&nbad, &all, 1, MPI_UINT64_T, MPI_SUM, run->world);
    if (!all)
        return;
    run->verify.errors += all;
    struct { int val, rank; } in = {nbad ? run->rank : INT_MAX, run->rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, run->world);
    MPI_Bcast(&first, 1, MPI_UINT64_T, out.val, run->world);
    if (run->verify.bad)
        return;
    run->verify.bad = 1;
    run->verify.rank = run->verify.reader = out.val;
    run->verify.offset = 0;
    file_path(p, out.val, first, run->verify.file, sizeof run->verify.file);
}

static void md_failure_text(const md_plan_t *p, int rank, int op, uint64_t i, int err,
                            char *why, size_t len)
{
    char path[4400];
    if (op >= IOLAB_MD_DIR_CREATE)
        dir_item_path(p, rank, i, "", path, sizeof path);
    else
        file_path(p, rank, i, path, sizeof path);
    snprintf(why, len, "%s %.900s: %s", iolab_op_name(op), path,
             err == EIO && op == IOLAB_MD_STAT ? "file size differs from --md-size"
                                               : strerror(err));
}

/* --stonewall on the create step: each rank stopped at the deadline (or made all its files);
 * all agree on the furthest count, which every rank then creates up to. Collective. */
static void md_wear_out(iolab_run_t *run, iolab_phase_t *ph, uint64_t mine, int hit,
                        uint64_t *last)
{
    uint64_t counts[2] = {mine, ~mine}, all[2];
    int any = 0;
    MPI_Allreduce(counts, all, 2, MPI_UINT64_T, MPI_MAX, run->world);
    MPI_Allreduce(&hit, &any, 1, MPI_INT, MPI_MAX, run->world);
    ph->stonewall_hit = any;
    ph->sw_max = all[0];
    ph->sw_min = ~all[1];
    *last = all[0];
}

/* One timed phase. Returns 1 when the run must stop (failure, interrupt, mismatch). */
static int md_phase(iolab_run_t *run, const md_plan_t *p, int op, int rep, unsigned char *buf)
{
    iolab_phase_t ph = {.op = op, .rep = rep, .cache = "n/a", .resident_fraction = -1};
    uint64_t done = 0, nbad = 0, first_bad = 0;
    int err = 0;
    char why[IOLAB_ERRLEN] = "";
    double deadline = op == IOLAB_MD_CREATE ? run->cfg.stonewall : 0;
    uint64_t last = p->files, i = 0;
    int hit = 0;
    MPI_Barrier(run->world);
    double t0 = MPI_Wtime();
    for (int pass = 0; pass < (deadline > 0 ? 2 : 1); pass++) {
        for (; i < last && !err && !iolab_interrupted; i++) {
            if (deadline > 0 && pass == 0 && MPI_Wtime() - t0 >= deadline) {
                hit = 1;
                break;
            }
            int bad = 0;
            err = md_op(run, p, op, i, rep, buf, &bad);
            if (err)
                md_failure_text(p, run->rank, op, i, err, why, sizeof why);
            done += err ? 0 : 1;
            if (bad && !nbad++)
                first_bad = i;
        }
        if (deadline > 0 && pass == 0)  /* mdtest -W: all wear out to the furthest count */
            md_wear_out(run, &ph, i, hit, &last);
    }
    double t1 = MPI_Wtime() - t0;
    int moves = op == IOLAB_MD_CREATE || op == IOLAB_MD_READ;
    iolab_rank_stat_t me = {moves ? done * p->size : 0, done, 0, t1, 0, 0, t1};
    int flags[2] = {err != 0, iolab_interrupted != 0}, any[2];
    MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, run->world);
    if (any[0])
        iolab_phase_agree_failure(run, op, err, why, me.bytes);
    else if (op == IOLAB_MD_READ && !any[1])
        agree_bad_files(run, p, nbad, first_bad);
    if (any[1])
        iolab_interrupted = 1;
    iolab_phase_collect(run, &ph, &me);
    iolab_phase_append(run, &ph);
    return any[0] || any[1] || run->verify.bad;
}

/* The directories, before the first phase: rank 0 makes the root, each rank its own. */
static int make_dirs(iolab_run_t *run, const md_plan_t *p, char *why, size_t len)
{
    int e = 0;
    if (run->rank == 0 && mkdir(p->root, 0755) != 0 && errno != EEXIST)
        e = errno;
    MPI_Bcast(&e, 1, MPI_INT, 0, run->world);
    if (!e && p->unique && mkdir(p->dir, 0755) != 0 && errno != EEXIST)
        e = errno;
    if (e)
        snprintf(why, len, "cannot create %.900s: %s", e && run->rank == 0 ? p->root : p->dir,
                 strerror(e));
    return e;
}

/* After the last phase: the files and directories a failure or an interrupt left (none
 * after complete remove phases: removing them again would only fail), then the directories
 * the run made. */
static void remove_all(iolab_run_t *run, const md_plan_t *p, int items_left)
{
    char path[4400];
    if (run->cfg.md_step != IOLAB_MD_STEP_ALL) {
        /* one step of several: the files stay for the next; after the remove step only the
         * directories are left, and go (rmdir fails, as it should, on any left in them) */
        if (run->cfg.md_step != IOLAB_MD_STEP_REMOVE || items_left)
            return;
        items_left = 0;
    }
    for (uint64_t i = 0; items_left && i < p->files; i++) {
        file_path(p, run->rank, i, path, sizeof path);
        unlink(path);
        if (run->cfg.md_phases != IOLAB_MD_PHASES_FILES) {
            dir_item_path(p, run->rank, i, "", path, sizeof path);
            rmdir(path);
        }
    }
    if (items_left && run->cfg.md_phases != IOLAB_MD_PHASES_FILES) {
        dir_item_path(p, run->rank, 0, "-XX", path, sizeof path);
        rmdir(path);
    }
    if (p->unique)
        rmdir(p->dir);
    MPI_Barrier(run->world);
    if (run->rank == 0)
        rmdir(p->root);  /* fails, as it should, when it held files of someone else */
}

void iolab_metadata_run(iolab_run_t *run)
{
    md_plan_t p;
    make_plan(run, &p);
    unsigned char *buf = malloc(p.size ? p.size : 1);
    char why[IOLAB_ERRLEN] = "";
    int e = buf ? make_dirs(run, &p, why, sizeof why) : ENOMEM, any = 0;
    MPI_Allreduce(&e, &any, 1, MPI_INT, MPI_MAX, run->world);
    if (any)
        iolab_phase_agree_failure(run, IOLAB_MD_CREATE, e, why, 0);
    int ops[IOLAB_MD_MAX_OPS], nops = iolab_metadata_ops(run, ops);
    int total = nops * (int)run->cfg.reps, done = 0, items_left = 1;
    for (int rep = 0; !any && rep < run->cfg.reps; rep++)
        for (int k = 0; k < nops; k++) {
            int op = ops[k];
            int stop = md_phase(run, &p, op, rep, buf);  /* the same on every rank */
            items_left = k + 1 < nops || stop;
            done++;
            if (run->rank == 0 && run->cfg.progress) {
                fprintf(stderr, "progress %d %s 0 %d/%d\n", rep, iolab_op_name(op), done,
                        total);
                fflush(stderr);
            }
            if (stop) {
                any = 1;
                break;
            }
        }
    remove_all(run, &p, items_left);
    free(buf);
}
