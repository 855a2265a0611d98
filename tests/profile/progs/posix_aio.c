/* POSIX asynchronous I/O: 3 aio_write of 4 KiB at offsets 0, 8 KiB, 4 KiB; 2 more writes of
 * 1 KiB at 12 KiB and 13 KiB submitted together with lio_listio(LIO_WAIT); 1 aio_read of
 * 4 KiB at 4 KiB; each result collected with aio_return. Checks what it read.
 * Usage: posix_aio FILE */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static char bufs[6][4096];

static int wait_for(struct aiocb *cb)
{
    const struct aiocb *list[1] = {cb};
    while (aio_error(cb) == EINPROGRESS)
        aio_suspend(list, 1, NULL);
    return (int)aio_return(cb);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 2;
    struct aiocb cb[6];
    const off_t offs[3] = {0, 8192, 4096};
    memset(cb, 0, sizeof cb);
    for (int i = 0; i < 3; i++) {
        memset(bufs[i], 'a' + i, 4096);
        cb[i] = (struct aiocb){.aio_fildes = fd, .aio_buf = bufs[i], .aio_nbytes = 4096,
                               .aio_offset = offs[i]};
        if (aio_write(&cb[i]) != 0)
            return 3;
    }
    for (int i = 0; i < 3; i++)
        if (wait_for(&cb[i]) != 4096)
            return 4;
    struct aiocb *list[2] = {&cb[3], &cb[4]};
    for (int i = 3; i < 5; i++) {
        memset(bufs[i], 'x', 1024);
        cb[i] = (struct aiocb){.aio_fildes = fd, .aio_buf = bufs[i], .aio_nbytes = 1024,
                               .aio_offset = 12288 + (i - 3) * 1024, .aio_lio_opcode = LIO_WRITE};
    }
    if (lio_listio(LIO_WAIT, list, 2, NULL) != 0 || aio_return(&cb[3]) != 1024 ||
        aio_return(&cb[4]) != 1024)
        return 5;
    cb[5] = (struct aiocb){.aio_fildes = fd, .aio_buf = bufs[5], .aio_nbytes = 4096,
                           .aio_offset = 4096};
    if (aio_read(&cb[5]) != 0 || wait_for(&cb[5]) != 4096 || bufs[5][100] != 'c')
        return 6;
    close(fd);
    return 0;
}
