/* iolab-bench: the driver (see driver.h). */
#include "driver.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ior_compat.h"
#include "run.h"

volatile sig_atomic_t iolab_interrupted = 0;

static void on_signal(int sig)
{
    (void)sig;
    iolab_interrupted = 1;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* Open MPI's mpirun forwards SIGUSR2 as it is: iolab's way to interrupt the ranks there
     * (iolab.launch.interrupt); its SIGINT tears the job down while output is in flight. */
    sigaction(SIGUSR2, &sa, NULL);
}

/* Core option table + one per built backend, each bound to the struct it fills. */
static int build_groups(iolab_run_t *run)
{
    size_t n;
    const iolab_backend_t *const *all = iolab_backends_all(&n);
    run->groups = calloc(n + 1, sizeof *run->groups);
    if (!run->groups)
        return -1;
    run->groups[0] = (iolab_optgroup_t){"core", iolab_config_options, &run->cfg};
    for (size_t i = 0; i < n; i++) {
        void *base = all[i]->options_size ? calloc(1, all[i]->options_size) : NULL;
        run->groups[i + 1] = (iolab_optgroup_t){all[i]->name, all[i]->options, base};
    }
    run->ngroups = n + 1;
    return 0;
}

static void api_choices(char *buf, size_t len)
{
    size_t n, used = 0;
    const iolab_backend_t *const *all = iolab_backends_all(&n);
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", all[i]->name);
}

static void print_help(const iolab_run_t *run)
{
    size_t n;
    const iolab_backend_t *const *all = iolab_backends_all(&n);
    iolab_options_help(run->groups, run->ngroups, stdout);
    printf("\napis built into this binary (--api):\n");
    for (size_t i = 0; i < n; i++)
        printf("  %-8s %s\n", all[i]->name, all[i]->summary);
    printf("\nexit codes: 0 ok, 1 the run failed (I/O error, verify mismatch), 2 bad input, "
           "130 interrupted\n");
}

/* All ranks agree whether any rank found bad input; rank 0 prints the message of the
 * lowest such rank. Returns 1 when the run must stop with exit code 2. */
static int agree_bad_input(iolab_run_t *run, const char *err)
{
    struct { int val, rank; } in = {err[0] ? run->rank : INT_MAX, run->rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, run->world);
    if (out.val == INT_MAX)
        return 0;
    char msg[IOLAB_ERRLEN];
    snprintf(msg, sizeof msg, "%s", err);
    if (out.val != 0) {
        if (run->rank == out.val)
            MPI_Send(msg, sizeof msg, MPI_CHAR, 0, 0, run->world);
        else if (run->rank == 0)
            MPI_Recv(msg, sizeof msg, MPI_CHAR, out.val, 0, run->world, MPI_STATUS_IGNORE);
    }
    if (run->rank == 0) {
        fprintf(stderr, "iolab-bench: %s\n", msg);
        fflush(stderr);
    }
    return 1;
}

/* Checks of the options against each other and the backend's capabilities. */
/* The most bytes one xfer/xfer_vec call moves: a rank's data through a file view, a
 * group's transfers at an aggregator, else one transfer. */
static uint64_t largest_call(const iolab_run_t *run)
{
    if (run->layout.kind == IOLAB_LAYOUT_SUBARRAY)
        return iolab_decomp_step_bytes(&run->decomp, run->rank);
    if (run->cfg.file_view)
        return iolab_layout_rank_bytes(&run->layout);
    if (iolab_layout_aggregated(&run->layout))
        return run->layout.transfer * (uint64_t)run->layout.group;
    return run->layout.transfer;
}

/* The built backends having every capability in cap, as "a, b" (or "none built"): error
 * messages name the real choices of this binary, derived from the registry, never typed. */
static const char *apis_with(unsigned cap, char *buf, size_t len)
{
    size_t n, used = 0;
    const iolab_backend_t *const *all = iolab_backends_all(&n);
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        if ((all[i]->caps & cap) != cap)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", all[i]->name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (!buf[0])
        snprintf(buf, len, "none built");
    return buf;
}

