#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Where a collective's time goes across two hosts, from the kernel's side:
# coll_bench (OSU's method, one rank on each of two nodes of the emulated
# cluster, Open MPI on UCX's PML) runs under `perf record` of the socket
# system calls, once with amcoll's calls only and once with Open MPI's, and
# this prints per rank and method the median of
#   - send: one sendmsg/sendto, enter to exit. Over the namespaces' veth
#     link the sender's system call carries the message through the peer's
#     TCP receive, so this is most of the one-way latency;
#   - gap: a message read (recvfrom's exit) to the next send's entry, which
#     is the library's own work on the critical path (handler, completion,
#     return, the benchmark's loop, the next call, up to its send);
#   - sends/call: sendmsg + sendto per timed call (warm-up and calibration
#     included alike for both methods: compare, do not read as absolute).
# Medians over tens of thousands of events move less with the machine's
# load than end-to-end times do. perf's tracing adds to both methods alike.
#
#   bench/run_cluster_trace.sh [colls [bytes]]   (default bcast,scatterv 8)
#
# Root only; needs perf with the syscalls tracepoints. Brings the cluster up
# and down unless one is up already (then it is left up).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
colls=${1:-bcast,scatterv}
bytes=${2:-8}
iters=${AMC_TRACE_ITERS:-20000}
cluster="$top/tests/cluster/cluster.sh"
bench=${AMC_BENCH_BIN:-$top/build/bench/coll_bench}
[ -x "$bench" ] || { echo "no $bench: build first (./build.sh)"; exit 1; }
command -v perf >/dev/null 2>&1 || { echo "no perf"; exit 1; }

if ! bash "$cluster" status >/dev/null 2>&1; then
    bash "$cluster" up 2 || exit 1
    trap 'bash "$cluster" down >/dev/null 2>&1; rm -rf "$work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi
hostfile=$(bash "$cluster" hostfile)
agent=$(bash "$cluster" agent)
work=$(mktemp -d /tmp/amc-trace.XXXXXX)
cat >"$work/rec.sh" <<EOF
#!/bin/bash
exec perf record -q -e syscalls:sys_exit_recvfrom,syscalls:sys_enter_sendmsg,syscalls:sys_exit_sendmsg,syscalls:sys_enter_sendto,syscalls:sys_exit_sendto -o "$work/\$(hostname).\$1.data" "\${@:2}"
EOF
chmod +x "$work/rec.sh"

for coll in ${colls//,/ }; do
    for m in amcoll openmpi; do
        (cd "$top/build" && bash "$cluster" run mpirun --allow-run-as-root --bind-to none \
            --hostfile "$hostfile" --mca plm_rsh_agent "$agent" --map-by node -np 2 \
            --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
            "$work/rec.sh" "$coll.$m" "$bench" -O -m "$m" -c "$coll" -s "$bytes" -i "$iters" \
            -r 3 2>&1) | grep '^RESULT' | sed "s/^/# /"
    done
done
# median of the numbers on stdin (the first fifth, start-up and warm-up, dropped)
median() {
    awk '{ v[NR] = $1 } END { for (i = int(NR / 5) + 1; i <= NR; i++) print v[i] }' |
        sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; else printf "-" }'
}
for f in "$work"/*.data; do
    # the main thread's events (the one with most), as "gap us" and "send us"
    perf script --ns -i "$f" -F tid,time,event,trace 2>/dev/null >"$work/events"
    main=$(awk '{ print $1 }' "$work/events" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
    awk -v main="$main" '
        $1 != main { next }
        { t = $2 + 0 }
        $3 ~ /sys_exit_recvfrom/ { if ((length($4) < 12) && ($4 != "0x0")) last = t; next }
        $3 ~ /sys_enter_send/ { n++; s0 = t; if (last) { print "gap", (t - last) * 1e6; last = 0 }; next }
        $3 ~ /sys_exit_send/ && s0 { print "send", (t - s0) * 1e6; s0 = 0 }
        END { print "sends", n }' "$work/events" >"$work/vals"
    printf "%-24s send %s us  gap %s us  sends/call %s\n" "$(basename "$f" .data)" \
        "$(awk '$1 == "send" { print $2 }' "$work/vals" | median)" \
        "$(awk '$1 == "gap" { print $2 }' "$work/vals" | median)" \
        "$(awk -v c="$iters" '$1 == "sends" { printf "%.2f", $2 / (3 * c) }' "$work/vals")"
done
