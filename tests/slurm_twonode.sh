#!/usr/bin/env bash
# A two-node Slurm on one machine for iolab's multi-node tests (and for trying iolab across
# nodes by hand; docs/multinode.md).
#
#   tests/slurm_twonode.sh          start it, or reuse the one already running
#   tests/slurm_twonode.sh stop     stop the daemons it started
#
# On success the last line printed is "SLURM_CONF=<path>": export it, then sbatch, salloc and
# srun talk to this cluster. One slurmctld and two slurmd ("slurmd -N n1", "-N n2"), each
# slurmd in its own UTS namespace (host name n1 or n2) and mount namespace (a private
# /etc/hosts naming n1 and n2), so the tasks srun starts on each node see that node's host
# name: Open MPI, MPICH and iolab count ranks per host by it, and the same names resolve on
# both. The machine's /etc/hosts, /etc/slurm and munge are untouched.
#
# Everything (config, munge key and socket, state, per-node spool, pid and log files) lives
# in $IOLAB_SLURM2_DIR (default /var/lib/iolab-slurm2); the ports (slurmctld 6917, slurmd
# 6921 and 6922) differ from Slurm's defaults and from tests/slurm_localhost.sh, so both
# clusters can run side by side. A re-run reuses or repairs what is there.
#
# Three daemons and the tests' ranks share the machine's CPUs: MessageTimeout and
# SlurmdTimeout are longer than Slurm's defaults, so a busy machine does not fail a step
# (a 10 s RPC timeout to a slurmd was seen under load).
#
# MPI across the two "hosts" goes over loopback: the nodes' tasks get the environment in
# $dir/mpi.env (Open MPI's TCP BTL and UCX for MPICH on "lo"), set by a TaskProlog; PMIx
# gets a TmpFS per node (the two nodes share the machine's /tmp). The settings that work in
# containers without systemd or cgroups are those of tests/slurm_localhost.sh. Needs root.
set -euo pipefail
dir=${IOLAB_SLURM2_DIR:-/var/lib/iolab-slurm2}
conf=$dir/slurm.conf
sock=$dir/munge/munge.socket.2
nodes=(n1 n2)
ctld_port=6917
first_node_port=6921
export SLURM_CONF=$conf

say() { echo "slurm_twonode: $*" >&2; }
die() { say "$*"; exit 1; }

running() {  # running <pidfile>: its daemon (named by the file: slurmd.n1.pid -> slurmd) is up
    local pid name
    [ -f "$1" ] || return 1
    pid=$(cat "$1")
    name=$(basename "$1" .pid)
    kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "${name%%.*}" ]
}

pidfiles() {
    echo "$dir/slurmctld.pid" "$dir/munged.pid"
    for n in "${nodes[@]}"; do echo "$dir/slurmd.$n.pid"; done
}

stop_daemons() {  # stop_daemons <pidfile>...: stop them and wait (10 s at most)
    local f any
    for f in "$@"; do
        if running "$f"; then kill "$(cat "$f")" 2>/dev/null || true; fi
    done
    for _ in $(seq 50); do
        any=
        for f in "$@"; do running "$f" && any=1; done
        [ -z "$any" ] && break
        sleep 0.2
    done
    for f in "$@"; do running "$f" || rm -f "$f"; done
}

stop_all() {
    # shellcheck disable=SC2046  # one path a word
    stop_daemons $(pidfiles)
}

if [ "${1:-}" = stop ]; then
    stop_all
    exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root (it starts munged, slurmctld and slurmd in namespaces)"
for c in munged munge slurmctld slurmd scontrol sinfo srun sbatch salloc unshare; do
    command -v "$c" >/dev/null || die "'$c' is not installed; run: IOLAB_WITH_TEST_DEPS=1 tools/install-deps.sh"
done
unshare --uts --mount true 2>/dev/null \
    || die "cannot create UTS and mount namespaces here (unshare --uts --mount failed)"

host=$(hostname -s)
plugdir=$(dirname "$(find /usr/lib /usr/lib64 -name proctrack_linuxproc.so -path '*slurm*' 2>/dev/null | head -1)")
mkdir -p "$dir/state" "$dir/munge"
for n in "${nodes[@]}"; do mkdir -p "$dir/spool/$n" "$dir/tmp/$n"; done
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

