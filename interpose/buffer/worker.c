/* The background thread: writes full buffers behind the program and fills read-ahead
 * buffers before the program asks.  One thread for the process, fed by one FIFO queue, so
 * the buffers of a file reach the disk in the order the program wrote them (this keeps
 * O_APPEND streams and overlapping restarts right).  It blocks every signal, so a handler
 * that flushes never runs on it and waits for itself. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "iolab_buffer.h"

#define IOLAB_BUFFER_IDLE_S 1 /* seconds between idle checks */

static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcv; /* on CLOCK_MONOTONIC, set up in start() */
static iolab_buffer_buf_t *qhead, *qtail;
static int started;

static void account(iolab_buffer_file_t *f, iolab_buffer_op_t op, int64_t bytes, double t0,
                    uint64_t calls)
{
    f->st.calls[op] += calls;
    f->st.seconds[op] += iolab_buffer_now() - t0;
    f->st.bytes[op] += (uint64_t)bytes;
}

/* pwrite() until the whole buffer is written; a short write is retried so that the kernel
 * reports why (ENOSPC, EFBIG...). */
static void do_write(iolab_buffer_buf_t *b)
{
    iolab_buffer_file_t *f = b->file;
    pthread_mutex_lock(&f->mu);
    int drop = f->werr != 0; /* after a failure, later data would land after a hole */
    pthread_mutex_unlock(&f->mu);
    size_t done = 0;
    int err = 0;
    uint64_t calls = 0;
    double t0 = iolab_buffer_now();
    while (!drop && done < b->len) {
        ssize_t r = IOLAB_REAL(pwrite)(f->fd, b->data + done, b->len - done,
                                       b->off + (int64_t)done);
        calls++;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            err = r < 0 ? errno : EIO;
            break;
        }
        done += (size_t)r;
    }
    pthread_mutex_lock(&f->mu);
    account(f, IOLAB_OP_SYSWRITE, (int64_t)done, t0, calls);
    if (err && !f->werr)
        __atomic_store_n(&f->werr, err, __ATOMIC_RELEASE);
    b->state = IOLAB_BUF_FREE;
    f->inflight--;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* pread() until the buffer is full, EOF or an error (kept in b->err for the reader), in
 * chunks: after each, the bytes so far are published (b->len) so the reader can start on
 * them, and a cancelled fill (the program left the stream) stops early. */
static void do_read(iolab_buffer_buf_t *b)
{
    iolab_buffer_file_t *f = b->file;
    pthread_mutex_lock(&f->mu);
    int cancelled = b->state == IOLAB_BUF_CANCELLED;
    pthread_mutex_unlock(&f->mu);
    size_t done = 0;
    int err = 0;
    uint64_t calls = 0;
    size_t chunk = f->size / 4 < IOLAB_BUFFER_READ_CHUNK_MAX ? f->size / 4
                                                             : IOLAB_BUFFER_READ_CHUNK_MAX;
    if (chunk < 512)
        chunk = 512;
    double t0 = iolab_buffer_now();
    while (!cancelled && done < b->cap) {
        size_t want = b->cap - done < chunk ? b->cap - done : chunk;
        ssize_t r = IOLAB_REAL(pread)(f->fd, b->data + done, want, b->off + (int64_t)done);
        calls++;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            err = errno;
        if (r <= 0)
            break;
        done += (size_t)r;
        pthread_mutex_lock(&f->mu);
        cancelled = b->state == IOLAB_BUF_CANCELLED;
        if (!cancelled) {
            b->len = done;
            pthread_cond_broadcast(&f->cv);
        }
        pthread_mutex_unlock(&f->mu);
    }
    pthread_mutex_lock(&f->mu);
    account(f, IOLAB_OP_SYSREAD, (int64_t)done, t0, calls);
    if (b->state == IOLAB_BUF_CANCELLED) {
        b->state = IOLAB_BUF_FREE;
    } else {
        b->len = done;
        b->err = err;
        b->state = IOLAB_BUF_FILLED;
    }
    f->inflight--;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static void process(iolab_buffer_buf_t *b)
{
    if (b->state == IOLAB_BUF_WRITING)
        do_write(b);
    else
        do_read(b);
}

static void *worker_main(void *arg)
{
    (void)arg;
    iolab_buffer_in_lib = 1; /* its calls never come back into the wrappers' logic */
    for (;;) {
        pthread_mutex_lock(&qmu);
        while (!qhead) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += IOLAB_BUFFER_IDLE_S;
            if (pthread_cond_timedwait(&qcv, &qmu, &until) == ETIMEDOUT && !qhead) {
                pthread_mutex_unlock(&qmu);
                iolab_buffer_idle_flush(); /* may queue buffers: without qmu held */
                pthread_mutex_lock(&qmu);
            }
        }
        iolab_buffer_buf_t *b = qhead;
        qhead = b->qnext;
        if (!qhead)
            qtail = NULL;
        pthread_mutex_unlock(&qmu);
        process(b);
    }
    return NULL;
}

/* Starts the thread with every signal blocked; the caller holds qmu. */
static int cv_ready;

static int start(void)
{
    if (!cv_ready) { /* timed waits must not jump with the wall clock */
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&qcv, &ca);
        pthread_condattr_destroy(&ca);
        cv_ready = 1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, worker_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    started = rc == 0;
    return rc;
}

/* Queues b (state WRITING or READING, counted in file->inflight).  Without a thread (it
 * could not be created) the I/O is done here, synchronously: slower, never wrong. */
void iolab_buffer_worker_submit(iolab_buffer_buf_t *b)
{
    pthread_mutex_lock(&qmu);
    if (!started && start() != 0) {
        pthread_mutex_unlock(&qmu);
        process(b);
        return;
    }
    b->qnext = NULL;
    if (qtail)
        qtail->qnext = b;
    else
        qhead = b;
    qtail = b;
    pthread_cond_signal(&qcv);
    pthread_mutex_unlock(&qmu);
}

/* Starts the thread if it is not running (a write stream needs its idle checks even
 * before its first buffer is full). */
void iolab_buffer_worker_ensure(void)
{
    pthread_mutex_lock(&qmu);
    if (!started)
        start();
    pthread_mutex_unlock(&qmu);
}

/* fork: the table has synced every file, so the queue is empty; hold it across fork so the
 * child's copy of the lock is free, and forget the thread (the child has none). */
void iolab_buffer_worker_atfork_prepare(void)
{
    pthread_mutex_lock(&qmu);
}

void iolab_buffer_worker_atfork_parent(void)
{
    pthread_mutex_unlock(&qmu);
}

void iolab_buffer_worker_atfork_child(void)
{
    qhead = qtail = NULL;
    started = 0;
    cv_ready = 0; /* the parent's thread may have been waiting on qcv: a fresh one */
    pthread_mutex_unlock(&qmu);
}
