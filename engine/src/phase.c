/* iolab-bench: one timed phase (a write, or one read pass) of one repetition.
 *
 * Shape, as IOR: all ranks leave a barrier, then each times its open, its transfers and its
 * close; the phase's time is the latest close end minus the earliest open start. Errors never
 * make a rank leave early while others wait in a collective: a rank that failed (or was
 * interrupted) keeps making the collective calls with zero bytes, and all ranks agree on the
 * outcome with one allreduce at the end of the phase. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "evict.h"
#include "ior_compat.h"
#include "pattern.h"
#include "run.h"
#include "xfer_loops.h"

/* Timeline of one rank in one phase, seconds from the barrier. */
typedef struct timeline {
    double open_start, open_end, xfer_end, close_end;
} timeline_t;

void iolab_run_dir_path(const iolab_run_t *run, int f, char *buf, size_t len)
{
    const char *path = run->cfg.path, *slash = strrchr(path, '/');
    if (slash)
        snprintf(buf, len, "%.*s/%d", (int)(slash - path), path, f);
    else
        snprintf(buf, len, "%d", f);
}

void iolab_run_file_path(const iolab_run_t *run, int f, char *buf, size_t len)
{
    if (run->layout.kind == IOLAB_LAYOUT_FPP && run->cfg.unique_dir) {
        const char *slash = strrchr(run->cfg.path, '/');
        char dir[4096];
        iolab_run_dir_path(run, f, dir, sizeof dir);
        snprintf(buf, len, "%s/%s.%0*d", dir, slash ? slash + 1 : run->cfg.path,
                 (int)run->cfg.fpp_digits, f);
    } else if (run->layout.kind == IOLAB_LAYOUT_FPP)
        snprintf(buf, len, "%s.%0*d", run->cfg.path, (int)run->cfg.fpp_digits, f);
    else if (run->layout.kind == IOLAB_LAYOUT_SUBSET && !run->layout.group_shared)
        snprintf(buf, len, "%s.a%d", run->cfg.path, f);
    else
        snprintf(buf, len, "%s", run->cfg.path);
    size_t used = strlen(buf);
    if (run->cfg.file_per_rep && used < len)  /* IOR -m: <name>.<repetition> */
        snprintf(buf + used, len - used, ".%d", run->cur_rep);
}

/* A transfer buffer of len bytes in `slot` (0: the aggregator's, 1 + t: worker t's), kept
 * for the whole run and reused by every phase, as IOR keeps its one buffer. Freed and
 * allocated again between phases, a buffer gets the pages just freed back in another physical
 * order: an O_DIRECT transfer is one device segment per physically contiguous run of its
 * buffer's pages, and on a virtual machine's disk, where each segment costs the host a call,
 * 1 MiB reads into a buffer of ~250 separate pages ran at half the speed of reads into one of
 * ~35 runs (docs/benchmarks.md, engine_vs_ior_1m_repeat). Reused, the read phase has the
 * write phase's pages. The fill is never zeros (some file systems compress) and never data of
 * any repetition, so a read that delivers nothing cannot pass --verify. */
static void *alloc_buf(iolab_run_t *run, int slot, uint64_t len, int lr)
{
    if (slot >= run->nbufs) {
        iolab_buf_t *more = realloc(run->bufs, (size_t)(slot + 1) * sizeof *more);
        if (!more)
            return NULL;
        memset(more + run->nbufs, 0, (size_t)(slot + 1 - run->nbufs) * sizeof *more);
        run->bufs = more;
        run->nbufs = slot + 1;
    }
    iolab_buf_t *b = &run->bufs[slot];
    if (!b->p || b->cap < len) {
        free(b->p);
        b->cap = 0;
        if (posix_memalign(&b->p, (size_t)run->buf_align, len ? (size_t)len : 1) != 0) {
            b->p = NULL;
            return NULL;
        }
        b->cap = len;
    }
    iolab_pattern_fill(b->p, len, lr, 0, IOLAB_PATTERN_NO_REP);
    return b->p;
}

void iolab_phase_free_buffers(iolab_run_t *run)
{
    for (int i = 0; i < run->nbufs; i++)
        free(run->bufs[i].p);
    free(run->bufs);
    run->bufs = NULL;
    run->nbufs = 0;
}