/* Every rank must make every call: collective transfers, or a collective sync per write. */
static int lockstep_calls(const iolab_run_t *run)
{
    return run->cfg.collective ||
           (run->cfg.fsync_per_write && !(run->be->caps & IOLAB_CAP_LOCAL_SYNC));
}

/* The subarray layout and IOR's per-transfer patterns (--random, --fsync-per-write,
 * --stonewall, --unique-dir) against the rest. */
static int check_array_and_ior(const iolab_run_t *run, char *err, size_t len)
{
    const iolab_cfg_t *c = &run->cfg;
    int array = c->layout == IOLAB_LAYOUT_SUBARRAY;
    int per_transfer = !array && !c->file_view && !iolab_layout_aggregated(&run->layout);
    if (array && (c->threads > 1 || c->file_view))
        snprintf(err, len, "--threads and --file-view do not apply to --layout subarray or "
                 "--workload btio (each rank's boxes already go through one file view)");
    else if (!per_transfer && (c->random || c->fsync_per_write || c->stonewall > 0))
        snprintf(err, len, "--random, --fsync-per-write and --stonewall apply to the fpp, "
                 "segmented and strided layouts without --file-view");
    else if (c->random && c->layout == IOLAB_LAYOUT_SEGMENTED && lockstep_calls(run))
        snprintf(err, len, "--random on the segmented layout deals the transfers to random "
                 "ranks (IOR -z), so ranks make different numbers of calls: drop "
                 "--collective (or the collective sync per write of api %s)", run->be->name);
    else if (c->stonewall < 0)
        snprintf(err, len, "--stonewall %g: give seconds above 0 (0 = off)", c->stonewall);
    else if (c->stonewall > 0 && c->threads > 1)
        snprintf(err, len, "--stonewall cannot be combined with --threads: threads stop at "
                 "different counts");
    else if (c->unique_dir && c->layout != IOLAB_LAYOUT_FPP)
        snprintf(err, len, "--unique-dir applies to --layout fpp (a file per process, as IOR "
                 "-u with -F)");
    else if (c->unique_dir && !(run->be->caps & IOLAB_CAP_PLAIN_FILES))
        snprintf(err, len, "--unique-dir needs an api whose files are plain files; api %s's "
                 "are not", run->be->name);
    else
        return 0;
    return -1;
}


