/* iolab-bench: placement samples (see placement.h). */
#include "placement.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void iolab_cpus_format(const int *cpus, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        char piece[32];
        int w = j > i ? snprintf(piece, sizeof piece, "%s%d-%d", i ? "," : "", cpus[i], cpus[j])
                      : snprintf(piece, sizeof piece, "%s%d", i ? "," : "", cpus[i]);
        if (used + (size_t)w + 4 > len) {  /* room for "..." and the terminator */
            snprintf(buf + used, len - used, "...");
            return;
        }
        memcpy(buf + used, piece, (size_t)w + 1);
        used += (size_t)w;
        i = j + 1;
    }
}

/* The frequency of cpu in MHz: cpufreq (kHz) where the kernel has it, else /proc/cpuinfo's
 * line for that processor (virtual machines often have only that). < 0 when neither. */
static double cpu_mhz(int cpu)
{
    char path[96];
    unsigned long khz = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
    FILE *f = fopen(path, "r");
    if (f) {
        int ok = fscanf(f, "%lu", &khz) == 1;
        fclose(f);
        if (ok && khz)
            return (double)khz / 1000.0;
    }
    if (!(f = fopen("/proc/cpuinfo", "r")))
        return -1;
    char line[256];
    int current = -1;
    double mhz = -1;
    while (fgets(line, sizeof line, f)) {
        int n;
        double v;
        if (sscanf(line, "processor : %d", &n) == 1)
            current = n;
        else if (current == cpu && sscanf(line, "cpu MHz : %lf", &v) == 1) {
            mhz = v;
            break;
        }
    }
    fclose(f);
    return mhz;
}

static void mempolicy(char *buf, size_t len)
{
    static const char *const names[] = {"default", "preferred", "bind", "interleave", "local"};
    int mode = -1;
    if (syscall(SYS_get_mempolicy, &mode, NULL, 0UL, NULL, 0UL) != 0)
        mode = -1;
    mode &= 0xff;  /* the mode without its MPOL_F_* flags */
    snprintf(buf, len, "%s", mode >= 0 && mode < 5 ? names[mode] : "unknown");
}

void iolab_placement_start(iolab_placement_t *p)
{
    memset(p, 0, sizeof *p);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int cpus[CPU_SETSIZE], n = 0;
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                cpus[n++] = c;
        p->ncpus = n;
        iolab_cpus_format(cpus, n, p->cpus, sizeof p->cpus);
    } else {
        snprintf(p->cpus, sizeof p->cpus, "unknown");
    }
    mempolicy(p->mempolicy, sizeof p->mempolicy);
    p->cpu_start = sched_getcpu();
    p->mhz_start = p->cpu_start >= 0 ? cpu_mhz(p->cpu_start) : -1;
    p->cpu_end = -1;
    p->mhz_end = -1;
}

void iolab_placement_end(iolab_placement_t *p)
{
    p->cpu_end = sched_getcpu();
    p->mhz_end = p->cpu_end >= 0 ? cpu_mhz(p->cpu_end) : -1;
}
