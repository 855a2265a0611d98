/* The descriptor table and whole-process operations: flush before path calls, exec and
 * fork; the final flush at exit.
 *
 * Locking: `table` guards the slots and reference counts only; each file has `op` for the
 * program's calls.  Nobody takes `table` while holding an `op`, so the order is always
 * table -> (release) -> op and there is no cycle. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iolab_buffer.h"

static pthread_mutex_t table = PTHREAD_MUTEX_INITIALIZER;
static iolab_buffer_file_t *slots[IOLAB_BUFFER_MAX_FD];
static int max_fd = -1; /* highest slot ever used, bounds the whole-table walks */

int iolab_buffer_exiting;
int iolab_buffer_nwriting;
__thread int iolab_buffer_in_lib __attribute__((tls_model("initial-exec")));

static void unref(iolab_buffer_file_t *f)
{
    if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0)
        iolab_buffer_file_free(f);
}

/* The file in slot fd with a reference taken, or NULL. */
static iolab_buffer_file_t *ref_slot(int fd)
{
    if (fd < 0 || fd >= IOLAB_BUFFER_MAX_FD ||
        !__atomic_load_n(&slots[fd], __ATOMIC_ACQUIRE))
        return NULL; /* the common case for untracked descriptors: no lock */
    pthread_mutex_lock(&table);
    iolab_buffer_file_t *f = slots[fd];
    if (f)
        __atomic_add_fetch(&f->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&table);
    return f;
}

iolab_buffer_file_t *iolab_buffer_acquire(int fd)
{
    iolab_buffer_file_t *f = ref_slot(fd);
    if (!f)
        return NULL;
    pthread_mutex_lock(&f->op);
    if (f->closed) { /* closed by another thread while we waited */
        pthread_mutex_unlock(&f->op);
        unref(f);
        return NULL;
    }
    return f;
}

void iolab_buffer_release(iolab_buffer_file_t *f)
{
    pthread_mutex_unlock(&f->op);
    unref(f);
}

void iolab_buffer_table_add(iolab_buffer_file_t *f)
{
    if (f->fd < 0 || f->fd >= IOLAB_BUFFER_MAX_FD) {
        iolab_buffer_file_free(f);
        return;
    }
    f->refs = 1; /* the slot's reference */
    pthread_mutex_lock(&table);
    iolab_buffer_file_t *stale = slots[f->fd];
    __atomic_store_n(&slots[f->fd], f, __ATOMIC_RELEASE);
    if (f->fd > max_fd)
        max_fd = f->fd;
    pthread_mutex_unlock(&table);
    if (stale) { /* its descriptor was closed behind our back (raw syscall): drop it */
        pthread_mutex_lock(&stale->op);
        stale->closed = 1;
        pthread_mutex_unlock(&stale->op);
        unref(stale);
    }
}

/* Takes fd out of the table; returns the file with the slot's reference, or NULL. */
static iolab_buffer_file_t *take_slot(int fd)
{
    if (fd < 0 || fd >= IOLAB_BUFFER_MAX_FD || !__atomic_load_n(&slots[fd], __ATOMIC_ACQUIRE))
        return NULL;
    pthread_mutex_lock(&table);
    iolab_buffer_file_t *f = slots[fd];
    slots[fd] = NULL;
    pthread_mutex_unlock(&table);
    return f;
}

int iolab_buffer_forget(int fd)
{
    iolab_buffer_file_t *f = take_slot(fd);
    if (!f)
        return 0;
    pthread_mutex_lock(&f->op);
    int rc = iolab_buffer_sync(f, 1);
    f->closed = 1;
    iolab_buffer_stats_merge(f->path, &f->st);
    pthread_mutex_unlock(&f->op);
    unref(f);
    return rc;
}

int iolab_buffer_close(int fd)
{
    iolab_buffer_file_t *f = take_slot(fd);
    if (!f)
        return IOLAB_REAL(close)(fd) == 0 ? 0 : -errno;
    pthread_mutex_lock(&f->op);
    double t0 = iolab_buffer_now();
    int rc = iolab_buffer_sync(f, 1);
    int r = IOLAB_REAL(close)(fd);
    int err = errno;
    f->st.calls[IOLAB_OP_CLOSE]++;
    f->st.seconds[IOLAB_OP_CLOSE] += iolab_buffer_now() - t0;
    f->closed = 1;
    iolab_buffer_stats_merge(f->path, &f->st);
    pthread_mutex_unlock(&f->op);
    unref(f);
    if (rc < 0)
        return rc; /* the delayed error wins: the descriptor is closed all the same */
    return r == 0 ? 0 : -err;
}