static int check_combinations(const iolab_run_t *run, char *err, size_t len)
{
    const iolab_cfg_t *c = &run->cfg;
    char apis[256];
    unsigned caps = run->be->caps;
    int agg = iolab_layout_aggregated(&run->layout);
    int shared = c->layout == IOLAB_LAYOUT_SEGMENTED || c->layout == IOLAB_LAYOUT_STRIDED ||
                 c->layout == IOLAB_LAYOUT_SUBARRAY ||
                 (c->layout == IOLAB_LAYOUT_SUBSET && c->group_files == IOLAB_GROUP_FILES_SHARED);
    if (check_array_and_ior(run, err, len) != 0)
        return -1;
    if (c->reps < 1 || c->read_times < 1 || c->threads < 1 || c->group < 0)
        snprintf(err, len, "--reps, --read-times and --threads must be at least 1 and --group "
                 "at least 0 (got %lld, %lld, %lld, %lld)", (long long)c->reps,
                 (long long)c->read_times, (long long)c->threads, (long long)c->group);
    else if (c->threads > 1 && !(caps & IOLAB_CAP_THREADS))
        snprintf(err, len, "--threads needs an api that is thread-safe per file (%s); "
                 "api %s is not", apis_with(IOLAB_CAP_THREADS, apis, sizeof apis), run->be->name);
    else if (c->threads > 1 && (c->collective || c->file_view || agg))
        snprintf(err, len, "--threads cannot be combined with --collective, --file-view or "
                 "the serial/subset layouts; drop one of them");
    else if (c->collective && !(caps & IOLAB_CAP_COLLECTIVE))
        snprintf(err, len, "--collective needs an api with collective I/O (%s); "
                 "api %s has none", apis_with(IOLAB_CAP_COLLECTIVE, apis, sizeof apis),
                 run->be->name);
    else if (c->file_view && !(caps & IOLAB_CAP_VECTOR))
        snprintf(err, len, "--file-view needs an api with file views (%s); api %s has "
                 "none", apis_with(IOLAB_CAP_VECTOR, apis, sizeof apis), run->be->name);
    else if (c->file_view && agg)
        snprintf(err, len, "--file-view applies to the fpp, segmented and strided layouts");
    else if (shared && !(caps & IOLAB_CAP_SHARED))
        snprintf(err, len, "api %s cannot share one file between ranks; use --layout fpp or "
                 "an api that can (%s)", run->be->name,
                 apis_with(IOLAB_CAP_SHARED, apis, sizeof apis));
    else if (c->verify && !(caps & IOLAB_CAP_STORES_DATA))
        snprintf(err, len, "--verify needs an api that stores data (%s); api %s does not",
                 apis_with(IOLAB_CAP_STORES_DATA, apis, sizeof apis), run->be->name);
    else if ((c->hint.n || c->hints_file) && !(caps & IOLAB_CAP_HINTS))
        snprintf(err, len, "--hint and --hints-file apply to MPI-IO based apis (%s), not to "
                 "api %s", apis_with(IOLAB_CAP_HINTS, apis, sizeof apis), run->be->name);
    else if (agg && run->layout.transfer * (uint64_t)run->layout.group > INT_MAX)
        snprintf(err, len, "--transfer x group size must stay below 2 GiB for the serial and "
                 "subset layouts (MPI message size); use a smaller --transfer");
    else if (run->be->max_call_bytes && largest_call(run) > run->be->max_call_bytes)
        snprintf(err, len, "api %s: one call would move %llu bytes (%s), but %s; use a "
                 "smaller --transfer%s", run->be->name, (unsigned long long)largest_call(run),
                 c->file_view ? "a rank's data with --file-view" : agg ? "--transfer x group"
                                                                   : "--transfer",
                 run->be->max_call_why, c->file_view ? " or --block, or drop --file-view" : "");
    else
        return 0;
    return -1;
}

/* Directory exists and is writable (writes); the files exist and are long enough
 * (read-only runs). */
static int check_files(const iolab_run_t *run, char *err, size_t len)
{
    const iolab_cfg_t *c = &run->cfg;
    if (!(run->be->caps & IOLAB_CAP_PLAIN_FILES))
        return 0;
    const char *dir = run->env.dir;
    if (!run->env.dir_exists) {
        snprintf(err, len, "directory %.300s does not exist (from --path %.300s); create it or point "
                 "--path to an existing directory", dir, c->path);
        return -1;
    }
    if (c->write && access(dir, W_OK | X_OK) != 0) {
        snprintf(err, len, "cannot create files in %.300s: %s; choose a writable directory with "
                 "--path", dir, strerror(errno));
        return -1;
    }
    if (c->write || run->rank != 0)
        return 0;
    for (int f = 0; f < iolab_layout_nfiles(&run->layout); f++) {
        char path[4096];
        struct stat st;
        iolab_run_file_path(run, f, path, sizeof path);
        uint64_t need = iolab_layout_file_bytes(&run->layout, f);
        const char *p = iolab_env_strip_prefix(path);
        if (stat(p, &st) != 0 || access(p, R_OK) != 0) {
            snprintf(err, len, "cannot read %s: %s; a read-only run needs the files of an "
                     "earlier run with the same sizes and layout (--write --keep)", p,
                     strerror(errno));
            return -1;
        }
        /* --random-repeat draws its blocks from the file's own size (IOR's -z -z reads a
         * file of any size), and --read-xfers reads only the start of the layout (IOR's
         * status file count), so only an empty file is too small for them; a read past the
         * end is still a short read, an I/O error */
        if ((uint64_t)st.st_size < need &&
            !((c->random_repeat || c->read_xfers > 0) && st.st_size > 0)) {
            snprintf(err, len, "%s has %lld bytes but the layout reads %llu; write it first "
                     "with the same sizes and layout (--write --keep)", p,
                     (long long)st.st_size, (unsigned long long)need);
            return -1;
        }
    }
    return 0;
}

/* --layout subarray / --workload btio: parse the grids, decompose the array over the ranks
 * (MPI_Dims_create unless --pgrid), size the file. Other layouts refuse the array options. */