/* What a rank needs for a phase, made before the barrier so that no allocation, buffer fill
 * or file naming is timed: IOR's timed interval holds the open, the transfers and the close,
 * and names the file (GetTestFileName) before its barrier. */
typedef struct phase_setup {
    worker_t *w;                /* nw workers (threads), each with its own buffer */
    int nw;
    unsigned char *aggbuf;      /* aggregator: the group's transfers, kg * transfer bytes */
    int kg;
    int does_io;                /* opens the file (aggregated layouts: aggregators only) */
    uint64_t *slots, nslots;    /* --random, segmented: this rank's slots (see xfer_offset) */
    iolab_ior_order_t ior;      /* --random-seed / --random-repeat: IOR's order */
    MPI_Comm comm;              /* opens it together with these ranks */
    char path[4096];            /* the file it opens (does_io) */
    int agree_stonewall;        /* --stonewall-stop: the counts are agreed after the close */
} phase_setup_t;

/* Which communicator opens the file this rank works on; *does_io 0: no file for it. */
static MPI_Comm open_comm(const iolab_run_t *run, int *does_io)
{
    *does_io = 1;
    switch (run->layout.kind) {
    case IOLAB_LAYOUT_FPP:
        return MPI_COMM_SELF;
    case IOLAB_LAYOUT_SEGMENTED:
    case IOLAB_LAYOUT_STRIDED:
    case IOLAB_LAYOUT_SUBARRAY:
        return run->world;
    default: {
        int grank;
        MPI_Comm_rank(run->group_comm, &grank);
        *does_io = grank == 0;
        return run->agg_comm != MPI_COMM_NULL ? run->agg_comm : MPI_COMM_SELF;
    }
    }
}

/* Requests the backend keeps in flight (--posix.queue-depth), 1 without a queue. */
static int queue_depth(const iolab_run_t *run)
{
    int d = run->be->queue_depth && run->be->xfer_queue ? run->be->queue_depth(run->be_state)
                                                        : 1;
    return d > 1 ? d : 1;
}

/* --random-repeat: the size of logical rank lr's file to draw blocks from: a read's on disk
 * (IOR stats it; plain files), else the layout's. */
static uint64_t ior_file_bytes(const iolab_run_t *run, int lr)
{
    int f = iolab_layout_file_of(&run->layout, lr);
    uint64_t size = iolab_layout_file_bytes(&run->layout, f);
    if (!run->cfg.random_repeat || !run->cfg.read || !(run->be->caps & IOLAB_CAP_PLAIN_FILES))
        return size;
    char path[4096];
    struct stat st;
    iolab_run_file_path(run, f, path, sizeof path);
    if (stat(iolab_env_strip_prefix(path), &st) == 0 && st.st_size > 0)
        size = (uint64_t)st.st_size;
    return size;
}

