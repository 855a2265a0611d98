#!/usr/bin/env bash
# A one-node Slurm on localhost for iolab's tests (and for trying iolab's Slurm path by hand).
#
#   tests/slurm_localhost.sh          start it, or reuse the one already running
#   tests/slurm_localhost.sh stop     stop the daemons it started
#
# On success the last line printed is "SLURM_CONF=<path>": export it, then sbatch, salloc and
# srun talk to this cluster. Everything (config, munge key and socket, state, logs) lives in
# $IOLAB_SLURM_DIR (default /var/lib/iolab-slurm), so the machine's own /etc/slurm and munge
# are untouched and a re-run reuses or repairs what is there.
#
# Debian's slurmctld, slurmd and munge (IOLAB_WITH_TEST_DEPS=1 tools/install-deps.sh). The
# settings that work in containers and VMs without systemd or cgroup delegation:
# ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, root as SlurmUser and SlurmdUser,
# a partition with OverSubscribe=FORCE (jobs share the few CPUs), MpiDefault=pmix (Debian's
# Open MPI starts under srun through PMIx). Needs root.
set -euo pipefail
dir=${IOLAB_SLURM_DIR:-/var/lib/iolab-slurm}
conf=$dir/slurm.conf
sock=$dir/munge/munge.socket.2
export SLURM_CONF=$conf

say() { echo "slurm_localhost: $*" >&2; }
die() { say "$*"; exit 1; }

running() {  # running <pidfile>
    [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

stop_all() {
    for d in slurmd slurmctld munged; do
        if running "$dir/$d.pid"; then
            kill "$(cat "$dir/$d.pid")" 2>/dev/null || true
        fi
    done
    for _ in $(seq 50); do
        running "$dir/slurmd.pid" || running "$dir/slurmctld.pid" || running "$dir/munged.pid" || break
        sleep 0.2
    done
    rm -f "$dir"/*.pid
}

if [ "${1:-}" = stop ]; then
    stop_all
    exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root (it starts munged, slurmctld and slurmd)"
for c in munged munge slurmctld slurmd scontrol sinfo srun sbatch salloc; do
    command -v "$c" >/dev/null || die "'$c' is not installed; run: IOLAB_WITH_TEST_DEPS=1 tools/install-deps.sh"
done

host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
plugdir=$(dirname "$(find /usr/lib /usr/lib64 -name proctrack_linuxproc.so -path '*slurm*' 2>/dev/null | head -1)")
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"

# Our own munge key, made once; our own munged on our own socket.
if [ ! -s "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge/munge.key"
fi
if ! munge -S "$sock" -n </dev/null >/dev/null 2>&1; then
    rm -f "$sock" "$sock.lock"
    munged --force -S "$sock" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
        --seed-file="$dir/munge/munge.seed" \
        || die "munged did not start; see $dir/munged.log"
    for _ in $(seq 50); do munge -S "$sock" -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
    munge -S "$sock" -n </dev/null >/dev/null 2>&1 || die "munged is not answering on $sock"
fi

# MinJobAge=4: sbatch --wait (iolab profile -- sbatch, tune --sbatch, the tests' jobs) sleeps
# 2 s, then 8, then 32 between its looks at the job while the sleep is below MinJobAge/2
# (Slurm 22.05 sbatch.c, _job_wait), so at 60 a job of 3 s returned after 10 s; at 4 it looks
# every 2 s (10.0 s -> 6.0 s for a 2.5 s job, 4.0 s for one that exits at once). A finished
# job is still kept 4 s, twice that interval, so sbatch always sees how it ended.
new_conf=$(cat <<EOF
# written by iolab's tests/slurm_localhost.sh; rewritten when the machine changes
ClusterName=iolab
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
PluginDir=$plugdir
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmix
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=10
MinJobAge=4
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
)
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$new_conf" ]; then
    # A changed machine (CPUs, memory, host name): restart on the new configuration.
    if running "$dir/slurmctld.pid" || running "$dir/slurmd.pid"; then
        say "configuration changed; restarting"
        for d in slurmd slurmctld; do running "$dir/$d.pid" && kill "$(cat "$dir/$d.pid")"; done
        sleep 2
    fi
    printf '%s\n' "$new_conf" > "$conf"
    : > "$dir/plugstack.conf"
fi

if ! running "$dir/slurmctld.pid"; then
    slurmctld -f "$conf" || die "slurmctld did not start; see $dir/slurmctld.log"
fi
if ! running "$dir/slurmd.pid"; then
    slurmd -f "$conf" -N "$host" || die "slurmd did not start; see $dir/slurmd.log"
fi

# Wait until the node takes jobs; a node left down by an earlier run is resumed.
state=unknown
for i in $(seq 120); do
    state=$(sinfo -h -N -n "$host" -o '%t' 2>/dev/null | head -1 || true)
    case "$state" in
        idle|mix|alloc) break ;;
        down*|drain*|fail*) [ $((i % 10)) = 1 ] && scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
    esac
    sleep 0.5
done
case "$state" in
    idle|mix|alloc) ;;
    *) die "node $host is '$state', not taking jobs; see $dir/slurmctld.log and $dir/slurmd.log" ;;
esac
say "one-node Slurm up: node $host, $cpus CPUs, ${mem_mb} MB, partition debug"
echo "SLURM_CONF=$conf"