static int setup_array(iolab_run_t *run, char *err, size_t len)
{
    iolab_cfg_t *c = &run->cfg;
    int btio = c->workload == IOLAB_WORKLOAD_BTIO;
    if (btio)
        c->layout = IOLAB_LAYOUT_SUBARRAY;
    if (c->layout != IOLAB_LAYOUT_SUBARRAY) {
        if (!c->grid && !c->pgrid && !c->steps)
            return 0;
        snprintf(err, len, "--grid, --pgrid and --steps apply to --layout subarray and "
                 "--workload btio; add --layout subarray");
        return -1;
    }
    if (btio && c->pgrid) {
        snprintf(err, len, "--pgrid does not apply to --workload btio: its decomposition is "
                 "BT's (q x q ranks, q cells each)");
        return -1;
    }
    const char *grid = c->grid ? c->grid : btio ? "64x64x64" : NULL;
    uint64_t dims[IOLAB_GRID_MAXDIMS], pdims[IOLAB_GRID_MAXDIMS];
    int nd = grid ? iolab_grid_parse(grid, dims, IOLAB_GRID_MAXDIMS) : 0, pg[4] = {0};
    if (!grid) {
        snprintf(err, len, "--layout subarray needs --grid (the global array, e.g. --grid "
                 "2048x1024x256)");
        return -1;
    }
    if (nd <= 0) {
        snprintf(err, len, "--grid %s: give 1 to 4 whole numbers from 1 to 2^31-1 separated "
                 "by x, slowest dimension first (e.g. --grid 2048x1024x256)", grid);
        return -1;
    }
    if (c->pgrid) {
        int np = iolab_grid_parse(c->pgrid, pdims, IOLAB_GRID_MAXDIMS);
        if (np != nd) {
            snprintf(err, len, "--pgrid %s: give %d whole numbers separated by x, one per "
                     "--grid dimension, whose product is the number of ranks", c->pgrid, nd);
            return -1;
        }
        for (int i = 0; i < nd; i++)
            pg[i] = (int)pdims[i];
    } else {
        MPI_Dims_create(run->ranks, nd, pg);
    }
    uint64_t steps = c->steps ? c->steps : btio ? 5 : 1;
    if (iolab_decomp_init(&run->decomp, btio ? IOLAB_DECOMP_BTIO : IOLAB_DECOMP_BLOCK,
                          run->ranks, nd, dims, pg, c->elem, steps, err, len) != 0)
        return -1;
    run->layout.array_bytes = iolab_decomp_file_bytes(&run->decomp);
    return 0;
}

/* --metadata measures POSIX metadata calls itself: only the options that shape it apply. */
static int check_metadata(const iolab_run_t *run, char *err, size_t len)
{
    const iolab_cfg_t *c = &run->cfg;
    if (!c->metadata)
        return 0;
    if (!run->be->md)  /* the backends with metadata calls: posix, null (IOR's DUMMY) */
        snprintf(err, len, "--metadata measures the file system's own calls (open, stat, "
                 "unlink): use --api posix (or null: every call a no-op), not %s",
                 run->be->name);
    else if (c->md_files < 1 && c->md_layout != IOLAB_MD_LAYOUT_MDTEST)  /* mdtest -n 0 */
        snprintf(err, len, "--md-files must be at least 1 (0 with --md-layout mdtest: only "
                 "its tree phases make calls)");
    else if (c->md_step != IOLAB_MD_STEP_ALL && (c->md_phases != IOLAB_MD_PHASES_FILES ||
                                                 c->reps != 1))
        snprintf(err, len, "--md-step runs one file phase once, leaving the files for the "
                 "next run: give --md-phases files and --reps 1");
    else if (c->collective || c->file_view || c->threads > 1 || c->random ||
             c->layout != IOLAB_LAYOUT_FPP || c->workload != IOLAB_WORKLOAD_LAYOUT ||
             c->unique_dir || c->reorder || c->evict || c->read_times > 1)
        snprintf(err, len, "--metadata runs its own phases (create, stat, open+read, remove): "
                 "--layout, --workload, --collective, --file-view, --threads, --random, "
                 "--unique-dir, --reorder, --evict and --read-times do not apply");
    else if (c->md_size > (1u << 30))
        snprintf(err, len, "--md-size %llu: metadata files are small; give at most 1 GiB",
                 (unsigned long long)c->md_size);
    else
        return iolab_metadata_check(run, err, len);  /* trees, stride, seeds, stonewall */
    return -1;
}

