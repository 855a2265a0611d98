/* The one wrapper skeleton, shared by wrappers*.c and stdio.c.
 *
 *   iolab_call_t c;
 *   if (!iolab_call_begin(&c, fd)) return IOLAB_REAL(name)(args);    // not ours: pass on
 *   return iolab_call_end(&c, IOLAB_OP_x, iolab_buffer_x(c.f, ...)); // ours: core does it
 *
 * begin: reentrancy guard, errno saved, descriptor looked up and locked, clock started.
 * end: statistics, unlock, deferred signal, errno restored (or set from the core's -errno).
 */
#ifndef IOLAB_BUFFER_WRAPPERS_H
#define IOLAB_BUFFER_WRAPPERS_H

#include <errno.h>

#include "iolab_buffer.h"

typedef struct {
    iolab_buffer_file_t *f;
    int saved_errno;
    double t0;
} iolab_call_t;

static inline int iolab_call_begin(iolab_call_t *c, int fd)
{
    if (iolab_buffer_in_lib || !iolab_buffer_cfg.enabled)
        return 0;
    c->saved_errno = errno;
    iolab_buffer_in_lib = 1;
    c->f = iolab_buffer_acquire(fd);
    if (!c->f) {
        iolab_buffer_in_lib = 0;
        errno = c->saved_errno;
        return 0;
    }
    c->t0 = iolab_buffer_now();
    return 1;
}

/* Leaves the library: runs a signal that arrived meanwhile, restores errno. */
static inline void iolab_call_leave(int saved_errno)
{
    iolab_buffer_in_lib = 0;
    if (iolab_buffer_pending_signal)
        iolab_buffer_signal_deferred();
    errno = saved_errno;
}

static inline int64_t iolab_call_end(iolab_call_t *c, iolab_buffer_op_t op, int64_t r)
{
    iolab_buffer_stats_t *st = &c->f->st;
    st->calls[op]++;
    st->seconds[op] += iolab_buffer_now() - c->t0;
    if (r > 0 && (op == IOLAB_OP_READ || op == IOLAB_OP_WRITE))
        st->bytes[op] += (uint64_t)r;
    iolab_buffer_release(c->f);
    iolab_call_leave(r < 0 ? (int)-r : c->saved_errno);
    return r < 0 ? -1 : r;
}

/* For calls that only need the descriptor synced (or detached) before the real call. */
#define IOLAB_SYNC_THEN(fd, real_call) \
    do { \
        if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) { \
            int saved_ = errno; \
            iolab_buffer_in_lib = 1; \
            iolab_buffer_sync_fd(fd); \
            iolab_call_leave(saved_); \
        } \
        return real_call; \
    } while (0)

#define IOLAB_DETACH_THEN(fd, real_call) \
    do { \
        if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) { \
            int saved_ = errno; \
            iolab_buffer_in_lib = 1; \
            iolab_buffer_detach(fd); \
            iolab_call_leave(saved_); \
        } \
        return real_call; \
    } while (0)

/* Whole-process flush (drain: write streams only; sync: also drop read-ahead and put every
 * kernel offset right) before a call that looks at files by path or starts a program. */
#define IOLAB_PROCESS_THEN(fn, real_call) \
    do { \
        if (!iolab_buffer_in_lib && iolab_buffer_cfg.enabled) { \
            int saved_ = errno; \
            iolab_buffer_in_lib = 1; \
            fn(); \
            iolab_call_leave(saved_); \
        } \
        return real_call; \
    } while (0)

/* After a successful open of path: start buffering fd when a rule matches. */
void iolab_buffer_opened(int fd, const char *path, int flags, double t0);

#endif
