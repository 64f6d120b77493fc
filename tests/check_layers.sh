#!/usr/bin/env bash
# Lists the include edges between the library's folders and fails on one that
# points up. The layers, top to bottom:
#   am_coll/    public API, the engines (barrier, schedules) and algorithms
#   ctrl/       per-communicator control structure, early-arrival store
#   handlers/   wire header, header validation and dispatch table
#   transport/  UCX active messages, PMIx bootstrap, the fake transport
#   base/       status codes, log, clock, locks
# A folder may include its own headers and those of any folder below it.
# In mpi/ and ompi/ the modules (X.c with X.h) include each other without a
# loop.
set -u
src=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$src/am_coll" ] || src=$(cd "$src/.." && pwd) # run from tests/
cd "$src" || exit 1

rank() {
    case $1 in
        base) echo 0 ;; transport) echo 1 ;; handlers) echo 2 ;; ctrl) echo 3 ;; am_coll) echo 4 ;;
        *) echo -1 ;;
    esac
}

bad=0
edges=$(for d in base transport handlers ctrl am_coll; do
    [ -d "$d" ] || continue
    for f in "$d"/*.c "$d"/*.h; do
        [ -f "$f" ] || continue
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/[^"]*".*/\1/p' "$f" |
            while read -r t; do
                [ "$t" = "$d" ] || echo "$d $t $f"
            done
    done
done)

echo "include edges between folders (from -> to: files):"
echo "$edges" | awk 'NF { n[$1 " -> " $2]++ } END { for (k in n) printf "  %-24s %d\n", k, n[k] }' | sort
while read -r from to file; do
    [ -n "$from" ] || continue
    rf=$(rank "$from"); rt=$(rank "$to")
    if [ "$rt" -lt 0 ] || [ "$rt" -gt "$rf" ]; then
        echo "FAIL: $file includes $to/ (a layer above $from/)"
        bad=$((bad + 1))
    fi
done <<<"$edges"
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
        bad=$((bad + 1))
    else
        echo "no include loop among the modules of $d/"
    fi
done
if [ "$bad" -gt 0 ]; then
    echo "check_layers: $bad include(s) point up"
    exit 1
fi
echo "check_layers: every include points down"
exit 0