/* Everything that can be checked before touching the file system. */
static int validate(iolab_run_t *run, char *err, size_t len)
{
    iolab_cfg_t *c = &run->cfg;
    run->be = iolab_backend_find(c->api);
    if (!run->be) {
        char built[256];
        api_choices(built, sizeof built);
        snprintf(err, len, "api '%s' is not built into this iolab-bench (built: %s); install "
                 "its library (parallel HDF5, PnetCDF) and re-run ./setup", c->api, built);
        return -1;
    }
    for (size_t g = 1; g < run->ngroups; g++)
        if (strcmp(run->groups[g].owner, run->be->name) == 0)
            run->be_opts = run->groups[g].base;
    int group = c->group > 0 ? (int)c->group : run->env.host_ranks[0];
    if (c->workload == IOLAB_WORKLOAD_BTIO)
        c->layout = IOLAB_LAYOUT_SUBARRAY;
    if (iolab_layout_init(&run->layout, c->layout, run->ranks, c->transfer, c->block,
                          c->segments, group, c->group_files == IOLAB_GROUP_FILES_SHARED,
                          err, len) != 0 ||
        setup_array(run, err, len) != 0)
        return -1;
    if (check_metadata(run, err, len) != 0 || check_combinations(run, err, len) != 0 ||
        iolab_ior_check_options(run, err, len) != 0)
        return -1;
    if (iolab_hints_collect(&run->hints, c, err, len) != 0)
        return -1;
    if (check_files(run, err, len) != 0)
        return -1;
    if (run->rank == 0 && c->json && strcmp(c->json, "-") != 0 &&
        access(c->json, W_OK) != 0) {
        /* a new file: the directory must take it (a probe, removed again) */
        FILE *f = fopen(c->json, "a");
        if (!f) {
            snprintf(err, len, "cannot write --json %s: %s", c->json, strerror(errno));
            return -1;
        }
        fclose(f);
        unlink(c->json);
    }
    return 0;
}

/* Subset aggregation with --group 0 means one aggregator per host, but groups are runs of
 * consecutive ranks: under a round-robin placement (srun -m cyclic) they would straddle hosts
 * and put every aggregator on the first host. The run then numbers its ranks host by host
 * (hosts in order of their lowest rank, ranks in order within a host); rank 0 stays rank 0,
 * and "rank" in the report is this number. */
static void number_ranks_by_host(iolab_run_t *run)
{
    if (run->cfg.layout != IOLAB_LAYOUT_SUBSET || run->cfg.group != 0)
        return;
    int by_host = 1;
    for (int r = 1; r < run->ranks; r++)
        by_host &= run->env.rank_host[r] >= run->env.rank_host[r - 1];
    if (by_host)
        return;
    MPI_Comm_split(run->world, 0, run->env.host_index * run->ranks + run->rank, &run->world);
    MPI_Comm_rank(run->world, &run->rank);
    iolab_env_free(&run->env);
    iolab_env_gather(&run->env, run->cfg.path, run->world);
}

/* Aggregated layouts: a communicator per group (aggregator = its rank 0), and one of the
 * aggregators when they share one file. */
static void make_comms(iolab_run_t *run)
{
    run->group_comm = MPI_COMM_NULL;
    run->agg_comm = MPI_COMM_NULL;
    if (!iolab_layout_aggregated(&run->layout))
        return;
    int g = iolab_layout_group_of(&run->layout, run->rank);
    MPI_Comm_split(run->world, g, run->rank, &run->group_comm);
    if (run->layout.kind == IOLAB_LAYOUT_SUBSET && run->layout.group_shared) {
        int is_agg = iolab_layout_group_first(&run->layout, g) == run->rank;
        MPI_Comm_split(run->world, is_agg ? 0 : MPI_UNDEFINED, run->rank, &run->agg_comm);
    }
}

