/* The signals whose default action ends the process without a crash (SIGTERM, SIGINT,
 * SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1/2, SIGXCPU, SIGVTALRM, SIGPROF): flush before
 * the process dies, since without the library those bytes would be in the file.  (Crash
 * signals, SIGSEGV and the like, are left alone: the state may be corrupt; at most the
 * kill -9 bound is lost.)
 *
 * While the program leaves such a signal at its default action, our handler is installed:
 * it flushes everything and re-raises the signal with the default action, so the process
 * dies the way it would have (same status for the parent).  When the program installs its
 * own handler, we keep ours in the kernel and call the program's from it (the program's
 * view through sigaction/signal is its own handler).  A signal arriving while the thread
 * is inside the library (holding a lock) is handled when the library call returns. */
#include <errno.h>
#include <string.h>

#include "iolab_buffer.h"

static const int handled[] = {SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,   SIGPIPE, SIGALRM,
                              SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF};
static struct sigaction prog_act[NSIG]; /* what the program asked for */
static int managed[NSIG];               /* our handler is the kernel's */
static siginfo_t pending_info;
volatile sig_atomic_t iolab_buffer_pending_signal;

static int is_handled(int sig)
{
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        if (handled[i] == sig)
            return 1;
    return 0;
}

static void handle_now(int sig, siginfo_t *info, void *ctx)
{
    struct sigaction act = prog_act[sig];
    if (act.sa_handler == SIG_IGN)
        return;
    if (act.sa_handler == SIG_DFL) {
        iolab_buffer_exit_flush();
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        IOLAB_REAL(sigaction)(sig, &dfl, NULL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        raise(sig); /* dies here, with the status the parent expects */
        return;
    }
    if (act.sa_flags & SA_RESETHAND) {
        memset(&prog_act[sig], 0, sizeof prog_act[sig]);
        prog_act[sig].sa_handler = SIG_DFL;
    }
    if (act.sa_flags & SA_SIGINFO)
        act.sa_sigaction(sig, info, ctx);
    else
        act.sa_handler(sig);
}

static void on_signal(int sig, siginfo_t *info, void *ctx)
{
    int saved = errno;
    if (iolab_buffer_in_lib) {
        if (info)
            pending_info = *info;
        iolab_buffer_pending_signal = sig;
    } else {
        handle_now(sig, info, ctx);
    }
    errno = saved;
}

void iolab_buffer_signal_deferred(void)
{
    int sig = iolab_buffer_pending_signal;
    iolab_buffer_pending_signal = 0;
    if (sig > 0) {
        int saved = errno;
        siginfo_t info = pending_info;
        handle_now(sig, &info, NULL);
        errno = saved;
    }
}

/* Installs our handler for sig with the program's mask and flags. */
static int install(int sig, const struct sigaction *prog)
{
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_signal;
    ours.sa_mask = prog->sa_mask;
    ours.sa_flags = (prog->sa_flags & ~(SA_RESETHAND | SA_SIGINFO)) | SA_SIGINFO;
    if (prog->sa_handler == SIG_DFL)
        ours.sa_flags |= SA_RESTART; /* the program expects no EINTR from a default action */
    return IOLAB_REAL(sigaction)(sig, &ours, NULL);
}

void iolab_buffer_signals_init(void)
{
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) {
        int sig = handled[i];
        struct sigaction cur;
        if (IOLAB_REAL(sigaction)(sig, NULL, &cur) != 0)
            continue;
        prog_act[sig] = cur;
        if (cur.sa_handler == SIG_DFL && install(sig, &cur) == 0)
            managed[sig] = 1;
    }
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!iolab_buffer_cfg.enabled || sig <= 0 || sig >= NSIG || !is_handled(sig) ||
        !managed[sig])
        return IOLAB_REAL(sigaction)(sig, act, old);
    struct sigaction prev = prog_act[sig];
    if (act) {
        if (act->sa_handler == SIG_IGN) { /* ignored: nothing will die, hand it over */
            int r = IOLAB_REAL(sigaction)(sig, act, NULL);
            if (r != 0)
                return r;
            managed[sig] = 0;
        } else if (install(sig, act) != 0) {
            return -1;
        }
        prog_act[sig] = *act;
    }
    if (old)
        *old = prev;
    return 0;
}

sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART; /* glibc's signal() has BSD semantics */
    sigemptyset(&act.sa_mask);
    if (sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
