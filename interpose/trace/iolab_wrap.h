/* libiolab-trace: the one wrapper skeleton and the one real-symbol lookup.
 *
 * Every intercepted call is written as
 *     ret_t name(params) { IOLAB_WRAP(ret_t, name, (args), want, record); }
 * which: passes the call straight through when tracing is off, when the tracer itself is
 * calling, or when `want` says the call cannot concern a traced file; otherwise times the
 * real call, runs `record` (a small static inline function; it sees `ret`, `t0_`, `t1_`)
 * with the reentrancy guard held, and restores errno before returning `ret`. The guard is
 * not held during the real call: what a library does below (MPI-IO's POSIX calls) is traced.
 */
#ifndef IOLAB_WRAP_H
#define IOLAB_WRAP_H

#include "iolab_trace.h"

#include <aio.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

/* For every symbol: the pointer to the real function and its lazy getter. */
#define IOLAB_SYM(ret, name, params)                                                         \
    extern ret(*iolab_real_##name) params;                                                   \
    static inline __typeof__(iolab_real_##name) iolab_get_##name(void)                       \
    {                                                                                        \
        if (__builtin_expect(iolab_real_##name == NULL, 0))                                  \
            iolab_real_##name = (__typeof__(iolab_real_##name))iolab_core_resolve(#name);    \
        return iolab_real_##name;                                                            \
    }
#include "iolab_trace_symbols.def"
#undef IOLAB_SYM

/* The next definition of `name` after this library (libc, or libiolab-buffer.so). */
#define IOLAB_REAL(name) (iolab_get_##name())

#define IOLAB_WRAP(type, name, args, want, record)                                           \
    do {                                                                                     \
        if (!(want) || !iolab_core_ready())                                                  \
            return IOLAB_REAL(name) args;                                                    \
        double t0_ = iolab_now();                                                            \
        type ret = IOLAB_REAL(name) args;                                                    \
        double t1_ = iolab_now();                                                            \
        int errno_ = errno;                                                                  \
        iolab_core_busy = 1;                                                                 \
        (void)t0_;                                                                           \
        (void)t1_;                                                                           \
        record;                                                                              \
        iolab_core_leave();                                                                  \
        errno = errno_;                                                                      \
        return ret;                                                                          \
    } while (0)

/* The skeleton of the data calls (read, write, fread, fwrite...), whose record `rec` the
 * wrapper looked up before (non-NULL only while tracing) and whose `record` step only updates
 * memory: no errno to save and restore, no second "tracing?" test. The guard stays, so that
 * a signal handler's I/O during the update passes through instead of updating the same
 * record (unlocked in a single-threaded process) at the same time. A record exists only
 * after start-up resolved every real symbol (iolab_resolve_all), so the traced branch calls
 * the pointer without the lazy getter's NULL test. */
#define IOLAB_WRAP_IO(type, name, args, rec, record)                                          \
    do {                                                                                     \
        if (!(rec) || iolab_core_busy)                                                       \
            return IOLAB_REAL(name) args;                                                    \
        const int tsc_ = iolab_core_use_tsc; /* not read again after the call */             \
        double t0_ = iolab_now_with(tsc_);                                                   \
        type ret = iolab_real_##name args;                                                   \
        double t1_ = iolab_now_with(tsc_);                                                   \
        iolab_core_busy = 1;                                                                 \
        record;                                                                              \
        iolab_core_leave();                                                                  \
        return ret;                                                                          \
    } while (0)

/* The same for functions returning nothing. */
#define IOLAB_WRAP_VOID(name, args, want, record)                                            \
    do {                                                                                     \
        if (!(want) || !iolab_core_ready()) {                                                \
            IOLAB_REAL(name) args;                                                           \
            return;                                                                          \
        }                                                                                    \
        double t0_ = iolab_now();                                                            \
        IOLAB_REAL(name) args;                                                               \
        double t1_ = iolab_now();                                                            \
        int errno_ = errno;                                                                  \
        (void)t0_;                                                                           \
        (void)t1_;                                                                           \
        iolab_core_busy = 1;                                                                 \
        record;                                                                              \
        iolab_core_leave();                                                                  \
        errno = errno_;                                                                      \
    } while (0)

#endif
