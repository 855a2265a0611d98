/* libiolab-trace: a fatal SIGTERM/SIGINT still leaves a (partial) profile, and the program
 * cannot tell.
 *
 * At start-up the tracer puts its handler on SIGTERM and SIGINT when their disposition is the
 * default. The handler writes the profile and re-raises the signal with the default action,
 * so the process ends as it would have. sigaction() and signal() are intercepted for these
 * two signals so that the program sees the disposition it would have without the tracer
 * (CPython, for one, installs its KeyboardInterrupt handler only over SIG_DFL); once the
 * program sets its own disposition, the tracer's handler is gone and the profile is written
 * at exit as usual.
 */
#include "iolab_trace_core.h"
#include "iolab_wrap.h"

#include <stdatomic.h>

static struct sigaction saved[2];   /* disposition the program would see */
static _Atomic int ours[2];         /* our handler is installed */

static inline int slot(int sig) { return sig == SIGTERM ? 0 : sig == SIGINT ? 1 : -1; }

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    int saved_errno = errno;
    iolab_trace_flush(sig == SIGINT ? "SIGINT" : "SIGTERM", 1);
    atomic_store(&ours[slot(sig)], 0);
    IOLAB_REAL(sigaction)(sig, &saved[slot(sig)], NULL);
    errno = saved_errno;
    raise(sig); /* delivered when this handler returns: the default action, as without us */
}

static void install(int sig)
{
    struct sigaction cur, sa;
    int s = slot(sig);
    if (IOLAB_REAL(sigaction)(sig, NULL, &cur) != 0)
        return;
    if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
        return; /* ignored or handled by someone already: theirs */
    saved[s] = cur;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (IOLAB_REAL(sigaction)(sig, &sa, NULL) == 0)
        atomic_store(&ours[s], 1);
}

void iolab_signals_install(void)
{
    install(SIGTERM);
    install(SIGINT);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int s = slot(sig);
    if (s < 0 || !atomic_load(&ours[s]))
        return IOLAB_REAL(sigaction)(sig, act, old);
    struct sigaction mine = saved[s];
    int ret = IOLAB_REAL(sigaction)(sig, act, act ? NULL : old);
    if (ret == 0 && act)
        atomic_store(&ours[s], 0); /* the program's disposition from now on */
    if (ret == 0 && old)
        *old = mine;
    return ret;
}

sighandler_t signal(int sig, sighandler_t handler)
{
    int s = slot(sig);
    if (s < 0 || !atomic_load(&ours[s]))
        return IOLAB_REAL(signal)(sig, handler);
    sighandler_t ret = IOLAB_REAL(signal)(sig, handler);
    if (ret == SIG_ERR)
        return ret;
    atomic_store(&ours[s], 0);
    return saved[s].sa_handler;
}
