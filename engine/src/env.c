/* iolab-bench: hosts, MPI library and file system of a run. */
#include "env.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* statfs f_type -> name, for the file systems HPC users meet (linux/magic.h values, plus
 * Lustre, GPFS, BeeGFS, WekaFS which are out of tree). */
static const struct { unsigned long magic; const char *name; } fs_names[] = {
    {0xEF53, "ext4"},        {0x58465342, "xfs"},      {0x01021994, "tmpfs"},
    {0x0BD00BD0, "lustre"},  {0x47504653, "gpfs"},     {0x6969, "nfs"},
    {0x65735546, "fuse"},    {0x9123683E, "btrfs"},    {0x794C7630, "overlay"},
    {0x19830326, "beegfs"},  {0x2FC12FC1, "zfs"},      {0x858458F6, "ramfs"},
    {0x00C36400, "ceph"},    {0xFE534D42, "smb2"},     {0xFF534D42, "cifs"},
    {0x73717368, "squashfs"},{0x5346414F, "afs"},      {0x24051905, "ubifs"},
    {0xF2F52010, "f2fs"},    {0x4244, "hfs"},          {0x5346544E, "ntfs"},
    {0x4d44, "vfat"},        {0x137F, "minix"},        {0x2011BAB0, "exfat"},
    {0xCA451A4E, "bcachefs"},{0x6E667364, "nfsd"},     {0x7C7C6673, "pvfs2"},
};

const char *iolab_env_strip_prefix(const char *path)
{
    /* ROMIO accepts "fstype:path"; a one-letter prefix would be a DOS drive, not ours. */
    const char *colon = strchr(path, ':');
    const char *slash = strchr(path, '/');
    if (colon && colon - path > 1 && (!slash || colon < slash))
        return colon + 1;
    return path;
}

static void dir_of(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", iolab_env_strip_prefix(path));
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, len, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
}

/* The logical sector size of the device under dir (O_DIRECT alignment). Falls back to the
 * file-system block size when the device is virtual (tmpfs, NFS, Lustre clients). */
static uint64_t logical_block_size(const char *dir, uint64_t fallback)
{
    struct stat st;
    if (stat(dir, &st) != 0 || major(st.st_dev) == 0)
        return fallback;
    char p[128];
    const char *fmt[] = {"/sys/dev/block/%u:%u/queue/logical_block_size",
                         "/sys/dev/block/%u:%u/../queue/logical_block_size"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, fmt[i], major(st.st_dev), minor(st.st_dev));
        FILE *f = fopen(p, "r");
        unsigned long v = 0;
        if (f) {
            int ok = fscanf(f, "%lu", &v) == 1;
            fclose(f);
            if (ok && v)
                return v;
        }
    }
    return fallback;
}

static void mpiio_implementation(iolab_env_t *env)
{
    const char *lib = env->mpi_library;
    const char *io = getenv("OMPI_MCA_io");
    if (strstr(lib, "Open MPI"))
        snprintf(env->mpiio_impl, sizeof env->mpiio_impl, "%s",
                 io && strstr(io, "romio") && !strstr(io, "^") ? "romio" : "ompio");
    else if (strstr(lib, "MPICH") || strstr(lib, "Intel") || strstr(lib, "CRAY") ||
             strstr(lib, "MVAPICH"))
        snprintf(env->mpiio_impl, sizeof env->mpiio_impl, "romio");
    else
        snprintf(env->mpiio_impl, sizeof env->mpiio_impl, "unknown");
}

/* Hosts in order of their lowest rank; every rank learns all of them. */
static int gather_hosts(iolab_env_t *env, MPI_Comm world)
{
    char me[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(me, &len);
    char *all = calloc((size_t)env->ranks, MPI_MAX_PROCESSOR_NAME);
    env->hosts = calloc((size_t)env->ranks, sizeof *env->hosts);
    env->host_ranks = calloc((size_t)env->ranks, sizeof *env->host_ranks);
    env->rank_host = calloc((size_t)env->ranks, sizeof *env->rank_host);
    if (!all || !env->hosts || !env->host_ranks || !env->rank_host)
        return -1;
    MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  world);
    env->nhosts = 0;
    for (int r = 0; r < env->ranks; r++) {
        const char *name = all + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        int h = 0;
        while (h < env->nhosts && strcmp(env->hosts[h], name) != 0)
            h++;
        if (h == env->nhosts)
            env->hosts[env->nhosts++] = strdup(name);
        env->host_ranks[h]++;
        env->rank_host[r] = h;
    }
    env->host_index = env->rank_host[env->rank];
    env->ranks_on_my_host = env->host_ranks[env->host_index];
    env->host_leader = 1;
    for (int r = 0; r < env->rank; r++)
        if (env->rank_host[r] == env->host_index)
            env->host_leader = 0;
    free(all);
    return 0;
}

int iolab_env_gather(iolab_env_t *env, const char *path, MPI_Comm world)
{
    memset(env, 0, sizeof *env);
    MPI_Comm_rank(world, &env->rank);
    MPI_Comm_size(world, &env->ranks);
    int len = 0;
    MPI_Get_library_version(env->mpi_library, &len);
    for (char *p = env->mpi_library; *p; p++)  /* one line in tables and JSON */
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    while (len > 0 && env->mpi_library[len - 1] == ' ')
        env->mpi_library[--len] = '\0';
    mpiio_implementation(env);
    if (gather_hosts(env, world) != 0)
        return -1;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(env->start_time, sizeof env->start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    env->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    dir_of(path ? path : ".", env->dir, sizeof env->dir);
    struct statfs sf;
    snprintf(env->fs_type, sizeof env->fs_type, "unknown");
    if (statfs(env->dir, &sf) == 0) {
        env->dir_exists = 1;
        unsigned long magic = (unsigned long)sf.f_type & 0xffffffffUL;
        snprintf(env->fs_magic, sizeof env->fs_magic, "0x%lx", magic);
        for (size_t i = 0; i < sizeof fs_names / sizeof *fs_names; i++)
            if (fs_names[i].magic == magic)
                snprintf(env->fs_type, sizeof env->fs_type, "%s", fs_names[i].name);
        env->fs_block_size = (uint64_t)sf.f_bsize;
        env->logical_block_size = logical_block_size(env->dir, env->fs_block_size);
    }
    return 0;
}

void iolab_env_free(iolab_env_t *env)
{
    for (int h = 0; h < env->nhosts; h++)
        free(env->hosts[h]);
    free(env->hosts);
    free(env->host_ranks);
    free(env->rank_host);
    env->hosts = NULL;
}
