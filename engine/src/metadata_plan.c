/* iolab-bench: the metadata run's plan -- the checks of its options, the tree and the
 * orders mdtest walks, the names of the items and the record of what the run made. The
 * phases that use it are in metadata.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metadata_plan.h"

void iolab_metadata_plan(const iolab_run_t *run, int *unique, uint64_t *size)
{
    const iolab_cfg_t *c = &run->cfg;
    *unique = c->md_dir == IOLAB_MD_DIR_UNIQUE ||
              (c->md_dir == IOLAB_MD_DIR_PRESET && c->metadata == IOLAB_METADATA_EASY);
    *size = c->md_size ? c->md_size
                       : c->metadata == IOLAB_METADATA_HARD ? IO500_HARD_FILE_BYTES : 0;
}

/* mdtest's num_dirs_in_tree and the directories that hold items (all, or the leaves). */
static uint64_t tree_dirs(uint64_t branch, int depth, int leaf_only)
{
    uint64_t all = 1, level = 1;
    for (int d = 0; d < depth; d++) {
        level *= branch;
        all += level;
        if (all > MD_MAX_TREE_DIRS)
            return MD_MAX_TREE_DIRS + 1;
    }
    return leaf_only ? level : all;
}

/* Returns the mask, or -1 for a word that is not a phase (or an empty list). */
int iolab_md_phase_mask(const iolab_cfg_t *c)
{
    static const char *const words[] = {"create", "stat", "read", "rename", "remove"};
    if (c->md_step != IOLAB_MD_STEP_ALL)
        return c->md_step == IOLAB_MD_STEP_REMOVE ? MD_SEL_REMOVE
                                                  : 1 << (c->md_step - IOLAB_MD_STEP_CREATE);
    if (!c->md_only)
        return MD_SEL_ALL;
    int mask = 0;
    for (const char *w = c->md_only; *w;) {
        size_t n = strcspn(w, ",");
        int found = 0;
        for (int k = 0; k < 5 && !found; k++)
            if (strlen(words[k]) == n && strncmp(w, words[k], n) == 0)
                found = 1 << k;
        if (!found)
            return -1;
        mask |= found;
        w += n + (w[n] == ',');
    }
    return mask ? mask : -1;
}

int iolab_metadata_check(const iolab_run_t *run, char *err, size_t len)
{
    const iolab_cfg_t *c = &run->cfg;
    uint64_t branch = c->md_branch < 1 ? 1 : (uint64_t)c->md_branch;
    uint64_t holders = c->md_depth >= 0 && c->md_depth <= MD_MAX_DEPTH
                           ? tree_dirs(branch, (int)c->md_depth, c->md_leaf_only) : 1;
    int mask = iolab_md_phase_mask(c);
    if (c->md_stride < 0 || c->md_random_seed < 0 || c->md_pre_delay < 0)
        snprintf(err, len, "--md-stride, --md-random-seed and --md-pre-delay cannot be "
                 "negative");
    else if (mask < 0 || (c->md_only && c->md_step != IOLAB_MD_STEP_ALL))
        snprintf(err, len, "--md-only %s: give a comma list of create, stat, read, rename and "
                 "remove (mdtest -C -T -E -U -r), without --md-step",
                 c->md_only ? c->md_only : "");
    else if (c->md_files == 0 && c->md_layout != IOLAB_MD_LAYOUT_MDTEST)
        snprintf(err, len, "--md-files 0 runs only mdtest's tree phases: add --md-layout "
                 "mdtest");
    else if (c->md_depth < 0 || c->md_depth > MD_MAX_DEPTH)
        snprintf(err, len, "--md-depth %lld: give 0 to %d", (long long)c->md_depth,
                 MD_MAX_DEPTH);
    else if (c->md_depth > 0 && c->md_branch < 1)
        snprintf(err, len, "--md-branch %lld: a tree needs at least 1", (long long)c->md_branch);
    else if ((c->md_depth > 0 || c->md_per_dir) && c->md_layout != IOLAB_MD_LAYOUT_MDTEST)
        snprintf(err, len, "--md-depth and --md-items-per-dir build mdtest's tree: add "
                 "--md-layout mdtest");
    else if (tree_dirs(branch, (int)c->md_depth, 0) > MD_MAX_TREE_DIRS)
        snprintf(err, len, "--md-depth %lld --md-branch %lld: more than %llu directories per "
                 "tree; give a smaller tree", (long long)c->md_depth, (long long)c->md_branch,
                 MD_MAX_TREE_DIRS);
    else if (c->md_per_dir ? c->md_files != c->md_per_dir * holders : c->md_files % holders)
        snprintf(err, len, "--md-files %llu: a tree of %llu directories holding items takes "
                 "--md-items-per-dir times that many (mdtest -n rounds down to it)",
                 (unsigned long long)c->md_files, (unsigned long long)holders);
    else if (c->md_depth > 0 && c->md_stride > 0 && c->md_dir != IOLAB_MD_DIR_SHARED &&
             c->md_layout == IOLAB_MD_LAYOUT_MDTEST)
        snprintf(err, len, "--md-stride with --md-depth and a directory per rank: mdtest "
                 "names a rank's subdirectories after itself inside its neighbour's tree, "
                 "which does not exist; give --md-dir shared or --md-depth 0");
    else if (c->stonewall > 0 && !(mask & MD_SEL_CREATE))
        snprintf(err, len, "--stonewall with --metadata applies to the create phase (mdtest "
                 "-W); the later steps run on the files it made");
    else if (c->stonewall > 0 && (c->md_depth > 0 || c->md_random_seed > 0))
        snprintf(err, len, "--stonewall with --metadata runs one directory in creation order "
                 "(mdtest's stonewall needs -b 1 and stats beyond the worn-out count with "
                 "-R): drop --md-depth / --md-random-seed");
    else if (c->md_dir_loops < 1 || (c->md_dir_loops > 1 &&
             (c->md_layout != IOLAB_MD_LAYOUT_MDTEST || c->stonewall > 0 ||
              mask != MD_SEL_ALL || c->md_random_seed > 0)))
        snprintf(err, len, "--md-dir-loops %lld: give 1 or more; more than 1 needs "
                 "--md-layout mdtest and runs every phase (no --stonewall, --md-step or "
                 "--md-random-seed)", (long long)c->md_dir_loops);
    else if (c->md_collective && (c->md_layout != IOLAB_MD_LAYOUT_MDTEST || c->md_stride ||
                                  c->stonewall > 0 || c->md_mknod || c->md_dir_loops > 1))
        snprintf(err, len, "--md-collective is mdtest -c: it needs --md-layout mdtest, and "
                 "not --md-stride, --stonewall, --md-mknod or --md-dir-loops (mdtest's own "
                 "collective pass names, stops or makes those items differently)");
    else if (c->md_mknod && c->md_size)
        snprintf(err, len, "--md-mknod makes empty files: give --md-size 0 (mdtest refuses "
                 "-k with -w too)");
    else
        return 0;
    return -1;
}

