/* libiolab-trace: a process killed by a signal still leaves its (partial) profile, marked
 * with the signal, and the program cannot tell the tracer is there.
 *
 * Signals: the crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) and the terminations
 * (SIGTERM, SIGINT: mpirun and Slurm end the other ranks of a failed job with SIGTERM).
 * At start-up the tracer's handler takes every one of them that is not ignored. The
 * disposition the program asks for (sigaction(), signal()) is kept here, virtually, and is
 * what the program reads back; the tracer's handler stays installed underneath, with the
 * program's mask and flags, and does what the kernel would have done:
 *  - the program's handler is a function: call it (the signal is the program's business:
 *    no profile now; if it ends the process, exit or a later fatal signal writes it);
 *    SA_RESETHAND is honoured by dropping back to the default afterwards;
 *  - the default action (it kills): write the profile from the handler, marked partial and
 *    ended by the signal, put the default action back and re-raise, so the process ends as
 *    it would have (same signal, same exit status, same core dump);
 *  - SIG_IGN: handed to the kernel for real, the tracer's handler is gone.
 * The write is async-signal-safe as far as it can be: a pre-allocated 64 KiB buffer, no
 * allocation, only write/open/rename, record locks only tried (writer.c), done once.
 */
#include "iolab_trace_core.h"
#include "iolab_wrap.h"

#include <stdatomic.h>

static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
static const char *const fatal_names[] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL",
                                          "SIGABRT", "SIGTERM", "SIGINT"};
#define NSIGS ((int)(sizeof fatal_sigs / sizeof fatal_sigs[0]))

static struct sigaction prog[NSIGS]; /* the disposition the program asked for */
static _Atomic int ours[NSIGS];      /* our handler is installed underneath */

static inline int slot(int sig)
{
    for (int i = 0; i < NSIGS; i++)
        if (fatal_sigs[i] == sig)
            return i;
    return -1;
}

static inline int is_function(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction != NULL
                                       : sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int s = slot(sig);
    if (s < 0)
        return;
    struct sigaction theirs = prog[s];
    if (is_function(&theirs)) {
        if (theirs.sa_flags & SA_RESETHAND) { /* one-shot, as the kernel would have done */
            memset(&prog[s], 0, sizeof prog[s]);
            prog[s].sa_handler = SIG_DFL;
        }
        if (theirs.sa_flags & SA_SIGINFO)
            theirs.sa_sigaction(sig, si, uc);
        else
            theirs.sa_handler(sig);
        return;
    }
    /* The default action: this signal ends the process. */
    int saved_errno = errno;
    iolab_trace_flush(fatal_names[s], 1);
    atomic_store(&ours[s], 0);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    IOLAB_REAL(sigaction)(sig, &dfl, NULL);
    errno = saved_errno;
    /* Pending until this handler returns; a fault re-executed after the return ends the
     * process the same way (SIGSEGV from a bad address, SIGFPE from a division). */
    raise(sig);
}

/* Put our handler underneath with the mask and the flags that change how the program's
 * handler runs (alternate stack, no deferral, restart of system calls). */
static int put_ours(int sig, const struct sigaction *like)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | (like ? like->sa_flags & (SA_ONSTACK | SA_NODEFER | SA_RESTART)
                                     : SA_RESTART);
    if (like)
        sa.sa_mask = like->sa_mask;
    else
        sigemptyset(&sa.sa_mask);
    return IOLAB_REAL(sigaction)(sig, &sa, NULL);
}

static void install(int sig)
{
    struct sigaction cur;
    int s = slot(sig);
    if (IOLAB_REAL(sigaction)(sig, NULL, &cur) != 0)
        return;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
        return; /* ignored (nohup, a parent's choice): nothing will end the process */
    prog[s] = cur;
    if (put_ours(sig, is_function(&cur) ? &cur : NULL) == 0)
        atomic_store(&ours[s], 1);
}

void iolab_signals_install(void)
{
    for (int i = 0; i < NSIGS; i++)
        install(fatal_sigs[i]);
}

/* The program's sigaction: kept here (and read back from here) while our handler is
 * underneath; SIG_IGN goes to the kernel and our handler steps aside. */
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int s = slot(sig);
    if (s < 0 || !atomic_load(&ours[s]))
        return IOLAB_REAL(sigaction)(sig, act, old);
    struct sigaction was = prog[s];
    if (act) {
        int ignore = !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN;
        int ret = ignore ? IOLAB_REAL(sigaction)(sig, act, NULL)
                         : put_ours(sig, is_function(act) ? act : NULL);
        if (ret != 0)
            return ret;
        if (ignore)
            atomic_store(&ours[s], 0);
        prog[s] = *act;
    }
    if (old)
        *old = was;
    return 0;
}

sighandler_t signal(int sig, sighandler_t handler)
{
    int s = slot(sig);
    if (s < 0 || !atomic_load(&ours[s]))
        return IOLAB_REAL(signal)(sig, handler);
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    /* glibc's signal(): BSD semantics, restarted system calls, the signal itself blocked. */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    /* sa_handler and sa_sigaction share their storage: the same pointer either way */
    return old.sa_handler;
}
