/* iolab-bench: how one rank moves its data in a phase (see xfer_loops.h). Errors never make
 * a rank leave a loop while others wait in a collective call: it goes on with zero-byte
 * calls (see phase.c). */
#include "xfer_loops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

static void check_data(worker_t *w, const unsigned char *buf, uint64_t len, int lr,
                       uint64_t off)
{
    int64_t bad = iolab_pattern_check(buf, len, lr, off, w->prep);
    if (bad < 0)
        return;
    w->vbad++;
    if (!w->bad_set || off + (uint64_t)bad < w->bad_off) {
        w->bad_set = 1;
        w->bad_off = off + (uint64_t)bad;
    }
}

static int moved(worker_t *w, int64_t n, uint64_t want)
{
    if (n < 0)
        return (int)-n;
    if ((uint64_t)n != want) {
        snprintf(w->why, sizeof w->why, "%s", w->op == IOLAB_READ
                 ? "short read: the file is shorter than the layout (written with other sizes?)"
                 : "short write");
        return EIO;
    }
    return 0;
}

/* File offset of the rank's transfer i. --random as IOR -z: a file per process visits each
 * block's transfers in a random order (the same in every block); the segmented shared file
 * deals each segment's transfers to random ranks; strided (no IOR twin) permutes the rank's
 * own transfers. */
static uint64_t xfer_offset(worker_t *w, uint64_t i)
{
    const iolab_layout_t *l = &w->run->layout;
    if (w->ior)  /* IOR's own order (ior_order.h) */
        return iolab_ior_order_offset(w->ior, &w->cursor, l->transfer, i);
    if (!w->run->cfg.random)
        return iolab_layout_offset(l, w->lr, i);
    if (w->slots) {
        uint64_t s = i / w->nslots, j = i % w->nslots;
        return s * (uint64_t)l->ranks * l->block + w->slots[j] * l->transfer;
    }
    if (l->kind == IOLAB_LAYOUT_FPP) {
        uint64_t k = l->block / l->transfer, s = i / k;
        return iolab_layout_offset(l, w->lr, s * k + iolab_layout_permute(i % k, k, w->seed));
    }
    return iolab_layout_offset(l, w->lr,
                               iolab_layout_permute(i, iolab_layout_rank_xfers(l), w->seed));
}

/* "progress-bytes <rep> <op> <pass> <done>/<total> <seconds>" on stderr, at most every
 * IOLAB_TICK_S. What it measures: rank 0's own share done (done of its first worker's
 * units: transfers, steps), scaled to the phase's bytes over all ranks, and the seconds
 * since the phase began. It asks no other rank -- no collective, no message inside the
 * transfer loop -- so it costs one clock read per transfer on rank 0 and nothing elsewhere;
 * it assumes the ranks keep pace (every layout gives them equal shares, uneven subarrays
 * aside). The exact count is the phase's own "progress" line at its end. */
void iolab_progress_tick(worker_t *w, uint64_t done, uint64_t of)
{
    iolab_tick_t *k = w->tick;
    if (!k || !of)
        return;
    double now = MPI_Wtime();
    if (now < k->next)
        return;
    k->next = now + IOLAB_TICK_S;
    uint64_t bytes = (uint64_t)((double)k->total_bytes * (double)done / (double)of);
    fprintf(stderr, "progress-bytes %d %s %d %llu/%llu %.3f\n", k->rep, iolab_op_name(k->op),
            k->pass, (unsigned long long)(bytes < k->total_bytes ? bytes : k->total_bytes),
            (unsigned long long)k->total_bytes, now - k->t0);
    fflush(stderr);
}

/* One transfer: fill (verify), move, check. zero: a zero-byte collective call. */
static int step(worker_t *w, uint64_t i, int zero)
{
    const iolab_run_t *run = w->run;
    uint64_t t = run->layout.transfer;
    if (zero) {
        int64_t n = run->be->xfer(w->fh, (iolab_dir_t)w->op, w->buf, 0, 0);
        if (n >= 0 && w->op == IOLAB_WRITE && run->cfg.fsync_per_write && run->be->sync)
            run->be->sync(w->fh);  /* a collective sync the others make too */
        return n < 0 ? (int)-n : 0;
    }
    uint64_t off = xfer_offset(w, i);
    if (w->op == IOLAB_WRITE && run->cfg.verify)
        iolab_pattern_fill(w->buf, t, w->lr, off, w->prep);
    int e = moved(w, run->be->xfer(w->fh, (iolab_dir_t)w->op, w->buf, off, t), t);
    if (!e && w->op == IOLAB_WRITE && run->cfg.fsync_per_write && run->be->sync)
        e = run->be->sync(w->fh);
    if (e)
        return e;
    w->bytes += t;
    w->ops++;
    if (w->op == IOLAB_READ && run->cfg.verify)
        check_data(w, w->buf, t, w->lr, off);
    return 0;
}