/* Workers and buffers for this rank's share (threads split the transfers evenly). */
static void setup_phase(iolab_run_t *run, const worker_t *proto, phase_setup_t *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->comm = open_comm(run, &ps->does_io);
    if (ps->does_io)  /* a snprintf timed with a null open took 2-8 us, the whole IOR phase 3 */
        iolab_run_file_path(run, iolab_layout_file_of(&run->layout, proto->lr), ps->path,
                            sizeof ps->path);
    ps->kg = 1;
    int agg = iolab_layout_aggregated(&run->layout);
    ps->nw = agg || run->cfg.file_view ? 1 : (int)run->cfg.threads;
    if (agg) {
        MPI_Comm_size(run->group_comm, &ps->kg);
        if (ps->does_io)
            ps->aggbuf = alloc_buf(run, 0, run->layout.transfer * (uint64_t)ps->kg, proto->lr);
    }
    ps->w = calloc((size_t)ps->nw, sizeof *ps->w);
    uint64_t n = iolab_layout_rank_xfers(&run->layout);
    if (run->cfg.random && run->layout.kind == IOLAB_LAYOUT_SEGMENTED) {
        /* the deal is the same on every rank (seeded by the repetition only) */
        uint64_t deal = 0x2545F4914F6CDD1Dull ^ (uint64_t)proto->prep;
        ps->nslots = iolab_layout_random_slots(&run->layout, proto->lr, deal, proto->seed,
                                               NULL);
        ps->slots = malloc((ps->nslots ? ps->nslots : 1) * sizeof *ps->slots);
        if (ps->slots)
            iolab_layout_random_slots(&run->layout, proto->lr, deal, proto->seed, ps->slots);
        n = ps->nslots * run->layout.segments;
    }
    int64_t per_seg = iolab_ior_order_make(run, proto->op, proto->lr, run->ior_seed,
                                           ior_file_bytes(run, proto->lr), &ps->ior);
    if (per_seg > 0)
        n = (uint64_t)per_seg * run->layout.segments;
    if (proto->op == IOLAB_READ && run->cfg.read_xfers >= 0) {
        if (run->cfg.read_xfers > 0 && (uint64_t)run->cfg.read_xfers < n)
            n = (uint64_t)run->cfg.read_xfers;  /* IOR's status file: that many, not more */
    } else if (proto->op == IOLAB_READ && (run->sw_written || run->sw_stopped) &&
               run->sw_written < n)
        n = run->sw_written;  /* what a stonewalled write left */
    uint64_t len = run->cfg.file_view ? iolab_layout_rank_bytes(&run->layout)
                                      : run->layout.transfer * (uint64_t)queue_depth(run);
    if (run->layout.kind == IOLAB_LAYOUT_SUBARRAY)
        len = iolab_decomp_step_bytes(&run->decomp, proto->lr);
    for (int t = 0; t < ps->nw; t++) {
        worker_t *w = &ps->w[t];
        *w = *proto;
        w->first = n * (uint64_t)t / (uint64_t)ps->nw;
        w->last = n * (uint64_t)(t + 1) / (uint64_t)ps->nw;
        w->next = w->first;
        w->slots = ps->slots;
        w->nslots = ps->nslots;
        w->ior = ps->ior.on ? &ps->ior : NULL;
        w->cursor = (iolab_ior_cursor_t){0, 0, -1, 0};
        w->buf = alloc_buf(run, 1 + t, len, proto->lr);
        if (!w->buf || (ps->does_io && agg && !ps->aggbuf) || (ps->nslots && !ps->slots) ||
            per_seg < 0)
            w->err = ENOMEM;
    }
}

/* Whether this phase's transfers go through the backend's queue (transfer_all). */
static int uses_queue(const iolab_run_t *run, const phase_setup_t *ps)
{
    return run->layout.kind != IOLAB_LAYOUT_SUBARRAY && !iolab_layout_aggregated(&run->layout) &&
           !run->cfg.file_view && ps->nw == 1 && queue_depth(run) > 1;
}

/* Run the transfers of this rank (threads, vector, aggregated or N-D boxes). */
static void transfer_all(iolab_run_t *run, phase_setup_t *ps, void *fh, iolab_phase_t *ph)
{
    worker_t *w = ps->w;
    for (int t = 0; t < ps->nw; t++)
        w[t].fh = fh;
    if (run->cfg.random_prefill && w[0].op == IOLAB_WRITE) {
        int e = iolab_ior_prefill(run, fh, w[0].lr);
        if (e && !w[0].err)
            w[0].err = e;
    }
    if (run->layout.kind == IOLAB_LAYOUT_SUBARRAY)
        iolab_boxes_xfer(&w[0]);
    else if (iolab_layout_aggregated(&run->layout))
        iolab_aggregated_loop(&w[0], ps->aggbuf, ps->kg);
    else if (run->cfg.file_view)
        iolab_vector_xfer(&w[0]);
    else if (uses_queue(run, ps))
        iolab_queue_loop(&w[0], queue_depth(run));
    else if (ps->nw == 1 && run->cfg.stonewall > 0) {
        iolab_worker_loop(&w[0]);
        if (run->cfg.stonewall_stop)  /* IOR -D without wear-out reduces nothing it times */
            ps->agree_stonewall = 1;
        else  /* its reductions are timed, as IOR's wear-out's */
            iolab_wear_out(&w[0], ph);
    } else if (ps->nw == 1)
        iolab_worker_loop(&w[0]);
    else {
        pthread_t *th = calloc((size_t)ps->nw, sizeof *th);
        char *started = calloc((size_t)ps->nw, 1);
        for (int t = 0; t < ps->nw; t++) {
            started[t] = pthread_create(&th[t], NULL, iolab_worker_loop, &w[t]) == 0;
            if (!started[t])  /* no thread left: do its share here rather than lose it */
                iolab_worker_loop(&w[t]);
        }
        for (int t = 0; t < ps->nw; t++)
            if (started[t])
                pthread_join(th[t], NULL);
        free(started);
        free(th);
    }
}

