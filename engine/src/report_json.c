/* iolab-bench: the result tree as the JSON document of docs/engine-json.md. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "run.h"
#include "stats.h"

#define IOLAB_SCHEMA_VERSION 1

static void config_group(iolab_json_t *j, const iolab_optgroup_t *g)
{
    for (const iolab_option_t *o = g->table; o && o->name; o++) {
        const char *p = (const char *)g->base + o->offset;
        char buf[64];
        switch (o->type) {
        case IOLAB_OPT_BOOL: iolab_json_bool(j, o->key, *(const bool *)p); break;
        case IOLAB_OPT_INT: iolab_json_int(j, o->key, *(const int64_t *)p); break;
        case IOLAB_OPT_SIZE:
        case IOLAB_OPT_COUNT: iolab_json_uint(j, o->key, *(const uint64_t *)p); break;
        case IOLAB_OPT_DOUBLE: iolab_json_num(j, o->key, *(const double *)p); break;
        case IOLAB_OPT_STR: iolab_json_str(j, o->key, *(char *const *)p); break;
        case IOLAB_OPT_ENUM:
            iolab_json_str(j, o->key, iolab_option_choice(o, *(const int *)p, buf, sizeof buf));
            break;
        case IOLAB_OPT_LIST: {
            const iolab_strlist_t *l = (const iolab_strlist_t *)p;
            iolab_json_arr(j, o->key);
            for (size_t i = 0; i < l->n; i++)
                iolab_json_str(j, NULL, l->items[i]);
            iolab_json_end(j, ']');
            break;
        }
        case IOLAB_OPT_ACTION: break;
        }
    }
}

/* The N-D array of the subarray layout and btio (null otherwise): its dimensions in the
 * file (record first), the process grid, boxes per rank, steps. */
static void array(iolab_json_t *j, const iolab_run_t *run)
{
    const iolab_decomp_t *d = &run->decomp;
    if (run->layout.kind != IOLAB_LAYOUT_SUBARRAY) {
        iolab_json_null(j, "array");
        return;
    }
    iolab_json_obj(j, "array");
    iolab_json_str(j, "decomposition", d->kind == IOLAB_DECOMP_BTIO ? "btio" : "block");
    iolab_json_arr(j, "dims");
    for (int i = 0; i < d->nd; i++)
        iolab_json_uint(j, NULL, d->dims[i]);
    iolab_json_end(j, ']');
    iolab_json_arr(j, "pgrid");
    for (int i = 0; i < d->ngrid; i++)
        iolab_json_int(j, NULL, d->pgrid[i]);
    iolab_json_end(j, ']');
    iolab_json_int(j, "boxes_per_rank", iolab_decomp_nboxes(d, 0));
    iolab_json_uint(j, "elem_bytes", d->elem);
    iolab_json_uint(j, "steps", d->steps);
    iolab_json_end(j, '}');
}

static void config(iolab_json_t *j, const iolab_run_t *run)
{
    iolab_json_obj(j, "config");
    /* every option, resolved: the other backends' too, so that a stored run's config always
     * has the same keys */
    for (size_t g = 0; g < run->ngroups; g++)
        config_group(j, &run->groups[g]);
    iolab_json_int(j, "group_effective", run->layout.group);
    iolab_json_int(j, "reorder_shift_ranks", run->cfg.reorder ? run->reorder_shift : 0);
    /* subset --group 0 over a round-robin placement: ranks numbered host by host (driver.c) */
    iolab_json_bool(j, "ranks_by_host", run->world != MPI_COMM_WORLD);
    int sub = run->layout.kind == IOLAB_LAYOUT_SUBARRAY;
    /* subarray: rank 0's share (the largest of an uneven split) */
    iolab_json_uint(j, "rank_bytes", sub ? iolab_decomp_step_bytes(&run->decomp, 0) *
                                               run->decomp.steps
                                         : iolab_layout_rank_bytes(&run->layout));
    iolab_json_uint(j, "total_bytes", sub ? run->layout.array_bytes
                                          : iolab_layout_rank_bytes(&run->layout) *
                                                (uint64_t)run->ranks);
    iolab_json_int(j, "files", iolab_layout_nfiles(&run->layout));
    array(j, run);
    if (run->cfg.metadata) {
        int unique;
        uint64_t size;
        iolab_metadata_plan(run, &unique, &size);
        iolab_json_obj(j, "metadata_plan");
        iolab_json_uint(j, "files_per_rank", run->cfg.md_files);
        iolab_json_uint(j, "file_bytes", size);
        iolab_json_str(j, "dir", unique ? "unique" : "shared");
        iolab_json_str(j, "phases", run->cfg.md_phases == IOLAB_MD_PHASES_BOTH ? "both"
                                    : run->cfg.md_phases == IOLAB_MD_PHASES_DIRS ? "dirs"
                                                                                 : "files");
        iolab_json_end(j, '}');
    } else {
        iolab_json_null(j, "metadata_plan");
    }
    iolab_json_end(j, '}');
}

