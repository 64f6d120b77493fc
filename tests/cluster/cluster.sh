#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# An emulated cluster on this machine, for tests that must cross hosts:
# each node is a set of namespaces (network, host name, mounts) with its own
# address on a private bridge, its own host name and its own boot id (UCX
# takes "same boot id" for "same host, use shared memory"; without one of
# its own a node would reach the others through shared memory and prove
# nothing). Slurm (slurmctld on a controller node, one slurmd per node,
# munge for authentication) launches across them, and so do Open MPI's
# mpirun through a hostfile and MPICH's Hydra, both through an rsh agent
# that enters a node.
#
#   cluster.sh up K        bring up nodes n1..nK (installs what it needs)
#   cluster.sh down        stop what `up` started, by its pids, and remove
#                          the bridge, the links and the state
#   cluster.sh run CMD...  run CMD on n1, the login node, with SLURM_CONF set:
#                          `cluster.sh run srun --mpi=pmix -N 2 -n 4 ./prog`
#   cluster.sh on NODE CMD...  run CMD on node NODE (n1.., or ctl)
#   cluster.sh hostfile    print the path of the hostfile (one line per node)
#   cluster.sh agent       print the path of the rsh agent, for
#                          mpirun --mca plm_rsh_agent AGENT --hostfile FILE
#                          or mpiexec.mpich -launcher rsh -launcher-exec AGENT
#                          -hosts n1,n2
#   cluster.sh status      say whether it is up and what Slurm sees
#
# Root only (namespaces, a bridge, slurmd). AMC_CLUSTER_ID (0-9, default
# 0) names an instance, so that several can be up at once (the test suite
# uses 1, a developer's cluster 0): its state in /tmp/amc-cluster$ID, its
# bridge amcbr$ID and its addresses 10.217.(61+ID).0/24, only on that bridge.
# A second `up` of one instance while it is up fails.
set -u

ID=${AMC_CLUSTER_ID:-0}
[[ "$ID" =~ ^[0-9]$ ]] || { echo "cluster.sh: AMC_CLUSTER_ID is 0 to 9" >&2; exit 1; }
STATE=/tmp/amc-cluster$ID
[ "$ID" = 0 ] && STATE=/tmp/amc-cluster
NET=10.217.$((61 + ID))
BRIDGE=amcbr$ID
LINK=amc${ID}v-                  # host side of each node's link: amc0v-n1 ...
PMIX_BASE=$STATE-pmix            # PMIxCliTmpDirBase; each node backs it with its own directory

die() {
    echo "cluster.sh: $*" >&2
    if [ -n "${BRINGING_UP:-}" ]; then
        BRINGING_UP=
        # nothing half made is left behind but the logs, for the reader
        rm -rf "$STATE.failed" && mkdir -p "$STATE.failed" &&
            cp "$STATE"/*.log "$STATE"/*/*.log "$STATE.failed/" 2>/dev/null
        cmd_down >/dev/null 2>&1
        echo "cluster.sh: logs in $STATE.failed" >&2
    fi
    exit 1
}

need_root() {
    [ "$(id -u)" = 0 ] || die "must run as root (namespaces, a bridge, slurmd)"
}

# Debian 12's packages; installed only when missing.
install_deps() {
    local missing=()

    command -v slurmd >/dev/null 2>&1 || missing+=(slurm-wlm)
    command -v munged >/dev/null 2>&1 || missing+=(munge)
    command -v ip >/dev/null 2>&1 || missing+=(iproute2)
    command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
    [ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] || missing+=(slurm-wlm)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "cluster.sh: installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >"$STATE.apt.log" 2>&1 ||
            { apt-get update >/dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >"$STATE.apt.log" 2>&1; } ||
            die "apt-get install ${missing[*]} failed (see $STATE.apt.log)"
    fi
}

node_names() {
    local k

    for ((k = 1; k <= $(cat "$STATE/nodes"); k++)); do
        echo "n$k"
    done
}

holder_pid() {
    [ -f "$STATE/$1/holder.pid" ] || die "no node '$1' (is the cluster up?)"
    cat "$STATE/$1/holder.pid"
}

# Runs a command in a node's namespaces, with the caller's environment.
on_node() {
    local node=$1 pid

    shift
    pid=$(holder_pid "$node")
    exec nsenter -t "$pid" -n -u -m --wd="$PWD" -- "$@"
}