/* The first phase with an open file records the effective hints (rank 0 reports them). */
static void record_hints(iolab_run_t *run, void *fh)
{
    if (run->hints.have_effective || !run->be->get_info)
        return;
    MPI_Info used = MPI_INFO_NULL;
    if (run->be->get_info(fh, &used) == 0) {
        iolab_hints_set_effective(&run->hints, used, run->env.mpi_library);
        if (used != MPI_INFO_NULL)
            MPI_Info_free(&used);
    }
}

/* What open (and prepare) get for the file of logical rank lr (ps->path). The caller frees
 * a->info. */
static void open_args(iolab_run_t *run, const phase_setup_t *ps, int op, int lr,
                      iolab_open_args_t *a)
{
    int f = iolab_layout_file_of(&run->layout, lr);
    *a = (iolab_open_args_t){ps->path, ps->comm, (iolab_dir_t)op,
                             iolab_layout_file_bytes(&run->layout, f),
                             iolab_hints_info(&run->hints),
                             run->layout.kind == IOLAB_LAYOUT_SUBARRAY ? &run->decomp : NULL};
}

/* Before the barrier: the backend's untimed preparation of the files a write creates. When
 * one rank's preparation fails, no rank writes (agreed over the world, untimed): a file
 * system without room for one rank's file must not get the other ranks' bytes, and which
 * rank's reservation wins the last free blocks is a race. */
static void prepare_files(iolab_run_t *run, phase_setup_t *ps, int op, int lr)
{
    if (op != IOLAB_WRITE || !run->be->prepare)
        return;
    int e = 0;
    if (ps->does_io) {
        iolab_open_args_t a;
        open_args(run, ps, op, lr, &a);
        e = run->be->prepare(run->be_state, &a, ps->w[0].why, sizeof ps->w[0].why);
        if (a.info != MPI_INFO_NULL)
            MPI_Info_free(&a.info);
        run->files_exist = 1;
    }
    int failed = e != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, run->world);
    if (!any)
        return;
    iolab_phase_agree_failure(run, op, e, ps->w[0].why, 0);  /* the failing rank's words */
    for (int t = 0; t < ps->nw; t++)
        ps->w[t].err = ps->w[t].err ? ps->w[t].err : (e ? e : run->fail.err);
}

/* Open, move, sync, close; fills tl and the workers' counts and errors. */
static void do_phase_io(iolab_run_t *run, phase_setup_t *ps, int op, int lr, timeline_t *tl,
                        double t0, iolab_phase_t *ph)
{
    char err[IOLAB_ERRLEN] = "";
    int e = 0;
    void *fh = NULL;
    tl->open_start = MPI_Wtime() - t0;
    if (ps->does_io) {
        iolab_open_args_t a;
        open_args(run, ps, op, lr, &a);
        e = run->be->open(run->be_state, &a, &fh, err, sizeof err);
        if (a.info != MPI_INFO_NULL)
            MPI_Info_free(&a.info);
        if (e) {  /* no handle: the workers must not touch it */
            fh = NULL;
            for (int t = 0; t < ps->nw; t++)
                ps->w[t].err = ps->w[t].err ? ps->w[t].err : e;
        }
        if (op == IOLAB_WRITE)
            run->files_exist = 1;
    }
    if (run->cfg.step_barriers)  /* IOR -g: inside the timing, as IOR's */
        MPI_Barrier(run->world);
    tl->open_end = MPI_Wtime() - t0;
    for (int t = 0; t < ps->nw; t++)
        ps->w[t].deadline = run->cfg.stonewall > 0 ? t0 + run->cfg.stonewall : 0;
    transfer_all(run, ps, fh, ph);
    if (run->cfg.step_barriers)
        MPI_Barrier(run->world);
    tl->xfer_end = MPI_Wtime() - t0;
    worker_t *w0 = &ps->w[0];
    double untimed = 0;  /* iolab's own reading of the effective hints, not the workload's */
    if (fh) {
        /* The first phase reads the hints in effect back (the report's); IOR does not (only
         * with -H, in its open), so its time is left out of the phase's close. */
        double h0 = MPI_Wtime();
        record_hints(run, fh);
        untimed = MPI_Wtime() - h0;
        int se = 0;
        if (op == IOLAB_WRITE && run->cfg.fsync && run->be->sync)
            se = run->be->sync(fh);
        int ce = run->be->close(fh);
        if (!w0->err && (se || ce))
            w0->err = se ? se : ce;
    }
    tl->close_end = MPI_Wtime() - t0 - untimed;
    if (err[0] && !w0->why[0])
        snprintf(w0->why, sizeof w0->why, "%s", err);
}

