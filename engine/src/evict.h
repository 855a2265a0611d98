/* iolab-bench: page-cache eviction and residency (plain files only). */
#ifndef IOLAB_EVICT_H
#define IOLAB_EVICT_H

#include <stdint.h>

/* Write back and drop the file's pages: fsync, then posix_fadvise(POSIX_FADV_DONTNEED) over
 * the whole file. Works without root (drop_caches needs root). Returns 0 or an errno. */
int iolab_evict_file(const char *path);

/* Count the file's pages in the page cache: mmap + mincore. Returns 0 with *resident and
 * *pages set, or an errno (an empty file gives 0 pages). */
int iolab_evict_resident(const char *path, uint64_t *resident, uint64_t *pages);

#endif