/* mdtest's tree walk (create_remove_items): a directory's items, then each child's subtree;
 * children of n are n*branch+1 .. n*branch+branch. Fills whichever lists are given. */
static void tree_walk(const md_plan_t *p, uint64_t node, int level, uint64_t **pre,
                      uint64_t **post, uint64_t **items)
{
    if (pre)
        *(*pre)++ = node;
    if (items && (!p->leaf_only || level == p->depth))
        for (uint64_t i = 0; i < p->per_dir; i++)
            *(*items)++ = node * p->per_dir + i;
    if (level < p->depth)
        for (uint64_t c = 1; c <= p->branch; c++)
            tree_walk(p, node * p->branch + c, level + 1, pre, post, items);
    if (post)
        *(*post)++ = node;
}

/* mdtest's -R order: srand(seed), then its Fisher-Yates walk with rand()/RAND_MAX. */
static void shuffle_items(uint64_t *a, uint64_t n, unsigned seed)
{
    srand(seed);
    for (uint64_t i = 0; i < n; i++)
        a[i] = i;
    while (n > 1) {
        n--;
        uint64_t k = (uint64_t)(((double)rand() / (double)RAND_MAX) * (double)n);
        uint64_t t = a[k];
        a[k] = a[n];
        a[n] = t;
    }
}