# A node: namespaces held by a sleeping process, a host name, a hosts file
# and a boot id of its own mounted over the shared ones, its own PMIx
# directory, and an address on the bridge.
start_node() {
    local node=$1 addr=$2 dir=$STATE/$1 pid i

    mkdir -p "$dir/pmix"
    cat /proc/sys/kernel/random/uuid >"$dir/boot_id"
    setsid unshare --net --uts --mount --propagation private -- /bin/sh -c '
        set -e
        hostname "$1"
        mount --bind "$2/../hosts" /etc/hosts
        mount --bind "$2/boot_id" /proc/sys/kernel/random/boot_id
        mount --bind "$2/pmix" "$3"
        echo ready >"$2/ready"
        exec sleep infinity' sh "$node" "$dir" "$PMIX_BASE" </dev/null >"$dir/holder.log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/holder.pid"
    echo "$pid" >>"$STATE/pids"
    for ((i = 0; i < 100; i++)); do
        [ -f "$dir/ready" ] && break
        sleep 0.05
    done
    [ -f "$dir/ready" ] || die "node $node did not start: $(cat "$dir/holder.log")"
    ip link add "$LINK$node" type veth peer name eth0 netns "$pid" ||
        die "cannot make a link for $node"
    ip link set "$LINK$node" master "$BRIDGE" up
    nsenter -t "$pid" -n -- ip link set lo up
    nsenter -t "$pid" -n -- ip addr add "$addr/24" dev eth0
    nsenter -t "$pid" -n -- ip link set eth0 up
}

write_config() {
    local k=$1 n

    {
        echo "127.0.0.1 localhost"
        echo "$NET.2 ctl"
        for ((n = 1; n <= k; n++)); do
            echo "$NET.$((10 + n)) n$n"
        done
    } >"$STATE/hosts"
    cat >"$STATE/slurm.conf" <<EOF
ClusterName=amc
SlurmctldHost=ctl($NET.2)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool/%n
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd-%n.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd-%n.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=3
MinJobAge=30
InactiveLimit=0
EOF
    # each node with its address, so slurmctld needs no name service
    for ((n = 1; n <= k; n++)); do
        echo "NodeName=n$n NodeAddr=$NET.$((10 + n)) CPUs=16 RealMemory=1000 State=UNKNOWN"
    done >>"$STATE/slurm.conf"
    echo "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" \
        >>"$STATE/slurm.conf"
    # 22.05 has no "disabled" cgroup plugin; v1 without mounting is inert
    # with proctrack/linuxproc and task/none
    printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n' >"$STATE/cgroup.conf"
    # the PMIx plugin's per-job directories: both nodes share /tmp, and the
    # plugin's names collide, so each node backs this path with its own
    printf 'PMIxCliTmpDirBase=%s\n' "$PMIX_BASE" >"$STATE/mpi.conf"
    cat >"$STATE/hostfile" <<EOF
$(for ((n = 1; n <= k; n++)); do echo "n$n slots=16"; done)
EOF
    cat >"$STATE/agent" <<EOF
#!/bin/sh
# mpirun's and Hydra's rsh agent: "agent [options] HOST COMMAND..." runs COMMAND on HOST
while [ \$# -gt 0 ]; do
    case "\$1" in
    -*) shift ;;
    *) break ;;
    esac
done
host=\$1
shift
exec nsenter -t "\$(cat "$STATE/\$host/holder.pid")" -n -u -m --wd="\$PWD" -- /bin/sh -c "\$*"
EOF
    chmod +x "$STATE/agent"
}

start_munge() {
    if [ -S /run/munge/munge.socket.2 ] && munge -n </dev/null >/dev/null 2>&1; then
        return 0 # a munged that answers: ours from before, or the machine's
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 2>/dev/null
        chown munge:munge /etc/munge/munge.key
        chmod 400 /etc/munge/munge.key
    fi
    runuser -u munge -- /usr/sbin/munged || die "munged did not start"
    pgrep -u munge -x munged >"$STATE/munged.pid"
    cat "$STATE/munged.pid" >>"$STATE/pids"
}