/* Every rank must make every call (collective transfers, or a collective sync after each
 * write), so a rank that failed goes on with zero-byte calls. */
static int lockstep(const iolab_run_t *run)
{
    return run->cfg.collective ||
           (run->cfg.fsync_per_write && !(run->be->caps & IOLAB_CAP_LOCAL_SYNC));
}

void *iolab_worker_loop(void *arg)
{
    worker_t *w = arg;
    int lock = lockstep(w->run);
    for (uint64_t i = w->next; i < w->last; i++) {
        int zero = 0, hit = w->deadline > 0 && MPI_Wtime() >= w->deadline;
        if (w->deadline > 0 && lock)  /* IOR -D -c: rank 0 decides for all, every call */
            MPI_Bcast(&hit, 1, MPI_INT, 0, w->run->world);
        if (hit) {
            w->sw_hit = 1;
            w->next = i;
            return NULL;
        }
        if (w->err || iolab_interrupted) {
            if (!lock || !w->fh)
                break;
            zero = 1;
        }
        int e = step(w, i, zero);
        if (e && !w->err)
            w->err = e;
        iolab_progress_tick(w, i + 1 - w->first, w->last - w->first);
    }
    w->next = w->last;
    return NULL;
}

/* --posix.queue-depth: the core's side of the backend's queue (see iolab_queue_t). */
typedef struct queue_ctx {
    worker_t *w;
    uint64_t next;              /* next transfer index */
    uint64_t *offsets;          /* per slot: the offset in flight (verify) */
} queue_ctx_t;

static int queue_next(void *ctx, int slot, iolab_qslot_t *q)
{
    queue_ctx_t *c = ctx;
    worker_t *w = c->w;
    uint64_t t = w->run->layout.transfer;
    if (w->err || iolab_interrupted || c->next >= w->last)
        return 0;
    uint64_t off = xfer_offset(w, c->next++);
    unsigned char *buf = w->buf + (uint64_t)slot * t;
    if (w->op == IOLAB_WRITE && w->run->cfg.verify)
        iolab_pattern_fill(buf, t, w->lr, off, w->prep);
    c->offsets[slot] = off;
    *q = (iolab_qslot_t){buf, off, t};
    return 1;
}

static void queue_done(void *ctx, int slot, int64_t result)
{
    queue_ctx_t *c = ctx;
    worker_t *w = c->w;
    uint64_t t = w->run->layout.transfer;
    int e = moved(w, result, t);
    if (e) {
        w->err = w->err ? w->err : e;
        return;
    }
    w->bytes += t;
    w->ops++;
    if (w->op == IOLAB_READ && w->run->cfg.verify)
        check_data(w, w->buf + (uint64_t)slot * t, t, w->lr, c->offsets[slot]);
    iolab_progress_tick(w, w->ops, w->last - w->first);
}

/* The rank's transfers through the backend's queue, depth requests in flight. */
void iolab_queue_loop(worker_t *w, int depth)
{
    queue_ctx_t c = {w, w->first, calloc((size_t)depth, sizeof(uint64_t))};
    iolab_queue_t q = {queue_next, queue_done, &c, depth};
    int e = c.offsets && w->fh ? w->run->be->xfer_queue(w->fh, (iolab_dir_t)w->op, &q)
                               : ENOMEM;
    if (e && !w->err)
        w->err = e;
    free(c.offsets);
}

/* --stonewall: each rank stopped at its deadline (or finished); all agree on the furthest
 * count and wear out to it, so every rank moves the same amount (IOR -D with wear-out).
 * Collective over the world. Fills the phase's stonewall numbers. */
