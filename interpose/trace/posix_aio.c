/* libiolab-trace: POSIX asynchronous I/O, as Darshan's POSIX module counts it.
 *
 * aio_read/aio_write (and their 64 forms, and lio_listio) on a traced descriptor note the
 * request and its start time; aio_return, when the program (or Open MPI's OMPIO, which
 * writes MPI_File_iwrite* this way) collects the result, counts one read or write of the
 * bytes returned at the request's offset, timed from submission to collection. Pending
 * requests live in a bounded table (what does not fit is counted as left out, and then its
 * bytes are not counted); the table is not on any hot path.
 */
#include "iolab_trace_core.h"
#include "iolab_wrap.h"

#define AIO_SLOTS 1024

typedef struct {
    const void *cb; /* NULL: free */
    int32_t rec;    /* POSIX record index */
    int write;
    double t0;
} pending_t;

static pending_t pending[AIO_SLOTS];
static pthread_mutex_t aio_lock = PTHREAD_MUTEX_INITIALIZER;

static void note(const void *cb, int fd, int write, double t0)
{
    int32_t idx = iolab_core_fd_get(fd);
    if (idx < 0)
        return;
    pthread_mutex_lock(&aio_lock);
    int free_slot = -1;
    for (int i = 0; i < AIO_SLOTS; i++) {
        if (pending[i].cb == cb) { /* a control block reused before its result was collected */
            free_slot = i;
            break;
        }
        if (!pending[i].cb && free_slot < 0)
            free_slot = i;
    }
    if (free_slot >= 0)
        pending[free_slot] = (pending_t){cb, idx, write, t0};
    else
        iolab_core_left_out(IOLAB_LEFT_HANDLES);
    pthread_mutex_unlock(&aio_lock);
}

static void collect(const void *cb, int64_t off, const void *buf, ssize_t ret, double t1)
{
    pending_t p = {0};
    pthread_mutex_lock(&aio_lock);
    for (int i = 0; i < AIO_SLOTS; i++)
        if (pending[i].cb == cb) {
            p = pending[i];
            pending[i].cb = NULL;
            break;
        }
    pthread_mutex_unlock(&aio_lock);
    if (!p.cb || ret < 0)
        return;
    iolab_rec_t *r = iolab_core_rec_at(IOLAB_MOD_POSIX, p.rec);
    if (r)
        iolab_posix_io_done(r, p.write, off, ret, buf, p.t0, t1);
}

int aio_read(struct aiocb *cb)
{
    IOLAB_WRAP(int, aio_read, (cb), 1, if (ret == 0) note(cb, cb->aio_fildes, 0, t0_));
}

int aio_write(struct aiocb *cb)
{
    IOLAB_WRAP(int, aio_write, (cb), 1, if (ret == 0) note(cb, cb->aio_fildes, 1, t0_));
}

int aio_read64(struct aiocb64 *cb)
{
    IOLAB_WRAP(int, aio_read64, (cb), 1, if (ret == 0) note(cb, cb->aio_fildes, 0, t0_));
}

int aio_write64(struct aiocb64 *cb)
{
    IOLAB_WRAP(int, aio_write64, (cb), 1, if (ret == 0) note(cb, cb->aio_fildes, 1, t0_));
}

ssize_t aio_return(struct aiocb *cb)
{
    IOLAB_WRAP(ssize_t, aio_return, (cb), 1,
               collect(cb, (int64_t)cb->aio_offset, (const void *)cb->aio_buf, ret, t1_));
}

ssize_t aio_return64(struct aiocb64 *cb)
{
    IOLAB_WRAP(ssize_t, aio_return64, (cb), 1,
               collect(cb, (int64_t)cb->aio_offset, (const void *)cb->aio_buf, ret, t1_));
}

/* Every read or write request of a list submitted together. */
#define LIO_NOTE(list, n)                                                                    \
    do {                                                                                     \
        for (int i_ = 0; i_ < (n); i_++)                                                     \
            if ((list)[i_] && ((list)[i_]->aio_lio_opcode == LIO_READ ||                     \
                               (list)[i_]->aio_lio_opcode == LIO_WRITE))                     \
                note((list)[i_], (list)[i_]->aio_fildes,                                     \
                     (list)[i_]->aio_lio_opcode == LIO_WRITE, t0_);                          \
    } while (0)

int lio_listio(int mode, struct aiocb *const list[], int n, struct sigevent *sev)
{
    IOLAB_WRAP(int, lio_listio, (mode, list, n, sev), n > 0,
               if (ret == 0) LIO_NOTE(list, n));
}

int lio_listio64(int mode, struct aiocb64 *const list[], int n, struct sigevent *sev)
{
    IOLAB_WRAP(int, lio_listio64, (mode, list, n, sev), n > 0,
               if (ret == 0) LIO_NOTE(list, n));
}
