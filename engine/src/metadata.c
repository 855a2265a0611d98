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
 * first phase and removed after the last, outside the timing. With --md-layout mdtest they
 * have mdtest's names and places instead: <path>/test-dir.<rep>-0/mdtest_tree.0/ (a directory
 * per rank: mdtest_tree.<rank>.0/), file.mdtest.<rank>.<i>, and --md-depth/--md-branch build
 * mdtest's tree below it (directory n's children are n*b+1..n*b+b, item i lives in directory
 * i / --md-items-per-dir, --md-leaf-only puts items in the deepest level only); making and
 * removing the trees are timed phases, as mdtest's "Tree creation" and "Tree removal".
 * --md-stride N (mdtest -N): rank r stats rank r+N's items, reads r+2N's, removes r+3N's.
 * --md-sync (mdtest -Y): sync() after each item phase's loop, inside its time.
 * --md-dir-loops K (mdtest -n N -I M, K = N / M): each phase, the tree phases too, runs its
 * loop in test-dir.<rep>-0, then -1, ... -<K-1>, each holding --md-files items per rank.
 * --md-pre-delay S (mdtest -p): rank 0 sleeps S seconds before the directory phases and
 * before the file phases of each repetition, outside the timing (mdtest's DelaySecs).
 * The calls are POSIX's: this is what the file
 * system's metadata path costs, whatever the I/O library above it.
 * --md-phases dirs|both adds mdtest's directory phases before the file phases, on --md-files
 * directories per rank beside the files (dir.iolab.<rank>.<i>): mkdir, stat, rename (mdtest's
 * chain: d0 -> d0-XX, d(i) -> d(i-1), d0-XX -> d(n-2); none for a single directory), rmdir.
 * --md-step create|stat|read|remove runs one file phase and leaves the files (and their
 * directories, until the remove step) for the next run: IO500 runs each as its own phase with
 * other benchmarks in between. The create phase takes --stonewall as mdtest -W: each rank stops
 * creating at the deadline, then all create on to the furthest rank's count, and the later
 * phases (or steps, given --md-files = that count, the phase's stonewall.xfers_max) run on
 * that many. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metadata_plan.h"
#include "pattern.h"

/* Directory op of the i-th call (mkdir, stat, rename, rmdir); returns 0 or an errno. The
 * rename chain is mdtest's rename_dir_test, so the same names exist before and after it. */
static int md_dir_op(const md_plan_t *p, int owner, int op, uint64_t i, uint64_t n)
{
    char path[4400], to[4400];
    int e;
    struct stat st;
    switch (op) {
    case IOLAB_MD_DIR_CREATE:
        iolab_md_item_path(p, owner, n, 1, "", path, sizeof path);
        return p->io->mkdir(path, MD_DIR_MODE);
    case IOLAB_MD_DIR_STAT:
        iolab_md_item_path(p, owner, n, 1, "", path, sizeof path);
        if ((e = p->io->stat(path, &st)) != 0)
            return e;
        return S_ISDIR(st.st_mode) || !p->checks_stat ? 0 : ENOTDIR;
    case IOLAB_MD_DIR_RENAME: {
        uint64_t first = p->leaf_offset, last = i + 1 == p->files;
        iolab_md_item_path(p, owner, last ? first : n, 1, last ? "-XX" : "", path, sizeof path);
        iolab_md_item_path(p, owner, i == 0 ? first : n - 1, 1, i == 0 ? "-XX" : "", to, sizeof to);
        return p->io->rename(path, to);
    }
    default:
        iolab_md_item_path(p, owner, n, 1, "", path, sizeof path);
        return p->io->rmdir(path);
    }
}

/* read or write exactly len bytes; returns 0 or an errno (EIO for a short count). */
static int full_io(const md_plan_t *p, int fd, unsigned char *buf, uint64_t len, int writing)
{
    while (len) {
        int64_t n = writing ? p->io->write(fd, buf, len) : p->io->read(fd, buf, len);
        if (n == -EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? (int)-n : EIO;
        buf += n;
        len -= (uint64_t)n;
    }
    return 0;
}

/* The i-th call of a phase: item n of rank `owner` (a tree directory for the tree phases).
 * Returns 0 or an errno; *bad is set when a read's data differs from what the creation wrote
 * (--verify; the creator's pattern, so -N reads check their neighbour's). */
static int md_op(const iolab_run_t *run, const md_plan_t *p, int op, int owner, uint64_t i,
                 uint64_t n, int64_t rep, unsigned char *buf, int *bad)
{
    char path[4400];
    int fd, e = 0, closed;
    struct stat st;
    if (op == IOLAB_MD_TREE_CREATE || op == IOLAB_MD_TREE_REMOVE) {
        iolab_md_tree_dir_path(p, owner, n, path, sizeof path);  /* owner: the rank, or -c's */
        if (op == IOLAB_MD_TREE_CREATE)
            return p->io->mkdir(path, MD_DIR_MODE);
        return p->io->rmdir(path);
    }
    if (op >= IOLAB_MD_DIR_CREATE)
        return md_dir_op(p, owner, op, i, n);
    iolab_md_item_path(p, owner, n, 0, "", path, sizeof path);
    switch (op) {
    case IOLAB_MD_CREATE:
        if (run->cfg.md_mknod)  /* mdtest -k: POSIX_Mknod's mode, no open */
            return p->io->mknod(path, S_IFREG | S_IRUSR);
        /* mdtest -c: rank 0 made the file already; each rank opens its own to write */
        if ((fd = p->io->open(path, p->collective ? O_WRONLY : O_CREAT | O_EXCL | O_WRONLY,
                              MD_FILE_MODE)) < 0)
            return -fd;
        if (p->size && run->cfg.verify)
            iolab_pattern_fill(buf, p->size, owner, n * p->size, rep);
        e = p->size ? full_io(p, fd, buf, p->size, 1) : 0;
        if (!e && p->size && run->cfg.fsync)  /* mdtest -y */
            e = p->io->fsync(fd);
        closed = p->io->close(fd);
        e = e ? e : closed;
        if (e && !p->collective)
            p->io->unlink(path);  /* made here and failed (ENOSPC): not counted as made, so gone */
        return e;
    case IOLAB_MD_STAT:
        if ((e = p->io->stat(path, &st)) != 0)
            return e;
        return (uint64_t)st.st_size == p->size || !p->checks_stat ? 0 : EIO;
    case IOLAB_MD_READ:
        if ((fd = p->io->open(path, O_RDONLY, 0)) < 0)
            return -fd;
        e = p->size ? full_io(p, fd, buf, p->size, 0) : 0;
        if (!e && p->size && run->cfg.verify)
            *bad = iolab_pattern_check(buf, p->size, owner, n * p->size, rep) >= 0;
        closed = p->io->close(fd);
        return e ? e : closed;
    default:
        return p->io->unlink(path);
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
    int owner = (int)(((uint64_t)out.val + 2 * p->stride) % (uint64_t)p->ranks);
    run->verify.bad = 1;
    run->verify.rank = owner;
    run->verify.reader = out.val;
    run->verify.offset = 0;
    iolab_md_item_path(p, owner, first, 0, "", run->verify.file, sizeof run->verify.file);
}

static void md_failure_text(const md_plan_t *p, int owner, int op, uint64_t n, int err,
                            char *why, size_t len)
{
    char path[4400];
    if (op == IOLAB_MD_TREE_CREATE || op == IOLAB_MD_TREE_REMOVE)
        iolab_md_tree_dir_path(p, owner, n, path, sizeof path);
    else
        iolab_md_item_path(p, owner, n, op >= IOLAB_MD_DIR_CREATE, "", path, sizeof path);
    snprintf(why, len, "%s %.900s: %s", iolab_op_name(op), path,
             err == EIO && op == IOLAB_MD_STAT ? "file size differs from --md-size"
                                               : strerror(err));
}

/* --stonewall on the create phase: each rank stopped at the deadline (or made all its
 * files); all agree on the furthest count, which every rank then creates up to. Collective. */
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

/* Calls this rank makes in a phase: its items, or its tree's directories (mdtest: rank 0
 * makes the one shared tree, each rank its own with a directory per rank). */
static uint64_t phase_calls(const md_plan_t *p, int op)
{
    if (op == IOLAB_MD_TREE_CREATE || op == IOLAB_MD_TREE_REMOVE)
        return p->unique || p->rank == 0 ? p->tree_dirs : 0;
    return p->files;
}

/* Whether rank 0 makes a phase's calls for every rank (mdtest -c: its collective_helper for
 * items, its per-rank tree loop with -u; the shared tree is rank 0's anyway). */
static int collective_op(const md_plan_t *p, int op)
{
    if (!p->collective)
        return 0;
    if (op == IOLAB_MD_TREE_CREATE || op == IOLAB_MD_TREE_REMOVE)
        return p->unique;
    return op == IOLAB_MD_DIR_CREATE || op == IOLAB_MD_DIR_REMOVE || op == IOLAB_MD_CREATE ||
           op == IOLAB_MD_REMOVE;
}

/* A phase's failed calls on this rank: the first failure that stops it, or with --md-warn
 * (mdtest's WARNING lines, after which it goes on) the count and the first text. */
typedef struct md_fail {
    int err;
    char why[IOLAB_ERRLEN];
    uint64_t warnings;
    char warning[IOLAB_ERRLEN];
} md_fail_t;

/* Records call n's result; returns 1 when it failed. */
static int md_call_failed(const iolab_run_t *run, const md_plan_t *p, md_fail_t *f, int owner,
                          int op, uint64_t n, int e)
{
    if (!e)
        return 0;
    if (run->cfg.md_warn) {
        if (!f->warnings++)
            md_failure_text(p, owner, op, n, e, f->warning, sizeof f->warning);
    } else {
        f->err = e;
        md_failure_text(p, owner, op, n, e, f->why, sizeof f->why);
    }
    return 1;
}

/* --md-warn: every rank's warnings of the phase summed, the lowest such rank's first text. */
static void agree_warnings(iolab_run_t *run, iolab_phase_t *ph, const md_fail_t *f)
{
    uint64_t all = 0;
    MPI_Allreduce(&f->warnings, &all, 1, MPI_UINT64_T, MPI_SUM, run->world);
    if (!all)
        return;
    struct { int val, rank; } in = {f->warnings ? run->rank : INT_MAX, run->rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, run->world);
    snprintf(ph->warning, sizeof ph->warning, "%s", f->warning);
    MPI_Bcast(ph->warning, sizeof ph->warning, MPI_CHAR, out.val, run->world);
    ph->warnings = all;
}

/* mdtest -c on rank 0: every rank's items (or trees), rank after rank, in the creation walk.
 * A file is only created (O_CREAT and close, mdtest's collective_helper); its data comes in
 * each rank's own pass. Returns the calls that succeeded; failures go to f. */
static uint64_t collective_pass(const iolab_run_t *run, md_plan_t *p, int op, int rep,
                                unsigned char *buf, md_fail_t *f)
{
    uint64_t made = 0, count = op == IOLAB_MD_TREE_CREATE || op == IOLAB_MD_TREE_REMOVE
                                   ? p->tree_dirs : p->files;
    char path[4400];
    for (int owner = 0; owner < p->ranks && !f->err; owner++) {
        for (uint64_t i = 0; i < count && !f->err && !iolab_interrupted; i++) {
            uint64_t n = iolab_md_item_at(p, op, i);
            int bad = 0, fd, e;
            if (op == IOLAB_MD_CREATE) {
                iolab_md_item_path(p, owner, n, 0, "", path, sizeof path);
                fd = p->io->open(path, O_CREAT | O_RDWR, MD_FILE_MODE);
                e = fd < 0 ? -fd : p->io->close(fd);
            } else {
                e = md_op(run, p, op, owner, i, n, rep, buf, &bad);
            }
            if (!md_call_failed(run, p, f, owner, op, n, e)) {
                made++;
                if (op != IOLAB_MD_CREATE)  /* a file counts as made in its owner's pass */
                    iolab_md_note_made(p, op, owner, i, n);
            }
        }
    }
    return made;
}

/* mdtest's prep_testdir: <root>/test-dir.<repetition>-<directory loop>. */
static void set_testdir(md_plan_t *p, int loop)
{
    if (p->mdtest)
        snprintf(p->testdir, sizeof p->testdir, "%.4000s/test-dir.%d-%d", p->root, p->rep,
                 loop);
    iolab_md_testdir_changed(p);
}

/* One timed phase. Returns 1 when the run must stop (failure, interrupt, mismatch).
 * --stonewall bounds the file creation as mdtest -W (each rank stops at the deadline, then
 * all wear out to the furthest count) and, mdtest layout, the directory creation as mdtest's
 * directory_test does: each rank stops after the call that passed the deadline, without
 * wear-out, and the later directory phases still work on every item (mdtest warns). */
static int md_phase(iolab_run_t *run, md_plan_t *p, int op, int rep, unsigned char *buf)
{
    iolab_phase_t ph = {.op = op, .rep = rep, .cache = "n/a", .resident_fraction = -1};
    uint64_t done = 0, nbad = 0, first_bad = 0;
    md_fail_t f = {0};
    int owner = iolab_md_owner(p, op);
    double deadline = op == IOLAB_MD_CREATE ? run->cfg.stonewall : 0;
    double dir_deadline = op == IOLAB_MD_DIR_CREATE && p->mdtest ? run->cfg.stonewall : 0;
    int coll = collective_op(p, op);
    uint64_t last = coll && op != IOLAB_MD_CREATE ? 0 : phase_calls(p, op), i = 0;
    int hit = 0;
    if (op == IOLAB_MD_TREE_CREATE)
        p->made_testdirs = 0;
    for (int k = 0; op == IOLAB_MD_TREE_CREATE && p->rank == 0 && k < p->loops; k++) {
        set_testdir(p, k);  /* mdtest makes every test-dir first, untimed */
        if (p->io->mkdir(p->testdir, MD_DIR_MODE) == 0 && k < 64)
            p->made_testdirs |= 1ULL << k;
    }
    MPI_Barrier(run->world);
    double t0 = MPI_Wtime();
    if (coll && p->rank == 0) {
        uint64_t made = collective_pass(run, p, op, rep, buf, &f);
        done += op == IOLAB_MD_CREATE ? 0 : made;  /* a create counts once, in its own pass */
    }
    if (coll && op == IOLAB_MD_CREATE) {
        int root_err = f.err;  /* mdtest's barrier, before the writes; none after a failure */
        MPI_Bcast(&root_err, 1, MPI_INT, 0, run->world);
        last = root_err ? 0 : last;
    }
    for (int loop = 0; loop < p->loops && !f.err && !iolab_interrupted; loop++) {
        set_testdir(p, loop);
        if (loop > 0)
            i = 0;
        for (int pass = 0; pass < (deadline > 0 ? 2 : 1); pass++) {
            for (; i < last && !f.err && !iolab_interrupted; i++) {
                if (deadline > 0 && pass == 0 && MPI_Wtime() - t0 >= deadline) {
                    hit = 1;
                    break;
                }
                int bad = 0;
                uint64_t n = iolab_md_item_at(p, op, i);
                int e = md_op(run, p, op, owner, i, n, rep, buf, &bad);
                if (!md_call_failed(run, p, &f, owner, op, n, e)) {
                    iolab_md_note_made(p, op, owner, i, n);
                    done++;
                }
                if (bad && !nbad++)
                    first_bad = n;
                if (dir_deadline > 0 && MPI_Wtime() - t0 > dir_deadline) {
                    hit = 1;  /* mdtest's CHECK_STONE_WALL, after the call */
                    i++;
                    break;
                }
            }
            if (deadline > 0 && pass == 0)
                md_wear_out(run, &ph, i, hit, &last);
        }
    }
    if (deadline > 0)
        p->files = last;  /* mdtest: the later phases work on the items made */
    /* mdtest -Y: phase_end's sync on every rank, before its closing barrier and so timed;
     * not after the tree phases (mdtest calls phase_end only in the item phases) */
    if (run->cfg.md_sync && op != IOLAB_MD_TREE_CREATE && op != IOLAB_MD_TREE_REMOVE)
        p->io->sync();
    double t1 = MPI_Wtime() - t0;
    if (dir_deadline > 0) {  /* no wear-out: the counts are only reported, so agreed untimed
                              * (mdtest's directory_test reduces nothing it times) */
        uint64_t furthest = last;
        md_wear_out(run, &ph, i, hit, &furthest);
    }
    int moves = op == IOLAB_MD_CREATE || op == IOLAB_MD_READ;
    iolab_rank_stat_t me = {moves ? done * p->size : 0, done, 0, t1, 0, 0, t1};
    int flags[2] = {f.err != 0, iolab_interrupted != 0}, any[2];
    MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, run->world);
    if (run->cfg.md_warn)
        agree_warnings(run, &ph, &f);
    if (any[0])
        iolab_phase_agree_failure(run, op, f.err, f.why, me.bytes);
    else if (op == IOLAB_MD_READ && !any[1])
        agree_bad_files(run, p, nbad, first_bad);
    if (any[1])
        iolab_interrupted = 1;
    iolab_phase_collect(run, &ph, &me);
    iolab_phase_append(run, &ph);
    if (run->cfg.md_sync && op == IOLAB_MD_DIR_STAT && !any[0] && !any[1])
        p->io->sync();  /* mdtest -Y: its (empty, unreported) directory read phase syncs too */
    for (int k = 0; op == IOLAB_MD_TREE_REMOVE && !any[0] && p->rank == 0 && k < p->loops;
         k++) {
        set_testdir(p, k);
        if (p->io->rmdir(p->testdir) == 0 && k < 64)  /* every rank's tree is gone (collectively) */
            p->made_testdirs &= ~(1ULL << k);
    }
    return any[0] || any[1] || run->verify.bad;
}

/* The directories, before the first phase: rank 0 makes the root, each rank its own (iolab
 * layout; mdtest's trees are the tree_create phase's). */
static int make_dirs(iolab_run_t *run, md_plan_t *p, char *why, size_t len)
{
    int e = 0;
    char own[4200];
    if (run->rank == 0) {
        e = p->io->mkdir(p->root, MD_DIR_MODE);
        p->made_root = e == 0;
        e = e == EEXIST ? 0 : e;
    }
    MPI_Bcast(&e, 1, MPI_INT, 0, run->world);
    snprintf(own, sizeof own, "%.4000s/%d", p->root, run->rank);
    if (!e && p->unique && !p->mdtest) {
        e = p->io->mkdir(own, MD_DIR_MODE);
        p->made_own = e == 0;
        e = e == EEXIST ? 0 : e;
    }
    if (e)
        snprintf(why, len, "cannot create %.900s: %s", run->rank == 0 ? p->root : own,
                 strerror(e));
    return e;
}

/* After a failure or an interrupt: the items and tree directories this run made on this
 * rank (mdtest layout), and nothing else -- what an earlier line made stays. */
static void remove_items(iolab_run_t *run, const md_plan_t *p)
{
    char path[4400];
    int any_dir = 0;
    for (uint64_t i = 0; i < p->files; i++) {
        uint64_t n = iolab_md_item_at(p, IOLAB_MD_CREATE, i);
        if (p->made_files[i]) {
            iolab_md_item_path(p, run->rank, n, 0, "", path, sizeof path);
            p->io->unlink(path);
        }
        if (p->made_dirs[i]) {
            any_dir = 1;
            iolab_md_item_path(p, run->rank, n, 1, "", path, sizeof path);
            p->io->rmdir(path);
        }
    }
    if (any_dir) {  /* a rename chain cut short leaves the first directory parked */
        iolab_md_item_path(p, run->rank, p->leaf_offset, 1, "-XX", path, sizeof path);
        p->io->rmdir(path);
    }
    for (uint64_t i = 0; p->mdtest && i < p->tree_dirs; i++) {
        if (!p->made_tree[p->tree_post[i]])
            continue;
        iolab_md_tree_dir_path(p, p->rank, p->tree_post[i], path, sizeof path);
        p->io->rmdir(path);
    }
}

/* After the last phase: the items and trees a failure or an interrupt left (none after
 * complete remove phases: removing them again would only fail), then the directories the
 * run made. */
static void remove_all(iolab_run_t *run, md_plan_t *p, int items_left)
{
    char own[4200];
    int mask = iolab_md_phase_mask(&run->cfg);
    if (mask != MD_SEL_ALL) {
        /* some phases of several runs: the items stay for the next; after a remove only the
         * directories are left, and go (rmdir fails, as it should, on any left in them) */
        if (!(mask & MD_SEL_REMOVE) || items_left)
            return;
        items_left = 0;
    }
    if (items_left)
        remove_items(run, p);
    snprintf(own, sizeof own, "%.4000s/%d", p->root, run->rank);
    if (p->made_own)
        p->io->rmdir(own);
    MPI_Barrier(run->world);
    for (int k = 0; run->rank == 0 && p->mdtest && k < p->loops && k < 64; k++) {
        set_testdir(p, k);  /* the ones a complete tree_remove left: none */
        if (p->made_testdirs & (1ULL << k))
            p->io->rmdir(p->testdir);
    }
    if (run->rank == 0 && (p->made_root || mask != MD_SEL_ALL))
        p->io->rmdir(p->root);  /* a -r line's: fails, as it should, when it holds anything */
}

static int starts_block_kind_is(int op, int kind)
{
    return kind == 1 ? op >= IOLAB_MD_DIR_CREATE && op <= IOLAB_MD_DIR_REMOVE
                     : op >= IOLAB_MD_CREATE && op <= IOLAB_MD_REMOVE;
}

/* Whether ops[k] starts mdtest's directory or file block (where mdtest -p delays). */
static int starts_block(const int *ops, int k)
{
    int kind = ops[k] >= IOLAB_MD_DIR_CREATE && ops[k] <= IOLAB_MD_DIR_REMOVE ? 1
             : ops[k] >= IOLAB_MD_CREATE && ops[k] <= IOLAB_MD_REMOVE ? 2 : 0;
    return kind && (k == 0 || !starts_block_kind_is(ops[k - 1], kind));
}

/* mdtest -p: DelaySecs, rank 0 only; the others wait at the next phase's barrier. */
static void pre_delay(const iolab_run_t *run)
{
    if (run->rank != 0 || run->cfg.md_pre_delay <= 0)
        return;
    double ns = run->cfg.md_pre_delay * 1e9;
    struct timespec d = {(time_t)(ns / 1e9), (long)fmod(ns, 1e9)};
    while (nanosleep(&d, &d) != 0 && errno == EINTR && !iolab_interrupted)
        ;
}

void iolab_metadata_run(iolab_run_t *run)
{
    md_plan_t p;
    char why[IOLAB_ERRLEN] = "";
    int e = iolab_md_plan_make(run, &p);
    unsigned char *buf = e ? NULL : malloc(p.size ? p.size : 1);
    e = buf ? make_dirs(run, &p, why, sizeof why) : ENOMEM;
    int any = 0;
    MPI_Allreduce(&e, &any, 1, MPI_INT, MPI_MAX, run->world);
    if (any)
        iolab_phase_agree_failure(run, IOLAB_MD_CREATE, e, why, 0);
    int ops[IOLAB_MD_MAX_OPS], nops = iolab_metadata_ops(run, ops);
    int total = nops * (int)run->cfg.reps, done = 0, items_left = 1;
    uint64_t files = p.files;
    for (int rep = 0; !any && rep < run->cfg.reps; rep++) {
        p.files = files;  /* a stonewalled create sets the count for its own repetition */
        p.rep = rep;
        set_testdir(&p, 0);
        for (int k = 0; k < nops; k++) {
            int op = ops[k];
            if (starts_block(ops, k))
                pre_delay(run);
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
    }
    if (buf)
        remove_all(run, &p, items_left);
    free(buf);
    iolab_md_plan_free(&p);
}
