/* iolab-bench: eviction (see evict.h). */
#include "evict.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int iolab_evict_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno;
    int rc = 0;
    /* Dirty pages cannot be dropped: write them back first. */
    if (fsync(fd) != 0 && errno != EINVAL)
        rc = errno;
    int adv = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (!rc && adv)
        rc = adv;
    close(fd);
    return rc;
}

int iolab_evict_resident(const char *path, uint64_t *resident, uint64_t *pages)
{
    *resident = *pages = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        int e = st.st_size == 0 ? 0 : errno;
        close(fd);
        return e;
    }
    long psz = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)st.st_size, np = (len + (size_t)psz - 1) / (size_t)psz;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return errno;
    unsigned char *vec = malloc(np);
    int rc = 0;
    if (!vec) {
        rc = ENOMEM;
    } else if (mincore(map, len, vec) != 0) {
        rc = errno;
    } else {
        for (size_t i = 0; i < np; i++)
            *resident += vec[i] & 1;
        *pages = np;
    }
    free(vec);
    munmap(map, len);
    return rc;
}
