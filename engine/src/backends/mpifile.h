/* iolab-bench: helpers shared by the backends built on MPI-IO (mpiio, hdf5, pnetcdf).
 * Header-only (static inline) so each backend stays one .c file and one build line. */
#ifndef IOLAB_BACKENDS_MPIFILE_H
#define IOLAB_BACKENDS_MPIFILE_H

#include <errno.h>
#include <mpi.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "env.h"

/* sys_errno when it is one that failing file I/O produces, else 0. The libraries above
 * MPI-IO often turn a failed pwrite into a generic error (or, OMPIO, into a short count with
 * success), while the errno of the system call survives and names the real cause. */
static inline int iolab_mpifile_io_errno(int sys_errno)
{
    switch (sys_errno) {
    case ENOSPC: case EDQUOT: case EIO: case EFBIG: case EROFS: case EACCES: case EPERM:
    case ENOENT: case EISDIR: case ENOTDIR: case ENAMETOOLONG: case ESTALE:
        return sys_errno;
    default:
        return 0;
    }
}

/* errno of a write that a library reported as done but that set a write-failure errno on
 * the way (PnetCDF over OMPIO reports success after pwrite failed with ENOSPC). Only these
 * three: other errnos are set and cleared inside libraries as a matter of course. */
static inline int iolab_mpifile_write_errno(int sys_errno)
{
    return sys_errno == ENOSPC || sys_errno == EDQUOT || sys_errno == EFBIG ? sys_errno : 0;
}

/* The errno to report for a failed call on path: the system call's when it survived, else
 * ENOSPC when the file system is now full (HDF5 clears errno before returning), else EIO. */
static inline int iolab_mpifile_errno(int sys_errno, const char *path)
{
    int e = iolab_mpifile_io_errno(sys_errno);
    if (e)
        return e;
    struct statvfs sv;
    if (path && statvfs(iolab_env_strip_prefix(path), &sv) == 0 && sv.f_bavail == 0)
        return ENOSPC;
    return EIO;
}

/* All ranks of comm learn whether any rank failed. Open is collective, but a library may
 * fail on some ranks only, and a rank left holding a file alone would make collective calls
 * nobody matches. Returns 1 when another rank failed (mine == 0, someone's != 0). */
static inline int iolab_mpifile_other_failed(MPI_Comm comm, int mine)
{
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    return any && !mine;
}

/* Before a write run creates path over comm: rank 0 deletes an old file, then all wait.
 * Truncating instead would keep the old file's layout: ROMIO applies creation-time hints
 * (striping_factor, striping_unit) only to a file it creates. Collective over comm. */
static inline void iolab_mpifile_fresh(MPI_Comm comm, const char *path)
{
    int crank = 0;
    MPI_Comm_rank(comm, &crank);
    if (crank == 0 && access(iolab_env_strip_prefix(path), F_OK) == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(comm);
}

/* Delete path (one rank per file); a missing file is not an error. MPI_File_delete's error
 * class for a missing file differs between libraries, so absence is checked first. */
static inline int iolab_mpifile_remove(const char *path)
{
    if (access(iolab_env_strip_prefix(path), F_OK) != 0 && errno == ENOENT)
        return 0;
    errno = 0;
    if (MPI_File_delete(path, MPI_INFO_NULL) == MPI_SUCCESS)
        return 0;
    return access(iolab_env_strip_prefix(path), F_OK) != 0 && errno == ENOENT
               ? 0 : iolab_mpifile_errno(errno, path);
}

#endif