void iolab_wear_out(worker_t *w, iolab_phase_t *ph)
{
    iolab_run_t *run = w->run;
    uint64_t mine[2] = {w->next, ~w->next}, all[2];
    int hit = w->sw_hit, any = 0;
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, run->world);
    MPI_Allreduce(&hit, &any, 1, MPI_INT, MPI_MAX, run->world);
    w->deadline = 0;
    w->last = all[0] < w->last ? all[0] : w->last;  /* random shared file: counts differ */
    iolab_worker_loop(w);
    ph->stonewall_hit = any;
    ph->sw_max = all[0];
    ph->sw_min = ~all[1];
    if (w->op == IOLAB_WRITE)
        run->sw_written = all[0];
}

/* --stonewall with --stonewall-stop (IOR -D without stoneWallingWearOut): each rank keeps
 * what it moved by its deadline, no wear-out; a read of the same run reads as many
 * transfers as this rank wrote (IOR's own count). Collective; called after the phase's close,
 * untimed, as IOR's -D without wear-out reduces nothing inside its timed interval. */
void iolab_stonewall_stop(worker_t *w, iolab_phase_t *ph)
{
    iolab_run_t *run = w->run;
    uint64_t mine[2] = {w->next, ~w->next}, all[2];
    int hit = w->sw_hit, any = 0;
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, run->world);
    MPI_Allreduce(&hit, &any, 1, MPI_INT, MPI_MAX, run->world);
    ph->stonewall_hit = any;
    ph->sw_max = all[0];
    ph->sw_min = ~all[1];
    if (w->op == IOLAB_WRITE) {
        run->sw_written = w->next;
        run->sw_stopped = 1;  /* even 0: a rank that moved nothing reads nothing */
    }
}

/* --file-view: the rank's whole data in one call through a strided view. */
void iolab_vector_xfer(worker_t *w)
{
    const iolab_run_t *run = w->run;
    iolab_layout_vec_t lv;
    iolab_layout_vec(&run->layout, w->lr, &lv);
    iolab_vec_t v = {lv.offset, lv.count, lv.length, lv.stride};
    if (w->op == IOLAB_WRITE && run->cfg.verify)
        for (uint64_t p = 0; p < v.count; p++)
            iolab_pattern_fill(w->buf + p * v.length, v.length, w->lr, v.offset + p * v.stride,
                               w->prep);
    if (!w->fh)
        return;
    /* An interrupted rank still makes the call, with no pieces: setting a file view is
     * collective over the file's ranks (MPI_File_set_view) even for independent transfers,
     * so skipping it would leave the other ranks waiting. */
    if (iolab_interrupted)
        v.count = 0;
    uint64_t want = v.count * v.length;
    int e = moved(w, run->be->xfer_vec(w->fh, (iolab_dir_t)w->op, w->buf, &v), want);
    if (e) {
        w->err = e;
        return;
    }
    w->bytes += want;
    w->ops += v.count ? 1 : 0;
    if (w->op == IOLAB_READ && run->cfg.verify)
        for (uint64_t p = 0; p < v.count; p++)
            check_data(w, w->buf + p * v.length, v.length, w->lr, v.offset + p * v.stride);
}

/* Subarray layout: fill (check) the pattern of each run of the boxes, packed in buf. */
static void box_pattern(worker_t *w, const iolab_box_t *boxes, int nb, int check)
{
    const iolab_decomp_t *d = &w->run->decomp;
    unsigned char *p = w->buf;
    for (int k = 0; k < nb; k++) {
        uint64_t runs, len;
        iolab_box_runs(d, &boxes[k], &runs, &len);
        for (uint64_t i = 0; i < runs; i++, p += len) {
            uint64_t off = iolab_box_run_offset(d, &boxes[k], i);
            if (check)
                check_data(w, p, len, w->lr, off);
            else
                iolab_pattern_fill(p, len, w->lr, off, w->prep);
        }
    }
}

/* Backends without N-D files (posix, null): one call per contiguous run of the boxes.
 * Returns 0 or an errno. */
static int runs_xfer(worker_t *w, const iolab_box_t *boxes, int nb)
{
    const iolab_run_t *run = w->run;
    const iolab_decomp_t *d = &run->decomp;
    unsigned char *p = w->buf;
    for (int k = 0; k < nb; k++) {
        uint64_t runs, len;
        iolab_box_runs(d, &boxes[k], &runs, &len);
        for (uint64_t i = 0; i < runs; i++, p += len) {
            uint64_t off = iolab_box_run_offset(d, &boxes[k], i);
            int e = moved(w, run->be->xfer(w->fh, (iolab_dir_t)w->op, p, off, len), len);
            if (e)
                return e;
            w->ops++;
        }
    }
    return 0;
}

