/* iolab-bench: the result tree as a readable table (IOR-like). */
#include <string.h>

#include "run.h"

#define MIB (1024.0 * 1024.0)

static void header(const iolab_run_t *run, FILE *out)
{
    const iolab_cfg_t *c = &run->cfg;
    const iolab_env_t *e = &run->env;
    char layout[32];
    iolab_option_choice(&iolab_config_options[1], c->layout, layout, sizeof layout);
    fprintf(out, "iolab-bench %s  api %s  layout %s  ranks %d on %d host(s)\n", IOLAB_VERSION,
            c->api, layout, e->ranks, e->nhosts);
    const iolab_decomp_t *d = &run->decomp;
    if (c->metadata) {
        int unique;
        uint64_t size;
        iolab_metadata_plan(run, &unique, &size);
        fprintf(out, "metadata %s: %llu files per rank of %llu B, %s\n",
                c->metadata == IOLAB_METADATA_HARD ? "hard" : "easy",
                (unsigned long long)c->md_files, (unsigned long long)size,
                unique ? "a directory per rank" : "one shared directory");
    } else if (run->layout.kind == IOLAB_LAYOUT_SUBARRAY) {
        fprintf(out, "array %s", d->kind == IOLAB_DECOMP_BTIO ? "btio" : "subarray");
        for (int i = 0; i < d->nd; i++)
            fprintf(out, "%c%llu", i ? 'x' : ' ', (unsigned long long)d->dims[i]);
        fprintf(out, " (record first) x %llu B  process grid", (unsigned long long)d->elem);
        for (int i = 0; i < d->ngrid; i++)
            fprintf(out, "%c%d", i ? 'x' : ' ', d->pgrid[i]);
        fprintf(out, "  boxes per rank %d  total %llu B\n", iolab_decomp_nboxes(d, 0),
                (unsigned long long)run->layout.array_bytes);
    } else {
        fprintf(out, "transfer %llu B  block %llu B  segments %llu  per rank %llu B  total %llu B"
                "  files %d\n", (unsigned long long)c->transfer, (unsigned long long)c->block,
                (unsigned long long)c->segments,
                (unsigned long long)iolab_layout_rank_bytes(&run->layout),
                (unsigned long long)(iolab_layout_rank_bytes(&run->layout) * (uint64_t)e->ranks),
                iolab_layout_nfiles(&run->layout));
    }
    fprintf(out, "path %s  fs %s (block %llu, logical block %llu)\n", c->path, e->fs_type,
            (unsigned long long)e->fs_block_size, (unsigned long long)e->logical_block_size);
    fprintf(out, "MPI %.70s  MPI-IO %s\n", e->mpi_library, e->mpiio_impl);
    const iolab_hints_t *h = &run->hints;
    for (size_t i = 0; i < h->nreq; i++) {
        const char *state = !h->have_effective ? "not opened"
                            : !h->verifiable   ? "cannot verify (the library echoes hints)"
                            : iolab_hints_ignored(h, i) ? "IGNORED by the library"
                                                        : "in effect";
        fprintf(out, "hint %s=%s (%s): %s\n", h->req[i].key, h->req[i].value,
                h->req[i].source, state);
    }
}

static void phases(const iolab_run_t *run, FILE *out)
{
    fprintf(out, "\n%-9s %3s %4s %10s %10s %9s %9s %9s %9s %-7s\n", "access", "rep", "pass",
            "bw(MiB/s)", "IOPS", "open(s)", "xfer(s)", "close(s)", "total(s)", "cache");
    for (size_t i = 0; i < run->nphases; i++) {
        const iolab_phase_t *p = &run->phases[i];
        fprintf(out, "%-9s %3d %4d %10.2f %10.1f %9.4f %9.4f %9.4f %9.4f %-7s\n",
                iolab_op_name(p->op), p->rep, p->pass, p->bw / MIB, p->iops,
                p->open_s.max, p->xfer_s.max, p->close_s.max, p->time_s, p->cache);
    }
}

static void summary_line(const iolab_run_t *run, FILE *out, int op, int pass, const char *name)
{
    iolab_stats_t bw = iolab_run_stats(run, op, pass, IOLAB_METRIC_BW);
    iolab_stats_t io = iolab_run_stats(run, op, pass, IOLAB_METRIC_IOPS);
    if (!bw.n)
        return;
    fprintf(out, "%-9s %10.2f %10.2f %10.2f %10.2f %10.2f %10.1f %4zu\n", name, bw.max / MIB,
            bw.min / MIB, bw.median / MIB, bw.mean / MIB, bw.stddev / MIB, io.median, bw.n);
}

void iolab_report_table(const iolab_run_t *run, FILE *out)
{
    header(run, out);
    phases(run, out);
    fprintf(out, "\n%-9s %10s %10s %10s %10s %10s %10s %4s\n", "summary", "max(MiB/s)",
            "min", "median", "mean", "stddev", "IOPS(med)", "reps");
    summary_line(run, out, IOLAB_WRITE, 0, "write");
    for (int pass = 0; pass < run->cfg.read_times; pass++) {
        char name[24];
        snprintf(name, sizeof name, pass ? "read#%d" : "read", pass + 1);
        summary_line(run, out, IOLAB_READ, pass, name);
    }
    int ops[IOLAB_MD_MAX_OPS], nops = run->cfg.metadata ? iolab_metadata_ops(run, ops) : 0;
    for (int k = 0; k < nops; k++)  /* IOPS: operations/s */
        summary_line(run, out, ops[k], 0, iolab_op_name(ops[k]));
    if (strcmp(run->status, "ok") != 0)
        fprintf(out, "\nstatus %s: %s\n", run->status,
                run->fail.set ? run->fail.message : "interrupted");
    fflush(out);
}