const char *iolab_op_name(int op)
{
    static const char *const names[] = {"write", "read", "create", "stat", "open_read",
                                        "remove", "dir_create", "dir_stat", "dir_rename",
                                        "dir_remove", "tree_create", "tree_remove"};
    return op >= 0 && op < (int)(sizeof names / sizeof *names) ? names[op] : "?";
}

/* Everyone learns the lowest failing rank's errno and message (MINLOC + broadcast). */
void iolab_phase_agree_failure(iolab_run_t *run, int op, int err, const char *why,
                          uint64_t bytes_done)
{
    struct { int val, rank; } in = {err ? run->rank : INT_MAX, run->rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, run->world);
    uint64_t total = 0;
    MPI_Allreduce(&bytes_done, &total, 1, MPI_UINT64_T, MPI_SUM, run->world);
    if (out.val == INT_MAX || run->fail.set)
        return;
    int who = out.val, e = err;
    char msg[IOLAB_ERRLEN];
    snprintf(msg, sizeof msg, "%s", why && *why ? why : strerror(err));
    MPI_Bcast(&e, 1, MPI_INT, who, run->world);
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, who, run->world);
    run->fail.set = 1;
    run->fail.phase = iolab_op_name(op);
    run->fail.rank = who;
    run->fail.err = e;
    run->fail.bytes_done = total;
    snprintf(run->fail.message, sizeof run->fail.message, "%s", msg);
}

/* Sum verify errors; everyone learns the lowest-offset... of the lowest failing reader. */
static void agree_verify(iolab_run_t *run, const worker_t *w, int nw, int path_f)
{
    uint64_t mine = 0, all = 0;
    int set = 0;
    uint64_t off = 0;
    for (int t = 0; t < nw; t++) {
        mine += w[t].vbad;
        if (w[t].bad_set && (!set || w[t].bad_off < off)) {
            set = 1;
            off = w[t].bad_off;
        }
    }
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, run->world);
    if (!all)
        return;
    run->verify.errors += all;
    struct { int val, rank; } in = {set ? run->rank : INT_MAX, run->rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, run->world);
    if (out.val == INT_MAX || run->verify.bad)
        return;
    int owner[2] = {w[0].lr, path_f};
    MPI_Bcast(owner, 2, MPI_INT, out.val, run->world);
    MPI_Bcast(&off, 1, MPI_UINT64_T, out.val, run->world);
    run->verify.bad = 1;
    run->verify.reader = out.val;
    run->verify.rank = owner[0];
    run->verify.offset = off;
    iolab_run_file_path(run, owner[1], run->verify.file, sizeof run->verify.file);
}