/* Where each rank ran: CPU set, memory policy, the CPU and its MHz at start and end. */
static void placement(iolab_json_t *j, const iolab_run_t *run)
{
    const double unknown = 0.0 / 0.0;  /* printed as null */
    iolab_json_arr(j, "placement");
    for (int r = 0; run->placements && r < run->ranks; r++) {
        const iolab_placement_t *p = &run->placements[r];
        iolab_json_obj(j, NULL);
        iolab_json_int(j, "rank", r);
        iolab_json_str(j, "host", run->env.hosts[run->env.rank_host[r]]);
        iolab_json_str(j, "cpus", p->cpus);
        iolab_json_int(j, "ncpus", p->ncpus);
        iolab_json_str(j, "mempolicy", p->mempolicy);
        iolab_json_int(j, "cpu_start", p->cpu_start);
        iolab_json_int(j, "cpu_end", p->cpu_end);
        iolab_json_num(j, "cpu_mhz_start", p->mhz_start < 0 ? unknown : p->mhz_start);
        iolab_json_num(j, "cpu_mhz_end", p->mhz_end < 0 ? unknown : p->mhz_end);
        iolab_json_end(j, '}');
    }
    iolab_json_end(j, ']');
}

static void environment(iolab_json_t *j, const iolab_run_t *run)
{
    const iolab_env_t *e = &run->env;
    iolab_json_obj(j, "environment");
    iolab_json_arr(j, "hosts");
    for (int h = 0; h < e->nhosts; h++)
        iolab_json_str(j, NULL, e->hosts[h]);
    iolab_json_end(j, ']');
    iolab_json_int(j, "ranks", e->ranks);
    iolab_json_obj(j, "ranks_per_host");
    for (int h = 0; h < e->nhosts; h++)
        iolab_json_int(j, e->hosts[h], e->host_ranks[h]);
    iolab_json_end(j, '}');
    iolab_json_str(j, "mpi_library", e->mpi_library);
    iolab_json_str(j, "mpiio_implementation", e->mpiio_impl);
    iolab_json_str(j, "fs_type", e->fs_type);
    iolab_json_str(j, "fs_magic", e->fs_magic[0] ? e->fs_magic : NULL);
    iolab_json_str(j, "fs_path", e->dir);
    iolab_json_uint(j, "fs_block_size", e->fs_block_size);
    iolab_json_uint(j, "logical_block_size", e->logical_block_size);
    iolab_json_uint(j, "page_size", e->page_size);
    iolab_json_str(j, "start_time", e->start_time);
    placement(j, run);
    iolab_json_end(j, '}');
}

static void hints(iolab_json_t *j, const iolab_run_t *run)
{
    const iolab_hints_t *h = &run->hints;
    iolab_json_obj(j, "hints");
    if (!(run->be->caps & IOLAB_CAP_HINTS)) {
        iolab_json_end(j, '}');
        return;
    }
    iolab_json_obj(j, "requested");
    for (size_t i = 0; i < h->nreq; i++)
        iolab_json_str(j, h->req[i].key, h->req[i].value);
    iolab_json_end(j, '}');
    iolab_json_obj(j, "sources");
    for (size_t i = 0; i < h->nreq; i++)
        iolab_json_str(j, h->req[i].key, h->req[i].source);
    iolab_json_end(j, '}');
    iolab_json_obj(j, "effective");
    for (size_t i = 0; i < h->neff; i++)
        iolab_json_str(j, h->eff[i].key, h->eff[i].value);
    iolab_json_end(j, '}');
    int verifiable = h->have_effective && h->verifiable;
    iolab_json_bool(j, "verifiable", verifiable);
    iolab_json_arr(j, "ignored");
    for (size_t i = 0; verifiable && i < h->nreq; i++)
        if (iolab_hints_ignored(h, i))
            iolab_json_str(j, NULL, h->req[i].key);
    iolab_json_end(j, ']');
    iolab_json_arr(j, "unverified");  /* requested, but the library only echoes */
    for (size_t i = 0; !verifiable && i < h->nreq; i++)
        iolab_json_str(j, NULL, h->req[i].key);
    iolab_json_end(j, ']');
    iolab_json_end(j, '}');
}