void iolab_buffer_sync_fd(int fd)
{
    iolab_buffer_file_t *f = iolab_buffer_acquire(fd);
    if (f) {
        iolab_buffer_sync(f, 0);
        iolab_buffer_release(f);
    }
}

void iolab_buffer_dup(int oldfd, int newfd)
{
    iolab_buffer_file_t *f = iolab_buffer_acquire(oldfd);
    if (!f)
        return;
    iolab_buffer_sync(f, 0);
    f->nobuf = 1;
    iolab_buffer_rule_t rule = {.size = f->size, .count = f->count, .prefetch = f->prefetch};
    iolab_buffer_file_t *g = newfd >= 0 ? iolab_buffer_file_new(newfd, f->path, &rule) : NULL;
    if (g) /* the copy's table line says why the original chose its read-ahead */
        memcpy(g->st.readahead_why, f->st.readahead_why, sizeof g->st.readahead_why);
    iolab_buffer_release(f);
    if (g) {
        g->nobuf = 1;
        g->kpos = -1;
        iolab_buffer_table_add(g);
    }
}

void iolab_buffer_detach(int fd)
{
    iolab_buffer_file_t *f = iolab_buffer_acquire(fd);
    if (f) {
        iolab_buffer_sync(f, 0);
        f->nobuf = 1;
        iolab_buffer_release(f);
    }
}

/* Applies fn to every file, one at a time, holding its op lock. */
static void for_each(void (*fn)(iolab_buffer_file_t *))
{
    for (int fd = 0; fd <= __atomic_load_n(&max_fd, __ATOMIC_ACQUIRE); fd++) {
        iolab_buffer_file_t *f = iolab_buffer_acquire(fd);
        if (f) {
            fn(f);
            iolab_buffer_release(f);
        }
    }
}

static void drain_one(iolab_buffer_file_t *f)
{
    iolab_buffer_drain(f, 0);
}

static void sync_one(iolab_buffer_file_t *f)
{
    iolab_buffer_sync(f, 0);
}

void iolab_buffer_flush_all(void)
{
    if (__atomic_load_n(&iolab_buffer_nwriting, __ATOMIC_ACQUIRE) > 0)
        for_each(drain_one);
}

void iolab_buffer_sync_all(void)
{
    for_each(sync_one);
}

void iolab_buffer_idle_flush(void)
{
    for (int fd = 0; fd <= __atomic_load_n(&max_fd, __ATOMIC_ACQUIRE); fd++) {
        iolab_buffer_file_t *f = ref_slot(fd);
        if (!f)
            continue;
        /* trylock: the worker must never wait for a program thread (which may be waiting
         * for the worker); a busy file is being written anyway. */
        if (pthread_mutex_trylock(&f->op) == 0) {
            if (!f->closed)
                iolab_buffer_idle_flush_file(f);
            pthread_mutex_unlock(&f->op);
        }
        unref(f);
    }
}

void iolab_buffer_check_shared(iolab_buffer_file_t *f)
{
    int shared = 0;
    for (int fd = 0; fd <= __atomic_load_n(&max_fd, __ATOMIC_ACQUIRE); fd++) {
        if (fd == f->fd)
            continue;
        iolab_buffer_file_t *g = iolab_buffer_acquire(fd);
        if (!g)
            continue;
        if (g->dev == f->dev && g->ino == f->ino) {
            iolab_buffer_sync(g, 0);
            g->nobuf = 1;
            shared = 1;
        }
        iolab_buffer_release(g);
    }
    if (shared) {
        iolab_buffer_file_t *self = iolab_buffer_acquire(f->fd);
        if (self) {
            self->nobuf = 1;
            iolab_buffer_release(self);
        }
    }
}

/* At exit: write everything, report what failed (nobody is left to return it to), keep
 * the statistics.  Later calls pass through (iolab_buffer_exiting). */