static void remove_files(iolab_run_t *run)
{
    int mine = run->files_exist, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, run->world);
    if (!any || run->cfg.keep)
        return;
    for (int f = 0; f < iolab_layout_nfiles(&run->layout); f++)
        if (f % run->ranks == run->rank) {
            char path[4096];
            iolab_run_file_path(run, f, path, sizeof path);
            run->be->remove(run->be_state, path);
        }
    MPI_Barrier(run->world);
    if (run->dirs_made) {  /* --unique-dir: the directory this rank made (if now empty) */
        char dir[4096];
        iolab_run_dir_path(run, run->rank, dir, sizeof dir);
        rmdir(iolab_env_strip_prefix(dir));
    }
}

/* --unique-dir: each rank makes the directory of its file before a run that writes (an
 * existing one is used as it is). Returns 0, or -1 with one line in err. */
static int make_dirs(iolab_run_t *run, char *err, size_t len)
{
    if (!run->cfg.unique_dir || !run->cfg.write)
        return 0;
    char dir[4096];
    iolab_run_dir_path(run, run->rank, dir, sizeof dir);
    const char *p = iolab_env_strip_prefix(dir);
    if (mkdir(p, 0755) == 0)
        run->dirs_made = 1;
    else if (errno != EEXIST) {
        snprintf(err, len, "--unique-dir: cannot create %.300s: %s", p, strerror(errno));
        return -1;
    }
    return 0;
}

static void progress(const iolab_run_t *run, int rep, int op, int pass, int done, int total)
{
    if (run->rank != 0 || !run->cfg.progress)
        return;
    fprintf(stderr, "progress %d %s %d %d/%d\n", rep, iolab_op_name(op),
            pass, done, total);
    fflush(stderr);
}


/* The repetitions. Stops at the first failure, mismatch or interrupt. */
static void run_reps(iolab_run_t *run)
{
    const iolab_cfg_t *c = &run->cfg;
    int per_rep = (c->write ? 1 : 0) + (c->read ? (int)c->read_times : 0);
    int total = per_rep * (int)c->reps, done = 0;
    double start = MPI_Wtime();
    for (int rep = 0; rep < c->reps; rep++) {
        run->cur_rep = rep;
        if (c->write && !iolab_ior_time_is_up(run, start)) {
            if (c->remove_each_rep && !c->use_existing)
                iolab_ior_remove_files(run);
            int stop = iolab_phase_run(run, IOLAB_WRITE, rep, 0);
            progress(run, rep, IOLAB_WRITE, 0, ++done, total);
            if (stop)
                return;
            if (c->check_write && iolab_phase_run(run, IOLAB_READ, rep, -1))
                return;  /* IOR -W: read back what was just written, checked */
        }
        for (int pass = 0; c->read && pass < c->read_times && !iolab_ior_time_is_up(run, start);
             pass++) {
            int stop = iolab_phase_run(run, IOLAB_READ, rep, pass);
            progress(run, rep, IOLAB_READ, pass, ++done, total);
            if (stop)
                return;
        }
        if (rep + 1 < c->reps)  /* the last one's files go with the run's (remove_files) */
            iolab_ior_end_rep(run);
    }
}

/* The end sample of every rank's placement, gathered on rank 0 for the report. */
static void gather_placement(iolab_run_t *run)
{
    iolab_placement_end(&run->place);
    if (run->rank == 0)
        run->placements = calloc((size_t)run->ranks, sizeof *run->placements);
    MPI_Gather(&run->place, (int)sizeof run->place, MPI_BYTE, run->placements,
               (int)sizeof run->place, MPI_BYTE, 0, run->world);
}

static void finish_status(iolab_run_t *run)
{
    run->status = "ok";
    if (run->fail.set) {
        run->status = "failed";
    } else if (run->verify.bad) {
        run->status = "failed";
        run->fail.set = 1;
        run->fail.phase = "read";
        run->fail.rank = run->verify.reader;
        snprintf(run->fail.message, sizeof run->fail.message,
                 "verify: %llu transfers with wrong data; first wrong byte at offset %llu of "
                 "%.300s (data of rank %d, read by rank %d)",
                 (unsigned long long)run->verify.errors, (unsigned long long)run->verify.offset,
                 run->verify.file, run->verify.rank, run->verify.reader);
    }
    if (iolab_interrupted)
        run->status = "interrupted";
}

