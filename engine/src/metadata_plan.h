/* iolab-bench: the metadata run's plan (metadata_plan.c), shared with its phases
 * (metadata.c): what each rank makes, in which order, under which names (mdtest's or
 * iolab's), and the record of what this run made (a cleanup removes only that). */
#ifndef IOLAB_METADATA_PLAN_H
#define IOLAB_METADATA_PLAN_H

#include <stdint.h>

#include "backend.h"
#include "run.h"

#define IO500_HARD_FILE_BYTES 3901
#define MD_MAX_DEPTH 32
#define MD_MAX_TREE_DIRS 10000000ULL
#define MD_DIR_MODE 0775   /* mdtest's DIRMODE, for its tree, test and item directories */
#define MD_FILE_MODE 0664  /* mdtest's POSIX_Create mode */

/* The tree directory iolab_md_item_path named last: items come in runs from one directory,
 * and mdtest names the directory once per run, then each item with one sprintf (naming it
 * again for every item cost two more snprintf per timed call). */
typedef struct md_dir_name {
    int valid, tree_rank;
    uint64_t node;
    char path[4400];
} md_dir_name_t;

typedef struct md_plan {
    char root[4096];     /* iolab layout: <path>.md; mdtest layout: <path> (mdtest's -d) */
    char testdir[4200];  /* mdtest layout: <root>/test-dir.<rep>-0 (mdtest's testdir) */
    int unique, mdtest, rank, ranks, depth, leaf_only, made_root, rep, loops;
    int collective;              /* mdtest -c: rank 0 makes and removes for every rank */
    uint64_t files, size;        /* items per rank (after a stonewall: the worn-out count) */
    uint64_t per_dir, branch;    /* items per tree directory, subdirectories per directory */
    uint64_t tree_dirs;          /* directories of one tree (1 without a tree) */
    uint64_t leaf_offset;        /* the first item number (leaf-only trees skip the inner) */
    uint64_t stride;             /* mdtest -N */
    uint64_t *create_order;      /* item numbers, mdtest's tree walk (NULL: 0, 1, ...) */
    uint64_t *stat_order;        /* stat and read order (NULL: leaf_offset + 0, 1, ...) */
    uint64_t *tree_pre, *tree_post;  /* tree directories, parents first / children first */
    /* what this run made (a cleanup after a failure removes these and nothing else: an
     * earlier line's items, or the user's, stay): files and directories by call index in
     * the creation order, tree directories by node, test directories by loop (rank 0) */
    unsigned char *made_files, *made_dirs, *made_tree;
    uint64_t made_testdirs;
    int made_own;        /* iolab layout, a directory per rank: <root>/<rank> */
    const iolab_md_calls_t *io;  /* the backend's metadata calls (posix; null: none made) */
    int checks_stat;     /* a stat tells the size and kind (not null's, as IOR's DUMMY) */
    md_dir_name_t *dir_name;  /* mdtest layout; invalid after testdir changes */
} md_plan_t;


/* The phases a run makes, as mdtest's -C -T -E -U -r flags: --md-only's words, or
 * --md-step's one file phase, or (neither) all of them. */
enum { MD_SEL_CREATE = 1, MD_SEL_STAT = 2, MD_SEL_READ = 4, MD_SEL_RENAME = 8,
       MD_SEL_REMOVE = 16, MD_SEL_ALL = 31 };

/* The --md-only / --md-step phases as MD_SEL_* bits, or -1 for a word that is not one. */
int iolab_md_phase_mask(const iolab_cfg_t *c);
/* Fills *p from the run (every field; the lists are allocated, free with
 * iolab_md_plan_free). Returns 0, or ENOMEM. */
int iolab_md_plan_make(const iolab_run_t *run, md_plan_t *p);
void iolab_md_plan_free(md_plan_t *p);
/* Records call i (item n of `owner`) of op as made or removed by this run. */
void iolab_md_note_made(md_plan_t *p, int op, int owner, uint64_t i, uint64_t n);
/* Whose items this rank works on in a phase (mdtest -N), and the i-th call's item. */
int iolab_md_owner(const md_plan_t *p, int op);
uint64_t iolab_md_item_at(const md_plan_t *p, int op, uint64_t i);
/* The path of a tree directory, and of item n (a file, or with dir a directory). */
void iolab_md_tree_dir_path(const md_plan_t *p, int tree_rank, uint64_t node, char *buf,
                            size_t len);
void iolab_md_item_path(const md_plan_t *p, int owner, uint64_t n, int dir, const char *suffix,
                        char *buf, size_t len);
/* p->testdir changed (a repetition, a directory loop): the named directory is stale. */
void iolab_md_testdir_changed(md_plan_t *p);

#endif