static void exit_one(iolab_buffer_file_t *f)
{
    int rc = iolab_buffer_sync(f, 1);
    if (rc < 0) {
        char line[640];
        int n = snprintf(line, sizeof line,
                         "iolab-buffer: a delayed write to %s failed: %s (data lost)\n",
                         f->path, strerror(-rc));
        if (n > 0)
            IOLAB_REAL(write)(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
    uint64_t calls = 0;
    for (int i = 0; i < IOLAB_OP_N; i++)
        calls += f->st.calls[i];
    if (calls) /* e.g. a child after fork that never touched the file: no empty table */
        iolab_buffer_stats_merge(f->path, &f->st);
    memset(&f->st, 0, sizeof f->st);
    f->st.buffer_size = f->size;
}

void iolab_buffer_exit_flush(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    int saved = iolab_buffer_in_lib;
    iolab_buffer_in_lib = 1;
    __atomic_store_n(&iolab_buffer_exiting, 1, __ATOMIC_RELEASE);
    for_each(exit_one);
    iolab_buffer_stats_print();
    iolab_buffer_in_lib = saved;
}

/* fork: the child must not inherit buffered data (it would be written twice) nor a
 * half-held lock.  Sync everything and hold every lock across the fork. */
static void atfork_prepare(void)
{
    iolab_buffer_in_lib = 1;
    pthread_mutex_lock(&table);
    for (int fd = 0; fd <= max_fd; fd++)
        if (slots[fd]) {
            /* Holding op, no thread can queue more for this file: after the sync its
             * buffers are idle, and the worker holds none of them across the fork. */
            pthread_mutex_lock(&slots[fd]->op);
            iolab_buffer_sync(slots[fd], 0);
            pthread_mutex_lock(&slots[fd]->mu);
        }
    iolab_buffer_worker_atfork_prepare();
}

static void atfork_release(int child)
{
    if (child)
        iolab_buffer_worker_atfork_child();
    else
        iolab_buffer_worker_atfork_parent();
    for (int fd = 0; fd <= max_fd; fd++) {
        iolab_buffer_file_t *f = slots[fd];
        if (!f)
            continue;
        f->kpos = -1; /* parent and child now share the offset: ask the kernel */
        f->read_next = f->pread_next = -1;
        /* A descriptor both processes hold shares one offset (and file): neither may keep
         * its own view.  The child never buffers what it inherited; the parent stops for
         * descriptors the child keeps even if it execs (no FD_CLOEXEC). */
        if (child || !(IOLAB_REAL(fcntl)(fd, F_GETFD) & FD_CLOEXEC))
            f->nobuf = 1;
        if (child) {
            memset(&f->st, 0, sizeof f->st);
            f->st.buffer_size = f->size;
        }
        pthread_mutex_unlock(&f->mu);
        pthread_mutex_unlock(&f->op);
    }
    pthread_mutex_unlock(&table);
    iolab_buffer_in_lib = 0;
}

static void atfork_parent(void)
{
    atfork_release(0);
}

static void atfork_child(void)
{
    atfork_release(1);
}

static void at_exit(void)
{
    /* exit() would flush stdio after us; do it first so stdio's last chunks are buffered
     * and counted like the others.  (Not on the signal path: a default-action death does
     * not flush stdio without the library either.) */
    int saved = errno;
    fflush(NULL);
    errno = saved;
    iolab_buffer_exit_flush();
}

__attribute__((constructor)) static void iolab_buffer_init(void)
{
    iolab_buffer_resolve();
    const char *spec = getenv("IOLAB_BUFFER");
    if (!spec)
        return; /* loaded but not asked for: pass everything through */
    char err[320];
    iolab_buffer_config_t cfg;
    if (iolab_buffer_config_parse(spec, &cfg, err, sizeof err) < 0) {
        char line[512];
        int n = snprintf(line, sizeof line,
                         "iolab-buffer: IOLAB_BUFFER: %s; buffering is off for this run\n", err);
        if (n > 0)
            IOLAB_REAL(write)(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        return;
    }
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    atexit(at_exit);
    iolab_buffer_cfg = cfg;
    iolab_buffer_signals_init();
    iolab_buffer_stdio_init();
}

__attribute__((destructor)) static void iolab_buffer_fini(void)
{
    if (iolab_buffer_cfg.enabled)
        iolab_buffer_exit_flush();
}
