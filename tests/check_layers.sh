#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fails on an arrow between the library's rooms that points up, and on a
# circle between its modules (tests/include_graph.sh: a module is a .c and
# the .h of its stem; an arrow is an include or the use of a name another
# module defines). The rooms, top to bottom:
#   am_coll/tools/    the command-line tools (amc_info, amc_goal)
#   am_coll/goal/     GOAL: graphs, their text, built-ins, timelines (over the
#                     public API)
#   am_coll/api/      the public API (include/amcoll.h) over one default context
#   am_coll/barrier/  the barrier engine on the control structure, its
#                     handlers, and the small collectives on its rounds
#   am_coll/coll/     the schedule engine: start, arrival and completion
#                     handlers, cache of schedules, abort notices
#   am_coll/alg/      the algorithms (one file each), selection and tuning
#   am_coll/context/  the context and its resources: communicators, requests,
#                     configuration, ops, datatypes, waiting, the progress
#                     thread, flow control, deferral, dispatch by context id
#   am_coll/sched/    the schedule graph and its builder
#   ctrl/             per-communicator control structure, early-arrival store
#   handlers/         wire header, header validation and dispatch table
#   transport/        UCX active messages, PMIx bootstrap, the fake transport
#   base/             status codes, log, clock, locks
# A room may use its own modules and those of any room below it.
# In mpi/ and ompi/ the modules (X.c with X.h) include each other without a
# loop.
set -u
src=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$src/am_coll" ] || src=$(cd "$src/.." && pwd) # run from tests/
cd "$src" || exit 1

rooms="base transport handlers ctrl am_coll/sched am_coll/context am_coll/alg am_coll/coll
       am_coll/barrier am_coll/api am_coll/goal am_coll/tools"

# Arrows that still point up and the modules still on a circle, were there
# any: a known debt, listed so that a new one fails; take a line out when it
# is paid. (Empty lists: every arrow points down and there is no circle.)
known_up=""
known_circle=""

top=$(pwd)
edges=$(srcdir=$top bash tests/include_graph.sh --edges) || exit 1
sccs=$(srcdir=$top bash tests/include_graph.sh --sccs) || exit 1

echo "$edges" | awk -v rooms="$rooms" -v known_up="$known_up" -v known_circle="$known_circle" -v sccs="$sccs" '
function room(m,   a) { split(m, a, "/"); return (a[1] == "am_coll") ? a[1] "/" a[2] : a[1] }
BEGIN {
    n = split(rooms, r, /[ \t\n]+/); k = 0
    for (i = 1; i <= n; i++) if (r[i] != "") rank[r[i]] = k++
    n = split(known_up, l, "\n")
    for (i = 1; i <= n; i++) { split(l[i], p, " "); if (p[1] != "") up_ok[p[1] " " p[2]] = 1 }
    n = split(known_circle, l, /[ \t\n]+/)
    for (i = 1; i <= n; i++) if (l[i] != "") circ_ok[l[i]] = 1
    bad = 0
}
NF >= 2 {
    a = room($1); b = room($2)
    if (!(a in rank)) { print "FAIL: " $1 " is in no known room (" a ")"; bad++; next }
    if (!(b in rank)) { print "FAIL: " $2 " is in no known room (" b ")"; bad++; next }
    if (a != b) count[a " -> " b]++
    if (rank[b] > rank[a]) {
        $1 = $1; line = $0
        if ((($1 " " $2) in up_ok)) { seen_up[$1 " " $2] = 1; known++; print "known: " line }
        else { print "FAIL: " line " (" b "/ is above " a "/)"; bad++ }
    }
}
END {
    print "arrows between rooms (from -> to: modules that use it):"
    for (e in count) printf "  %-36s %d\n", e, count[e] | "sort"
    close("sort")
    n = split(sccs, c, "\n")
    for (i = 1; i <= n; i++) {
        m = split(c[i], mods, " ")
        if (m < 2) continue
        for (j = 1; j <= m; j++) {
            if (!(mods[j] in circ_ok)) { print "FAIL: circle (" m " modules):" c[i]; bad++; break }
        }
        if (j > m) { print "known circle (" m " modules):" c[i]; known++ }
    }
    if (bad > 0) { print "check_layers: " bad " arrow(s) up or circle(s)"; exit 1 }
    if (known > 0) print "check_layers: " known " known arrow(s) up or circle(s) left, none new"
    else print "check_layers: every arrow points down, no circles"
    exit 0
}'
rc=$?
# Within mpi/ and ompi/: a module is X.c with X.h; no two include each
# other, directly or around a loop (tsort finds a loop in the include edges).
for d in mpi ompi; do
    [ -d "$d" ] || continue
    medges=$(for f in "$d"/*.c "$d"/*.h; do
        [ -f "$f" ] || continue
        m=$(basename "$f" | sed 's/\.[ch]$//')
        sed -n "s|^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$d/\([a-z_]*\)\.h\".*|\1|p" "$f" |
            while read -r t; do
                [ "$t" = "$m" ] || echo "$m $t"
            done
    done)
    if [ -n "$medges" ] && ! echo "$medges" | tsort >/dev/null 2>&1; then
        echo "FAIL: the modules of $d/ include each other around a loop:"
        echo "$medges" | tsort 2>&1 >/dev/null | sed 's/^/    /'
        rc=1
    else
        echo "no include loop among the modules of $d/"
    fi
done
exit $rc