/* Gather every rank's numbers to rank 0 and compute the phase's result there. */
void iolab_phase_collect(iolab_run_t *run, iolab_phase_t *ph, const iolab_rank_stat_t *me)
{
    double mine[7] = {(double)me->bytes, (double)me->ops, me->open_s, me->xfer_s, me->close_s,
                      me->start, me->end};
    double *all = run->rank == 0 ? malloc(sizeof mine * (size_t)run->ranks) : NULL;
    MPI_Gather(mine, 7, MPI_DOUBLE, all, 7, MPI_DOUBLE, 0, run->world);
    if (run->rank != 0)
        return;
    ph->per_rank = calloc((size_t)run->ranks, sizeof *ph->per_rank);
    double first = 0, last = 0;
    for (int r = 0; r < run->ranks; r++) {
        const double *d = all + 7 * r;
        iolab_rank_stat_t *s = &ph->per_rank[r];
        *s = (iolab_rank_stat_t){(uint64_t)d[0], (uint64_t)d[1], d[2], d[3], d[4], d[5], d[6]};
        ph->bytes += s->bytes;
        ph->ops += s->ops;
        first = r == 0 || s->start < first ? s->start : first;
        last = r == 0 || s->end > last ? s->end : last;
        const double v[3] = {s->open_s, s->xfer_s, s->close_s};
        iolab_minmax_t *mm[3] = {&ph->open_s, &ph->xfer_s, &ph->close_s};
        for (int k = 0; k < 3; k++) {
            if (r == 0 || v[k] < mm[k]->min)
                mm[k]->min = v[k];
            if (r == 0 || v[k] > mm[k]->max)
                mm[k]->max = v[k];
        }
    }
    free(all);
    ph->time_s = last - first;
    ph->bw = ph->time_s > 0 ? (double)ph->bytes / ph->time_s : 0;
    ph->iops = ph->time_s > 0 ? (double)ph->ops / ph->time_s : 0;
}

void iolab_phase_append(iolab_run_t *run, const iolab_phase_t *ph)
{
    if (run->rank != 0)
        return;
    if (run->nphases == run->phases_cap) {
        size_t cap = run->phases_cap ? 2 * run->phases_cap : 16;
        iolab_phase_t *n = realloc(run->phases, cap * sizeof *n);
        if (!n)
            return;
        run->phases = n;
        run->phases_cap = cap;
    }
    run->phases[run->nphases++] = *ph;
}

/* --progress: rank 0's first worker gets the in-phase tick, with the phase's bytes over
 * all ranks (one reduction, before the timed part). */
static void setup_tick(iolab_run_t *run, phase_setup_t *ps, int lr, iolab_tick_t *tick)
{
    if (!run->cfg.progress)
        return;
    uint64_t mine = 0, all = 0;
    if (run->layout.kind == IOLAB_LAYOUT_SUBARRAY)
        mine = iolab_decomp_step_bytes(&run->decomp, lr) * run->decomp.steps;
    else
        for (int t = 0; t < ps->nw; t++)
            mine += (ps->w[t].last - ps->w[t].first) * run->layout.transfer;
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, run->world);
    tick->total_bytes = all;
    if (run->rank == 0 && ps->nw > 0)
        ps->w[0].tick = tick;
}