static void minmax(iolab_json_t *j, const char *key, iolab_minmax_t m)
{
    iolab_json_obj(j, key);
    iolab_json_num(j, "min", m.min);
    iolab_json_num(j, "max", m.max);
    iolab_json_end(j, '}');
}

static void phase(iolab_json_t *j, const iolab_run_t *run, const iolab_phase_t *p)
{
    iolab_json_obj(j, NULL);
    iolab_json_str(j, "op", iolab_op_name(p->op));
    iolab_json_int(j, "pass", p->pass);
    iolab_json_str(j, "cache", p->cache);
    if (p->op == IOLAB_WRITE) {
        iolab_json_null(j, "eviction");
    } else {
        iolab_json_obj(j, "eviction");
        iolab_json_bool(j, "attempted", p->evict_attempted);
        iolab_json_bool(j, "verified", p->evict_verified);
        iolab_json_str(j, "method", p->evict_attempted ? "posix_fadvise" : NULL);
        iolab_json_num(j, "resident_fraction", p->resident_fraction < 0 ? 0.0 / 0.0
                                                                         : p->resident_fraction);
        iolab_json_end(j, '}');
    }
    iolab_json_int(j, "reorder_shift", p->reorder_shift);
    if (run->cfg.stonewall > 0) {
        iolab_json_obj(j, "stonewall");
        iolab_json_num(j, "deadline_s", run->cfg.stonewall);
        iolab_json_bool(j, "hit", p->stonewall_hit);
        iolab_json_uint(j, "xfers_min", p->sw_min);
        iolab_json_uint(j, "xfers_max", p->sw_max);
        iolab_json_end(j, '}');
    } else {
        iolab_json_null(j, "stonewall");
    }
    if (p->warnings) {  /* --md-warn: calls that failed while the phase went on */
        iolab_json_obj(j, "warnings");
        iolab_json_uint(j, "count", p->warnings);
        iolab_json_str(j, "first", p->warning);
        iolab_json_end(j, '}');
    }
    if (p->queue_depth > 0) {
        iolab_json_obj(j, "queue");
        iolab_json_int(j, "depth", p->queue_depth);
        iolab_json_str(j, "engine", p->queue_engine);
        iolab_json_end(j, '}');
    } else {
        iolab_json_null(j, "queue");
    }
    iolab_json_uint(j, "bytes", p->bytes);
    iolab_json_uint(j, "ops", p->ops);
    iolab_json_num(j, "time_s", p->time_s);
    iolab_json_num(j, "bw_bytes_per_s", p->bw);
    iolab_json_num(j, "iops", p->iops);
    minmax(j, "open_s", p->open_s);
    minmax(j, "xfer_s", p->xfer_s);
    minmax(j, "close_s", p->close_s);
    iolab_json_arr(j, "per_rank");
    for (int r = 0; p->per_rank && r < run->ranks; r++) {
        const iolab_rank_stat_t *s = &p->per_rank[r];
        iolab_json_obj(j, NULL);
        iolab_json_int(j, "rank", r);
        iolab_json_str(j, "host", run->env.hosts[run->env.rank_host[r]]);
        iolab_json_uint(j, "bytes", s->bytes);
        iolab_json_uint(j, "ops", s->ops);
        iolab_json_num(j, "open_s", s->open_s);
        iolab_json_num(j, "xfer_s", s->xfer_s);
        iolab_json_num(j, "close_s", s->close_s);
        iolab_json_num(j, "start_s", s->start);
        iolab_json_num(j, "end_s", s->end);
        iolab_json_end(j, '}');
    }
    iolab_json_end(j, ']');
    iolab_json_end(j, '}');
}

static void repetitions(iolab_json_t *j, const iolab_run_t *run)
{
    iolab_json_arr(j, "repetitions");
    int last = -1;
    for (size_t i = 0; i < run->nphases; i++) {
        const iolab_phase_t *p = &run->phases[i];
        if (p->rep != last) {
            if (last >= 0) {
                iolab_json_end(j, ']');
                iolab_json_end(j, '}');
            }
            iolab_json_obj(j, NULL);
            iolab_json_int(j, "index", p->rep);
            iolab_json_arr(j, "phases");
            last = p->rep;
        }
        phase(j, run, p);
    }
    if (last >= 0) {
        iolab_json_end(j, ']');
        iolab_json_end(j, '}');
    }
    iolab_json_end(j, ']');
}

