#!/usr/bin/env bash
# Installs the system packages iolab needs, only those that are missing.
# As root on Debian/Ubuntu it uses apt-get; otherwise (a cluster login node, a laptop
# without root) it prints what to install or which modules to load, and exits 0 when the
# essentials (an MPI C compiler, cmake, python3) are already there.
set -u
want_pkgs=()
need() {  # need <test-command...> -- <debian packages...>
    local probe=() pkgs=() seen_sep=0
    for a in "$@"; do
        if [ "$a" = "--" ]; then seen_sep=1; continue; fi
        if [ $seen_sep = 0 ]; then probe+=("$a"); else pkgs+=("$a"); fi
    done
    "${probe[@]}" >/dev/null 2>&1 || want_pkgs+=("${pkgs[@]}")
}
has_file() { [ -e "$1" ]; }
# Essentials: compilers, build tools, Python venv, one MPI.
need command -v cc -- build-essential
# Fortran MPI programs (mpif90): the tracer is tested on them, as applications are written.
need command -v gfortran -- gfortran
need command -v cmake -- cmake
need command -v pkg-config -- pkg-config
need python3 -c 'import venv, ensurepip' -- python3-venv
need command -v mpicc.openmpi -- openmpi-bin libopenmpi-dev
need has_file /usr/lib/x86_64-linux-gnu/pkgconfig/hdf5-openmpi.pc -- libhdf5-openmpi-dev
need has_file /usr/include/pnetcdf.h -- libpnetcdf-dev
# MPICH beside Open MPI: ROMIO with real effective hints, as on Cray systems.
need command -v mpicc.mpich -- mpich libmpich-dev
need has_file /usr/lib/x86_64-linux-gnu/pkgconfig/hdf5-mpich.pc -- libhdf5-mpich-dev
# io_uring and Linux AIO for iolab-bench --posix.queue-depth / --posix.aio (the engine builds
# without either and says so).
need has_file /usr/include/liburing.h -- liburing-dev
need has_file /usr/include/libaio.h -- libaio-dev
# Test-only parts: one-node Slurm, fault injection, a FUSE file system.
if [ "${IOLAB_WITH_TEST_DEPS:-0}" = 1 ]; then
    need command -v slurmctld -- slurmctld slurmd slurm-client munge
    need command -v fiu-run -- libfiu-dev fiu-utils
    need command -v bindfs -- bindfs fuse3
    need command -v numactl -- numactl  # placement: a memory binding made for real
    need command -v strace -- strace  # IOR patterns, queue depth, metadata: the syscalls made
    need command -v valgrind -- valgrind  # callgrind: instructions a transfer, MPI's mutex
    need command -v gdb -- gdb  # the calls inside a phase's timed interval (tests/ior)
    need command -v chromium -- chromium  # the HTML escaping test opens reports in it
fi
# Benchmark-only tools: bench/queue_vs_fio and bench/engine_vs_ior compare with fio. (IOR and
# mdtest have no Debian package: build them outside the repository, see bench/engine_vs_ior.)
if [ "${IOLAB_WITH_BENCH_DEPS:-0}" = 1 ]; then
    need command -v fio -- fio
fi

[ ${#want_pkgs[@]} = 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "iolab: installing missing packages: ${want_pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    stamp=/var/lib/apt/periodic/update-success-stamp
    if [ ! -d /var/lib/apt/lists/partial ] || [ -z "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ]; then
        apt-get update -qq
    fi
    apt-get install -y -qq "${want_pkgs[@]}" >/dev/null || { apt-get update -qq && apt-get install -y -qq "${want_pkgs[@]}" >/dev/null; } || {
        echo "iolab: apt-get install failed for: ${want_pkgs[*]}" >&2; exit 2; }
    : "$stamp"
    exit 0
fi
echo "iolab: these Debian packages are missing: ${want_pkgs[*]}" >&2
echo "iolab: on a cluster, load your site's modules instead, e.g. 'module load cmake cray-mpich cray-hdf5-parallel', then set MPICC if the MPI compiler is not 'mpicc'." >&2
if command -v "${MPICC:-mpicc}" >/dev/null && command -v cmake >/dev/null; then exit 0; fi
exit 2