int iolab_phase_run(iolab_run_t *run, int op, int rep, int pass)
{
    iolab_phase_t ph = {.op = op, .rep = rep, .pass = pass, .cache = "n/a",
                        .resident_fraction = -1};
    int lr = run->rank;
    if (op == IOLAB_READ) {
        iolab_phase_cache(run, pass, &ph);
        int shift = pass < 0 && run->cfg.reorder_nodes > 0  /* IOR -W: one node further */
                        ? iolab_ior_reorder_shift(run, 1) : run->reorder_shift;
        if (run->cfg.reorder)
            lr = iolab_layout_reorder(&run->layout, run->rank, shift);
        if (run->cfg.reorder_random)  /* IOR -Z: drawn as IOR draws it */
            lr = iolab_ior_read_rank(run, rep);
        ph.reorder_shift = (lr - run->rank + run->ranks) % run->ranks;
    }
    int64_t prep = run->cfg.write ? rep : 0;
    worker_t proto = {.run = run, .op = op, .lr = lr, .prep = prep,
                      .seed = ((uint64_t)(uint32_t)lr << 32 | (uint32_t)prep) ^
                              0x5851F42D4C957F2Dull};
    phase_setup_t ps;
    setup_phase(run, &proto, &ps);
    if (uses_queue(run, &ps)) {
        ph.queue_depth = queue_depth(run);
        ph.queue_engine = run->be->queue_engine
                              ? run->be->queue_engine(run->be_state, (iolab_dir_t)op)
                              : NULL;
    }
    prepare_files(run, &ps, op, lr);
    iolab_tick_t tick = {.rep = rep, .op = op, .pass = pass};
    setup_tick(run, &ps, lr, &tick);
    timeline_t tl;
    if (run->cfg.phase_delay > 0) {  /* IOR -d: every rank, before the barrier, untimed */
        double ns = run->cfg.phase_delay * 1e9;
        struct timespec d = {(time_t)(ns / 1e9), (long)fmod(ns, 1e9)};
        while (nanosleep(&d, &d) != 0 && errno == EINTR && !iolab_interrupted)
            ;
    }
    MPI_Barrier(run->world);
    double t0 = MPI_Wtime();
    tick.t0 = t0;
    tick.next = t0 + IOLAB_TICK_S;
    do_phase_io(run, &ps, op, lr, &tl, t0, &ph);
    if (ps.agree_stonewall)
        iolab_stonewall_stop(&ps.w[0], &ph);
    worker_t *w = ps.w;
    int nw = ps.nw;
    iolab_rank_stat_t me = {0, 0, tl.open_end - tl.open_start, tl.xfer_end - tl.open_end,
                            tl.close_end - tl.xfer_end, tl.open_start, tl.close_end};
    int err = 0;
    const char *why = NULL;
    for (int t = 0; t < nw; t++) {
        me.bytes += w[t].bytes;
        me.ops += w[t].ops;
        if (w[t].err && !err) {
            err = w[t].err;
            why = w[t].why;
        }
    }
    int flags[2] = {err != 0, iolab_interrupted != 0}, any[2];
    MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, run->world);
    if (any[0])
        iolab_phase_agree_failure(run, op, err, why, me.bytes);
    else if (op == IOLAB_READ && !any[1])  /* after an error or interrupt: garbage anyway */
        agree_verify(run, w, nw, iolab_layout_file_of(&run->layout, lr));
    if (any[1])
        iolab_interrupted = 1;
    iolab_phase_collect(run, &ph, &me);
    iolab_phase_append(run, &ph);
    free(w);  /* the buffers stay for the next phase (alloc_buf) */
    free(ps.slots);
    iolab_ior_order_free(&ps.ior);
    return any[0] || any[1] || run->verify.bad;
}

void iolab_phase_cache(iolab_run_t *run, int pass, iolab_phase_t *ph)
{
    if (!(run->be->caps & IOLAB_CAP_PLAIN_FILES)) {
        ph->cache = "n/a";
        return;
    }
    int nf = iolab_layout_nfiles(&run->layout), evict_err = 0;
    char path[4096];
    ph->evict_attempted = run->cfg.evict && pass == 0;
    /* One rank per host: the page cache is per host, and one fadvise drops it for all. */
    if (ph->evict_attempted && run->env.host_leader)
        for (int f = 0; f < nf; f++) {
            iolab_run_file_path(run, f, path, sizeof path);
            if (iolab_evict_file(iolab_env_strip_prefix(path)) != 0)
                evict_err = 1;
        }
    MPI_Barrier(run->world);
    uint64_t mine[3] = {0, 0, (uint64_t)evict_err}, all[3];
    if (run->env.host_leader)
        for (int f = 0; f < nf; f++) {
            uint64_t res = 0, pages = 0;
            iolab_run_file_path(run, f, path, sizeof path);
            if (iolab_evict_resident(iolab_env_strip_prefix(path), &res, &pages) != 0)
                mine[2] = 1;
            mine[0] += res;
            mine[1] += pages;
        }
    MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, run->world);
    ph->resident_fraction = all[1] && !all[2] ? (double)all[0] / (double)all[1] : -1;
    ph->evict_verified = ph->evict_attempted && !all[2] && all[0] == 0;
    if (ph->resident_fraction < 0)
        ph->cache = "unknown";
    else if (all[0] == 0)
        ph->cache = "cold";
    else if (ph->resident_fraction >= 0.99)
        ph->cache = "warm";
    else
        ph->cache = "unknown";
}