/* Subarray layout: per step, the rank's boxes of the N-D array with one xfer_boxes call
 * (a file view, a hyperslab, vara calls), or run by run where the backend has no N-D files.
 * With xfer_boxes every rank makes every step's call (empty boxes after a failure): setting
 * a view is collective even for independent transfers. */
void iolab_boxes_xfer(worker_t *w)
{
    const iolab_run_t *run = w->run;
    const iolab_decomp_t *d = &run->decomp;
    int nb = iolab_decomp_nboxes(d, w->lr), native = (run->be->caps & IOLAB_CAP_BOXES) != 0;
    iolab_box_t *boxes = calloc((size_t)nb, sizeof *boxes);
    if (!boxes)
        w->err = ENOMEM;
    for (uint64_t s = 0; boxes && w->fh && s < d->steps; s++) {
        int stop = w->err || iolab_interrupted;
        if (stop && !native)
            break;
        for (int k = 0; k < nb; k++) {
            iolab_decomp_box(d, w->lr, k, s, &boxes[k]);
            if (stop)
                memset(boxes[k].count, 0, sizeof boxes[k].count);
        }
        uint64_t want = stop ? 0 : iolab_decomp_step_bytes(d, w->lr);
        if (w->op == IOLAB_WRITE && run->cfg.verify && !stop)
            box_pattern(w, boxes, nb, 0);
        int e = 0;
        if (native) {
            e = moved(w, run->be->xfer_boxes(w->fh, (iolab_dir_t)w->op, w->buf, boxes, nb),
                      want);
            w->ops += !e && want ? 1 : 0;
        } else {
            e = runs_xfer(w, boxes, nb);
        }
        if (w->op == IOLAB_WRITE && run->cfg.fsync_per_write && run->be->sync) {
            int se = run->be->sync(w->fh);
            e = e ? e : se;
        }
        if (e || stop) {
            w->err = w->err ? w->err : e;
            continue;
        }
        w->bytes += want;
        if (w->op == IOLAB_READ && run->cfg.verify)
            box_pattern(w, boxes, nb, 1);
        iolab_progress_tick(w, s + 1, d->steps);
    }
    free(boxes);
}

/* Serial and subset layouts: members ship each transfer to their group's aggregator (group
 * rank 0) over MPI, which moves the group's transfers with one call. */
void iolab_aggregated_loop(worker_t *w, unsigned char *aggbuf, int kg)
{
    iolab_run_t *run = w->run;
    int grank;
    MPI_Comm_rank(run->group_comm, &grank);
    uint64_t t = run->layout.transfer, n = iolab_layout_rank_xfers(&run->layout);
    int agg_coll = run->cfg.collective && run->agg_comm != MPI_COMM_NULL;
    for (uint64_t i = 0; i < n; i++) {
        int stop = w->err || iolab_interrupted;
        uint64_t off = iolab_layout_offset(&run->layout, w->lr, i);
        if (w->op == IOLAB_WRITE) {
            if (run->cfg.verify && !stop)
                iolab_pattern_fill(w->buf, t, w->lr, off, w->prep);
            MPI_Gather(w->buf, (int)t, MPI_BYTE, aggbuf, (int)t, MPI_BYTE, 0, run->group_comm);
        }
        if (grank == 0 && w->fh && (!stop || agg_coll)) {
            uint64_t len = stop ? 0 : t * (uint64_t)kg;
            int e = moved(w, run->be->xfer(w->fh, (iolab_dir_t)w->op, aggbuf, off, len), len);
            if (e && !w->err)
                w->err = e;
            else if (!e && len) {
                w->bytes += len;
                w->ops++;
            }
        }
        if (w->op == IOLAB_READ) {
            MPI_Scatter(aggbuf, (int)t, MPI_BYTE, w->buf, (int)t, MPI_BYTE, 0, run->group_comm);
            if (run->cfg.verify && !stop)
                check_data(w, w->buf, t, w->lr, off);
        }
        iolab_progress_tick(w, i + 1, n);
    }
}