wait_idle() {
    local i state

    for ((i = 0; i < 150; i++)); do
        state=$(SLURM_CONF=$STATE/slurm.conf nsenter -t "$(holder_pid n1)" -n -u -m -- \
                    sinfo -h -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
        if [ "$state" = "idle " ]; then
            return 0
        fi
        sleep 0.2
    done
    die "nodes not idle after 30 s (sinfo: '$state'; logs in $STATE)"
}

cmd_up() {
    local k=${1:-2} n pid

    need_root
    [[ "$k" =~ ^[1-9][0-9]?$ ]] || die "up K: K is 1 to 99"
    if [ -f "$STATE/nodes" ]; then
        if [ -f "$STATE/n1/holder.pid" ] && kill -0 "$(cat "$STATE/n1/holder.pid")" 2>/dev/null; then
            die "already up ($STATE); 'cluster.sh down' first"
        fi
        cmd_down >/dev/null 2>&1 # left from a run that died: its pids are gone
    fi
    install_deps
    BRINGING_UP=1
    rm -rf "$STATE"
    mkdir -p "$STATE/ctld" "$STATE/spool" "$PMIX_BASE"
    : >"$STATE/pids"
    echo "$k" >"$STATE/nodes"
    write_config "$k"
    ip link add "$BRIDGE" type bridge 2>/dev/null || die "cannot make bridge $BRIDGE (one left over? 'cluster.sh down')"
    ip link set "$BRIDGE" up
    start_node ctl "$NET.2"
    for ((n = 1; n <= k; n++)); do
        mkdir -p "$STATE/spool/n$n"
        start_node "n$n" "$NET.$((10 + n))"
    done
    start_munge
    pid=$(holder_pid ctl)
    nsenter -t "$pid" -n -u -m -- slurmctld -f "$STATE/slurm.conf" -i ||
        die "slurmctld did not start (see $STATE/slurmctld.log)"
    for ((n = 1; n <= k; n++)); do
        pid=$(holder_pid "n$n")
        nsenter -t "$pid" -n -u -m -- slurmd -f "$STATE/slurm.conf" -N "n$n" ||
            die "slurmd on n$n did not start (see $STATE/slurmd-n$n.log)"
    done
    # slurmctld and slurmd daemonize: their pids from their pid files
    sleep 0.2
    for f in "$STATE"/slurmctld.pid "$STATE"/slurmd-*.pid; do
        [ -s "$f" ] && cat "$f" >>"$STATE/pids"
    done
    wait_idle
    BRINGING_UP=
    echo "cluster.sh: $k nodes up (n1..n$k on $NET.0/24), state in $STATE"
}

cmd_down() {
    local pid n i

    need_root
    if [ -f "$STATE/pids" ]; then
        # daemons first, then the namespaces' holders; by the pids we started
        for f in "$STATE"/slurmd-*.pid "$STATE"/slurmctld.pid; do
            [ -s "$f" ] && echo "$(cat "$f")"
        done | sort -u >>"$STATE/pids"
        while read -r pid; do
            kill -TERM "$pid" 2>/dev/null
        done <"$STATE/pids"
        for ((i = 0; i < 50; i++)); do
            n=0
            while read -r pid; do
                kill -0 "$pid" 2>/dev/null && n=$((n + 1))
            done <"$STATE/pids"
            [ "$n" = 0 ] && break
            sleep 0.1
        done
        while read -r pid; do
            kill -KILL "$pid" 2>/dev/null
        done <"$STATE/pids"
    fi
    for link in $(ip -o link show 2>/dev/null | sed -n "s/^[0-9]*: \\(${LINK}[^@:]*\\).*/\\1/p"); do
        ip link del "$link" 2>/dev/null
    done
    ip link del "$BRIDGE" 2>/dev/null
    rm -rf "$STATE" "$PMIX_BASE"
    echo "cluster.sh: down"
}

cmd_run() {
    [ -f "$STATE/nodes" ] || die "not up"
    export SLURM_CONF=$STATE/slurm.conf
    on_node n1 "$@"
}

cmd_status() {
    [ -f "$STATE/nodes" ] || { echo "down"; return 1; }
    echo "up: $(cat "$STATE/nodes") nodes, state in $STATE"
    SLURM_CONF=$STATE/slurm.conf nsenter -t "$(holder_pid n1)" -n -u -m -- sinfo
}

case "${1:-}" in
up) shift; cmd_up "$@" ;;
down) cmd_down ;;
run) shift; [ $# -gt 0 ] || die "run CMD..."; cmd_run "$@" ;;
on) shift; [ $# -gt 1 ] || die "on NODE CMD..."; node=$1; shift
    export SLURM_CONF=$STATE/slurm.conf; on_node "$node" "$@" ;;
hostfile) [ -f "$STATE/hostfile" ] || die "not up"; echo "$STATE/hostfile" ;;
agent) [ -f "$STATE/agent" ] || die "not up"; echo "$STATE/agent" ;;
status) cmd_status ;;
*) sed -n '3,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