/* Returns 0, or ENOMEM. */
int iolab_md_plan_make(const iolab_run_t *run, md_plan_t *p)
{
    const iolab_cfg_t *c = &run->cfg;
    memset(p, 0, sizeof *p);
    iolab_metadata_plan(run, &p->unique, &p->size);
    p->files = c->md_files;
    p->io = run->be->md;
    p->checks_stat = (run->be->caps & IOLAB_CAP_STORES_DATA) != 0;
    p->rank = run->rank;
    p->ranks = run->ranks;
    p->mdtest = c->md_layout == IOLAB_MD_LAYOUT_MDTEST;
    p->loops = p->mdtest && c->md_dir_loops > 1 ? (int)c->md_dir_loops : 1;
    p->collective = c->md_collective;
    p->stride = (uint64_t)c->md_stride;
    p->depth = (int)c->md_depth;
    p->branch = c->md_branch < 1 ? 1 : (uint64_t)c->md_branch;
    p->leaf_only = c->md_leaf_only;
    p->tree_dirs = tree_dirs(p->branch, p->depth, 0);
    p->per_dir = c->md_per_dir ? c->md_per_dir
                               : p->files / tree_dirs(p->branch, p->depth, p->leaf_only);
    if (p->leaf_only)
        p->leaf_offset = p->per_dir * (p->tree_dirs - tree_dirs(p->branch, p->depth, 1));
    const char *path = iolab_env_strip_prefix(c->path);
    if (p->mdtest)
        snprintf(p->root, sizeof p->root, "%.4000s", path);
    else
        snprintf(p->root, sizeof p->root, "%.4000s.md", path);
    snprintf(p->testdir, sizeof p->testdir, "%s", p->root);
    if (p->mdtest) {
        if (!(p->dir_name = calloc(1, sizeof *p->dir_name)))
            return ENOMEM;
        p->tree_pre = malloc(p->tree_dirs * sizeof *p->tree_pre);
        p->tree_post = malloc(p->tree_dirs * sizeof *p->tree_post);
        p->create_order = malloc((p->files ? p->files : 1) * sizeof *p->create_order);
        if (!p->tree_pre || !p->tree_post || !p->create_order)
            return ENOMEM;
        uint64_t *pre = p->tree_pre, *post = p->tree_post, *items = p->create_order;
        tree_walk(p, 0, 0, &pre, &post, &items);
    }
    size_t items = p->files ? p->files : 1;
    p->made_files = calloc(items, 1);
    p->made_dirs = calloc(items, 1);
    p->made_tree = calloc(p->tree_dirs, 1);
    if (!p->made_files || !p->made_dirs || !p->made_tree)
        return ENOMEM;
    if (c->md_random_seed > 0) {
        if (!(p->stat_order = malloc((p->files ? p->files : 1) * sizeof *p->stat_order)))
            return ENOMEM;
        shuffle_items(p->stat_order, p->files,
                      (unsigned)(c->md_random_seed + (c->md_seed_per_rank ? run->rank : 0)));
        for (uint64_t i = 0; i < p->files; i++)
            p->stat_order[i] += p->leaf_offset;
    }
    return 0;
}

void iolab_md_plan_free(md_plan_t *p)
{
    free(p->create_order);
    free(p->stat_order);
    free(p->tree_pre);
    free(p->tree_post);
    free(p->made_files);
    free(p->made_dirs);
    free(p->made_tree);
    free(p->dir_name);
}

void iolab_md_testdir_changed(md_plan_t *p)
{
    if (p->dir_name)
        p->dir_name->valid = 0;
}

/* Keeps the record of what this run made: a successful create marks the item (a tree
 * directory by its node), a successful remove of the rank's own item unmarks it. */
void iolab_md_note_made(md_plan_t *p, int op, int owner, uint64_t i, uint64_t n)
{
    int own = owner == p->rank;
    switch (op) {
    case IOLAB_MD_CREATE: p->made_files[i] = own ? 1 : p->made_files[i]; break;
    case IOLAB_MD_DIR_CREATE: p->made_dirs[i] = own ? 1 : p->made_dirs[i]; break;
    case IOLAB_MD_REMOVE: p->made_files[i] = own ? 0 : p->made_files[i]; break;
    case IOLAB_MD_DIR_REMOVE: p->made_dirs[i] = own ? 0 : p->made_dirs[i]; break;
    case IOLAB_MD_TREE_CREATE: p->made_tree[n] = own ? 1 : p->made_tree[n]; break;
    case IOLAB_MD_TREE_REMOVE: p->made_tree[n] = own ? 0 : p->made_tree[n]; break;
    default: break;
    }
}

/* Whose items a rank works on in a phase: mdtest -N shifts stat by one stride, read by two,
 * remove by three (its stat_name, read_name, rm_name); creations are the rank's own. */
int iolab_md_owner(const md_plan_t *p, int op)
{
    int shift = op == IOLAB_MD_STAT || op == IOLAB_MD_DIR_STAT || op == IOLAB_MD_DIR_RENAME
                    ? 1
                : op == IOLAB_MD_READ                              ? 2
                : op == IOLAB_MD_REMOVE || op == IOLAB_MD_DIR_REMOVE ? 3
                                                                     : 0;
    return (int)(((uint64_t)p->rank + (uint64_t)shift * p->stride) % (uint64_t)p->ranks);
}

/* The item number the i-th call of a phase works on. */
uint64_t iolab_md_item_at(const md_plan_t *p, int op, uint64_t i)
{
    switch (op) {
    case IOLAB_MD_STAT: case IOLAB_MD_READ: case IOLAB_MD_DIR_STAT:
        return p->stat_order ? p->stat_order[i] : p->leaf_offset + i;
    case IOLAB_MD_DIR_RENAME:
        return p->leaf_offset + i;
    case IOLAB_MD_TREE_CREATE:
        return p->tree_pre[i];
    case IOLAB_MD_TREE_REMOVE:
        return p->tree_post[i];
    default:
        return p->create_order ? p->create_order[i] : i;
    }
}