iolab_stats_t iolab_run_stats(const iolab_run_t *run, int op, int pass, iolab_metric_t m)
{
    double *v = malloc((run->nphases ? run->nphases : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < run->nphases; i++) {
        const iolab_phase_t *p = &run->phases[i];
        if (p->op == op && p->pass == pass)
            v[n++] = m == IOLAB_METRIC_BW ? p->bw : m == IOLAB_METRIC_IOPS ? p->iops : p->time_s;
    }
    iolab_stats_t s = iolab_stats_of(v, n);
    free(v);
    return s;
}

static void stats_obj(iolab_json_t *j, const char *key, iolab_stats_t s)
{
    iolab_json_obj(j, key);
    iolab_json_num(j, "min", s.min);
    iolab_json_num(j, "median", s.median);
    iolab_json_num(j, "max", s.max);
    iolab_json_num(j, "mean", s.mean);
    iolab_json_num(j, "stddev", s.stddev);
    iolab_json_int(j, "n", (int64_t)s.n);
    iolab_json_end(j, '}');
}

static void op_summary(iolab_json_t *j, const char *key, const iolab_run_t *run, int op,
                       int pass)
{
    iolab_json_obj(j, key);
    stats_obj(j, "bw_bytes_per_s", iolab_run_stats(run, op, pass, IOLAB_METRIC_BW));
    stats_obj(j, "iops", iolab_run_stats(run, op, pass, IOLAB_METRIC_IOPS));
    stats_obj(j, "time_s", iolab_run_stats(run, op, pass, IOLAB_METRIC_TIME));
    iolab_json_end(j, '}');
}

/* "read" summarises the first pass of each repetition (what IOR reports); further passes of
 * the read-N-times experiment are in "read_passes". */
static void summary(iolab_json_t *j, const iolab_run_t *run)
{
    iolab_json_obj(j, "summary");
    if (run->cfg.metadata) {  /* per metadata phase; "iops" is operations per second */
        int ops[IOLAB_MD_MAX_OPS], n = iolab_metadata_ops(run, ops);
        for (int k = 0; k < n; k++)
            op_summary(j, iolab_op_name(ops[k]), run, ops[k], 0);
        iolab_json_end(j, '}');
        return;
    }
    if (run->cfg.write)
        op_summary(j, "write", run, IOLAB_WRITE, 0);
    if (run->cfg.read) {
        op_summary(j, "read", run, IOLAB_READ, 0);
        iolab_json_arr(j, "read_passes");
        for (int pass = 0; run->cfg.read_times > 1 && pass < run->cfg.read_times; pass++)
            op_summary(j, NULL, run, IOLAB_READ, pass);
        iolab_json_end(j, ']');
    }
    iolab_json_end(j, '}');
}

static void error_and_verify(iolab_json_t *j, const iolab_run_t *run)
{
    if (!run->fail.set) {
        iolab_json_null(j, "error");
    } else {
        iolab_json_obj(j, "error");
        iolab_json_str(j, "phase", run->fail.phase);
        iolab_json_int(j, "rank", run->fail.rank);
        iolab_json_int(j, "errno", run->fail.err);
        iolab_json_str(j, "message", run->fail.message);
        iolab_json_uint(j, "bytes_done", run->fail.bytes_done);
        iolab_json_end(j, '}');
    }
}

void iolab_report_json(const iolab_run_t *run, FILE *out)
{
    iolab_json_t j;
    iolab_json_init(&j, out);
    iolab_json_obj(&j, NULL);
    iolab_json_int(&j, "schema_version", IOLAB_SCHEMA_VERSION);
    iolab_json_obj(&j, "tool");
    iolab_json_str(&j, "name", "iolab-bench");
    iolab_json_str(&j, "version", IOLAB_VERSION);
    iolab_json_arr(&j, "argv");  /* as given: reruns the same measurement */
    for (int i = 0; i < run->argc; i++)
        iolab_json_str(&j, NULL, run->argv[i]);
    iolab_json_end(&j, ']');
    iolab_json_end(&j, '}');
    iolab_json_str(&j, "status", run->status);
    error_and_verify(&j, run);
    config(&j, run);
    environment(&j, run);
    hints(&j, run);
    repetitions(&j, run);
    summary(&j, run);
    iolab_json_obj(&j, "verify");
    iolab_json_bool(&j, "enabled", run->cfg.verify);
    iolab_json_uint(&j, "errors", run->verify.errors);
    if (!run->verify.bad) {
        iolab_json_null(&j, "first_bad");
    } else {
        iolab_json_obj(&j, "first_bad");
        iolab_json_int(&j, "rank", run->verify.rank);
        iolab_json_int(&j, "reader", run->verify.reader);
        iolab_json_uint(&j, "offset", run->verify.offset);
        iolab_json_str(&j, "file", run->verify.file);
        iolab_json_end(&j, '}');
    }
    iolab_json_end(&j, '}');
    iolab_json_end(&j, '}');
}