static void write_reports(const iolab_run_t *run)
{
    if (run->rank != 0)
        return;
    const char *json = run->cfg.json;
    int json_stdout = !json || strcmp(json, "-") == 0;
    if (!run->cfg.quiet)
        iolab_report_table(run, json_stdout ? stderr : stdout);
    FILE *out = json_stdout ? stdout : fopen(json, "w");
    if (!out) {
        fprintf(stderr, "iolab-bench: cannot write %s: %s\n", json, strerror(errno));
        return;
    }
    iolab_report_json(run, out);
    if (out != stdout)
        fclose(out);
    fflush(stdout);
}

/* Options, environment, validation (exit 2 on bad input, agreed by all ranks), backend
 * set-up. Returns -1 to go on, else the exit code. */
/* Builds the option groups and fills them from defaults, IOLAB_BENCH_* and argv; an
 * --help/--list-options/--version flag is left in *action. */
static void parse_args(iolab_run_t *run, int argc, char **argv, const char **action,
                       char *err, size_t errlen)
{
    *action = NULL;
    if (build_groups(run) != 0 ||
        iolab_options_defaults(run->groups, run->ngroups, err, errlen) != 0 ||
        iolab_options_env(run->groups, run->ngroups, "IOLAB_BENCH_", err, errlen) != 0 ||
        iolab_options_parse(run->groups, run->ngroups, argc, argv, action, err, errlen))
        if (!err[0])
            snprintf(err, errlen, "out of memory");
}

static void print_info(const iolab_run_t *run, const char *action)
{
    if (run->rank != 0)
        return;
    char choices[256];
    api_choices(choices, sizeof choices);
    if (strcmp(action, "list-options") == 0)
        iolab_options_list_json(run->groups, run->ngroups, choices, stdout);
    else if (strcmp(action, "help") == 0)
        print_help(run);
    else
        printf("iolab-bench %s\n", IOLAB_VERSION);
}

static int start(iolab_run_t *run, int argc, char **argv)
{
    char err[IOLAB_ERRLEN] = "";
    const char *action = NULL;
    parse_args(run, argc, argv, &action, err, sizeof err);
    if (!err[0] && action) {
        print_info(run, action);
        return 0;
    }
    if (!run->cfg.write && !run->cfg.read)
        run->cfg.write = run->cfg.read = true;
    if (!err[0]) {
        iolab_env_gather(&run->env, run->cfg.path, run->world);
        number_ranks_by_host(run);
    }
    if (!err[0])
        validate(run, err, sizeof err);
    if (agree_bad_input(run, err))
        return 2;
    make_dirs(run, err, sizeof err);
    if (agree_bad_input(run, err)) {
        if (run->dirs_made) {  /* another rank could not: nothing of the run stays */
            char dir[4096];
            iolab_run_dir_path(run, run->rank, dir, sizeof dir);
            rmdir(iolab_env_strip_prefix(dir));
        }
        return 2;
    }
    run->buf_align = run->env.page_size > run->env.logical_block_size
                         ? run->env.page_size : run->env.logical_block_size;
    run->reorder_shift = iolab_layout_reorder_shift(run->env.rank_host, run->ranks,
                                                    run->env.host_ranks[0]);
    int e = run->be->init(&run->be_state, run->be_opts, &run->cfg, &run->env, run->world, err,
                          sizeof err);
    if (e && !err[0])
        snprintf(err, sizeof err, "api %s: %s", run->be->name, strerror(e));
    if (agree_bad_input(run, err)) {
        if (!e && run->be->fini)
            run->be->fini(run->be_state);
        return 2;
    }
    make_comms(run);
    run->ior_seed = iolab_ior_order_seed(run);
    if (run->cfg.reorder_nodes > 0)  /* IOR -C -Q */
        run->reorder_shift = iolab_ior_reorder_shift(run, 0);
    return -1;
}