/* mdtest's tree directory `node` of the tree of rank tree_rank:
 * <testdir>/mdtest_tree[.<tree_rank>].0/<base>.<a1>/.../<base>.<node>. */
void iolab_md_tree_dir_path(const md_plan_t *p, int tree_rank, uint64_t node, char *buf,
                          size_t len)
{
    char base[48];
    uint64_t chain[MD_MAX_DEPTH + 1];
    int k = 0;
    if (p->unique)
        snprintf(base, sizeof base, "mdtest_tree.%d", tree_rank);
    else
        snprintf(base, sizeof base, "mdtest_tree");
    for (; node > 0 && k <= MD_MAX_DEPTH; node = (node - 1) / p->branch)
        chain[k++] = node;
    int off = snprintf(buf, len, "%.4000s/%s.0", p->testdir, base);
    while (k-- > 0 && off > 0 && (size_t)off < len)
        off += snprintf(buf + off, len - (size_t)off, "/%s.%llu", base,
                        (unsigned long long)chain[k]);
}

/* Item n of rank `owner` (a file, or with dir a directory; suffix "-XX": mdtest's rename
 * parking name). iolab layout: <root>[/<owner>]/{file,dir}.iolab.<owner>.<n> -- as long as
 * mdtest's names on purpose: on ext4 a name's length sets how many entries share a directory
 * block, and a create scans its block (docs/benchmarks.md). mdtest layout: mdtest's names in
 * its tree; with a directory per rank the items of rank X live in the tree of rank X+stride
 * (mdtest's unique_chdir_dir). */
void iolab_md_item_path(const md_plan_t *p, int owner, uint64_t n, int dir, const char *suffix,
                      char *buf, size_t len)
{
    const char *kind = dir ? "dir" : "file";
    if (p->mdtest) {
        int tree_rank = (int)(((uint64_t)owner + p->stride) % (uint64_t)p->ranks);
        uint64_t node = n / (p->per_dir ? p->per_dir : 1);
        md_dir_name_t *d = p->dir_name;  /* the plan's cache, not the plan: const stays true */
        if (!d->valid || d->tree_rank != tree_rank || d->node != node) {
            iolab_md_tree_dir_path(p, tree_rank, node, d->path, sizeof d->path);
            d->valid = 1;
            d->tree_rank = tree_rank;
            d->node = node;
        }
        snprintf(buf, len, "%s/%s.mdtest.%d.%llu%s", d->path, kind, owner,
                 (unsigned long long)n, suffix);
    } else if (p->unique) {
        snprintf(buf, len, "%.3900s/%d/%s.iolab.%d.%llu%s", p->root, owner, kind, owner,
                 (unsigned long long)n, suffix);
    } else {
        snprintf(buf, len, "%.3900s/%s.iolab.%d.%llu%s", p->root, kind, owner,
                 (unsigned long long)n, suffix);
    }
}

int iolab_metadata_ops(const iolab_run_t *run, int *ops)
{
    int n = 0, phases = run->cfg.md_phases, mask = iolab_md_phase_mask(&run->cfg);
    int tree = run->cfg.md_layout == IOLAB_MD_LAYOUT_MDTEST;
    mask = mask < 0 ? MD_SEL_ALL : mask;
    if (tree && (mask & MD_SEL_CREATE))
        ops[n++] = IOLAB_MD_TREE_CREATE;  /* mdtest times its tree with -C */
    if (phases != IOLAB_MD_PHASES_FILES) {  /* mdtest's directory_test, its flags in order */
        if (mask & MD_SEL_CREATE)
            ops[n++] = IOLAB_MD_DIR_CREATE;
        if (mask & MD_SEL_STAT)
            ops[n++] = IOLAB_MD_DIR_STAT;
        if ((mask & MD_SEL_RENAME) && run->cfg.md_files > 1)  /* two or more, as mdtest */
            ops[n++] = IOLAB_MD_DIR_RENAME;
        if (mask & MD_SEL_REMOVE)
            ops[n++] = IOLAB_MD_DIR_REMOVE;
    }
    for (int k = 0; phases != IOLAB_MD_PHASES_DIRS && k < 4; k++)  /* create..remove */
        if (mask & (k == 3 ? MD_SEL_REMOVE : 1 << k))
            ops[n++] = IOLAB_MD_CREATE + k;
    if (tree && (mask & MD_SEL_REMOVE))
        ops[n++] = IOLAB_MD_TREE_REMOVE;  /* and its removal with -r */
    return n;
}