# The nodes' /etc/hosts: the machine's, plus the two node names (bind-mounted over
# /etc/hosts inside each slurmd's mount namespace only). Rewritten in place, so running
# nodes see a change of the machine's file.
new_hosts=$(
    grep -v -E "[[:space:]](${nodes[0]}|${nodes[1]})([[:space:]]|\$)" /etc/hosts || true
    echo "127.0.0.1 ${nodes[*]}"
)
if [ ! -f "$dir/hosts" ] || [ "$(cat "$dir/hosts")" != "$new_hosts" ]; then
    printf '%s\n' "$new_hosts" > "$dir/hosts"
fi

# MPI between the emulated hosts is TCP over loopback: Open MPI's TCP BTL leaves loopback
# out by default, and UCX (MPICH's device) is pinned to it too, so a machine whose only
# interface is lo works. A TaskProlog prints "export" lines that Slurm applies to every task.
cat > "$dir/mpi.env" <<'EOF'
OMPI_MCA_btl=self,vader,tcp
OMPI_MCA_btl_tcp_if_include=lo
OMPI_MCA_oob_tcp_if_include=lo
OMPI_MCA_pml=ob1
UCX_NET_DEVICES=lo
UCX_TLS=tcp,self,sm
EOF
cat > "$dir/task_prolog.sh" <<EOF
#!/bin/sh
# written by iolab's tests/slurm_twonode.sh: MPI over loopback between the emulated nodes
sed 's/^/export /' $dir/mpi.env
EOF
chmod 755 "$dir/task_prolog.sh"

node_lines=
port=$first_node_port
for n in "${nodes[@]}"; do
    node_lines+="NodeName=$n NodeAddr=127.0.0.1 Port=$port CPUs=4 RealMemory=2000 State=UNKNOWN"$'\n'
    port=$((port + 1))
done
new_conf=$(cat <<EOF
# written by iolab's tests/slurm_twonode.sh; rewritten when the machine changes
ClusterName=iolab2
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
PluginDir=$plugdir
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.%n.log
TmpFS=$dir/tmp/%n
PlugStackConfig=$dir/plugstack.conf
TaskProlog=$dir/task_prolog.sh
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmix
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=30
InactiveLimit=0
KillWait=10
# MinJobAge=4: why in tests/slurm_localhost.sh (sbatch --wait looks every 2 s, not 10)
MinJobAge=4
${node_lines}PartitionName=twonode Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
)
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$new_conf" ]; then
    # A changed machine (host name, plugin folder): restart on the new configuration.
    daemons=("$dir/slurmctld.pid" "$dir/slurmd.${nodes[0]}.pid" "$dir/slurmd.${nodes[1]}.pid")
    if running "${daemons[0]}" || running "${daemons[1]}" || running "${daemons[2]}"; then
        say "configuration changed; restarting"
        stop_daemons "${daemons[@]}"
    fi
    printf '%s\n' "$new_conf" > "$conf"
    : > "$dir/plugstack.conf"
fi

if ! running "$dir/slurmctld.pid"; then
    slurmctld -f "$conf" || die "slurmctld did not start; see $dir/slurmctld.log"
fi
for n in "${nodes[@]}"; do
    if ! running "$dir/slurmd.$n.pid"; then
        # Its own host name and /etc/hosts; the daemon (and every task it starts) keeps them.
        unshare --uts --mount --propagation private -- sh -c \
            'hostname "$1" && mount --bind "$2" /etc/hosts && exec slurmd -f "$3" -N "$1"' \
            slurmd-ns "$n" "$dir/hosts" "$conf" \
            || die "slurmd -N $n did not start; see $dir/slurmd.$n.log"
    fi
done

# Wait until both nodes take jobs; a node left down by an earlier run is resumed.
for n in "${nodes[@]}"; do
    state=unknown
    for i in $(seq 120); do
        state=$(sinfo -h -N -n "$n" -o '%t' 2>/dev/null | head -1 || true)
        case "$state" in
            idle|mix|alloc) break ;;
            down*|drain*|fail*) [ $((i % 10)) = 1 ] && scontrol update nodename="$n" state=resume 2>/dev/null || true ;;
        esac
        sleep 0.5
    done
    case "$state" in
        idle|mix|alloc) ;;
        *) die "node $n is '$state', not taking jobs; see $dir/slurmctld.log and $dir/slurmd.$n.log" ;;
    esac
done
say "two-node Slurm up: nodes ${nodes[*]} (4 CPUs each), partition twonode, slurmctld port $ctld_port"
echo "SLURM_CONF=$conf"