/* --help, --list-options and --version only print, so they are answered without MPI:
 * `iolab bench` reads the option table on every call, and MPI_Init alone costs a singleton
 * start (~0.3 s).  Under a launcher every rank runs this, and only the first one prints. */
static int info_requested(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "--list-options") ||
            !strcmp(argv[i], "--version"))
            return 1;
    return 0;
}

static int launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

static void free_run(iolab_run_t *run)
{
    iolab_phase_free_buffers(run);
    free(run->placements);
    for (size_t i = 0; i < run->nphases; i++)
        free(run->phases[i].per_rank);
    free(run->phases);
    iolab_hints_free(&run->hints);
    iolab_env_free(&run->env);
    iolab_options_free(run->groups, run->ngroups);
    for (size_t g = 1; g < run->ngroups; g++)
        free(run->groups[g].base);
    free(run->groups);
    free(run);
}

static int info_without_mpi(iolab_run_t *run, int argc, char **argv)
{
    char err[IOLAB_ERRLEN] = "";
    const char *action = NULL;
    run->rank = launcher_rank();
    run->ranks = 1;
    parse_args(run, argc, argv, &action, err, sizeof err);
    if (err[0] || !action) {
        if (run->rank == 0)
            fprintf(stderr, "iolab-bench: %s\n", err[0] ? err : "nothing to print");
        return 2;
    }
    print_info(run, action);
    return 0;
}

/* The thread level to ask MPI for: MPI_THREAD_FUNNELED only when the run starts worker
 * threads (--threads > 1; they call no MPI function but MPI_Wtime), else
 * MPI_THREAD_SINGLE, as IOR asks (MPI_Init). Above SINGLE, Open MPI locks a mutex around
 * every MPI-IO call (OPAL_THREAD_LOCK in mca_io_ompio_file_write_at): two atomic operations
 * and ~75 instructions per transfer that IOR does not pay (callgrind; issue 29, the MPI-IO
 * strided 4 KiB row of bench/engine_vs_ior). The options are read here as start() reads
 * them after MPI_Init (defaults, environment, command line); a line that does not parse
 * gets SINGLE, and start() reports it. */
static int thread_level(int argc, char **argv)
{
    iolab_run_t *probe = calloc(1, sizeof *probe);
    if (!probe)
        return MPI_THREAD_FUNNELED;
    char err[IOLAB_ERRLEN] = "";
    const char *action = NULL;
    parse_args(probe, argc, argv, &action, err, sizeof err);
    int level = !err[0] && probe->cfg.threads > 1 ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE;
    free_run(probe);
    return level;
}

int iolab_driver_main(int argc, char **argv)
{
    int provided;
    iolab_run_t *run = calloc(1, sizeof *run);
    if (!run) {
        fprintf(stderr, "iolab-bench: out of memory\n");
        return 2;
    }
    if (info_requested(argc, argv)) {
        int code = info_without_mpi(run, argc, argv);
        free_run(run);
        return code;
    }
    MPI_Init_thread(&argc, &argv, thread_level(argc, argv), &provided);
    install_signals();
    run->world = MPI_COMM_WORLD;
    MPI_Comm_rank(run->world, &run->rank);
    MPI_Comm_size(run->world, &run->ranks);
    run->argc = argc;
    run->argv = argv;
    int code = start(run, argc, argv);
    if (code < 0) {
        iolab_placement_start(&run->place);
        if (run->cfg.metadata)
            iolab_metadata_run(run);
        else
            run_reps(run);
        gather_placement(run);
        remove_files(run);
        finish_status(run);
        write_reports(run);
        code = iolab_interrupted ? 130 : run->fail.set ? 1 : 0;
        if (run->be->fini)
            run->be->fini(run->be_state);
        if (run->group_comm != MPI_COMM_NULL)
            MPI_Comm_free(&run->group_comm);
        if (run->agg_comm != MPI_COMM_NULL)
            MPI_Comm_free(&run->agg_comm);
    }
    if (run->world != MPI_COMM_WORLD)
        MPI_Comm_free(&run->world);
    free_run(run);
    MPI_Finalize();
    return code;
}
