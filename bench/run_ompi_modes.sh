#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The ways an unmodified MPI program runs its collectives, timed by the OSU
# micro-benchmarks themselves (built apart, not part of this project):
#   default  the MPI as installed (Open MPI: its coll/tuned, pml ob1)
#   comp     Open MPI with the coll/amcoll component (--mca coll_amcoll_enable 1)
#   preload  LD_PRELOAD=libamcoll_mpi.so (the PMPI library)
# With AMC_MODES_MPI=mpich: OSU built with mpicc.mpich, run by
# mpiexec.mpich (Hydra, no PMIx: amcoll starts by MPI's exchange), the
# modes default (plain MPICH) and preload (libamcoll_mpich.so).
# The modes alternate run by run (their order rotates each run) so they see
# the same machine; each cell reports the median over runs of the mode's
# latency and of comp/default and preload/default taken within one run.
#
#   bash bench/run_ompi_modes.sh OSU_COLLECTIVE_DIR [BUILD_DIR] [runs]
#
# AMC_MODES_NP (default "2 4 8"), AMC_MODES_COLLS (default the blocking
# collectives), AMC_MODES_SIZES (default "8 64 1024"), AMC_MODES_ITERS
# (default 2000), AMC_MODES_WARMUP (default 200; plain MPICH spins where
# ranks share cores, so oversubscribed runs want fewer), AMC_MODES_COMP_PATH (the folder holding
# mca_coll_amcoll.so; default BUILD_DIR's, empty when the component is
# installed into Open MPI's own component folder).
set -uo pipefail
osu=$(cd "${1:?usage: run_ompi_modes.sh OSU_COLLECTIVE_DIR [BUILD_DIR] [runs]}" && pwd)
build=$(cd "${2:-build}" && pwd)
runs=${3:-5}
nps=${AMC_MODES_NP:-"2 4 8"}
colls=${AMC_MODES_COLLS:-"barrier bcast reduce allreduce gather scatter allgather alltoall reduce_scatter"}
sizes=${AMC_MODES_SIZES:-"8 64 1024"}
iters=${AMC_MODES_ITERS:-2000}
warmup=${AMC_MODES_WARMUP:-200}
mpi=${AMC_MODES_MPI:-ompi}
if [ "$mpi" = mpich ]; then
    preload=$build/.libs/libamcoll_mpich.so
    launcher=(mpiexec.mpich)
    args=()
    modes=(default preload)
else
    comp_path=${AMC_MODES_COMP_PATH-$(dirname "$(find "$build" -name mca_coll_amcoll.so -path '*/.libs/*' | head -1)")}
    preload=$build/.libs/libamcoll_mpi.so
    ompi_dir=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
    launcher=(mpirun)
    args=(--oversubscribe --bind-to none)
    [ "$(id -u)" -eq 0 ] && args+=(--allow-run-as-root)
    modes=(default comp preload)
fi
[ -f "$preload" ] || { echo "run_ompi_modes: no $preload" >&2; exit 1; }
nmodes=${#modes[@]}

mode_args() {
    case $1 in
    default) ;;
    comp)
        [ -n "$comp_path" ] && printf '%s\n' --mca mca_base_component_path "$comp_path:$ompi_dir"
        printf '%s\n' --mca coll_amcoll_enable 1 ;;
    preload)
        if [ "$mpi" = mpich ]; then
            printf '%s\n' -genv LD_PRELOAD "$preload"
        else
            printf '%s\n' -x "LD_PRELOAD=$preload"
        fi ;;
    esac
}

out=$(mktemp)
for ((r = 0; r < runs; r++)); do
    for np in $nps; do
        for c in $colls; do
            for ((k = 0; k < nmodes; k++)); do
                m=${modes[$(((k + r) % nmodes))]}
                mapfile -t margs < <(mode_args "$m")
                if [ "$c" = barrier ]; then
                    opts=(-i "$iters" -x "$warmup")
                else
                    lo=${sizes%% *}; hi=${sizes##* }
                    opts=(-m "$lo:$hi" -i "$iters" -x "$warmup")
                fi
                timeout 300 "${launcher[@]}" "${args[@]}" "${margs[@]}" -np "$np" \
                    "$osu/blocking/osu_$c" "${opts[@]}" 2>/dev/null |
                    awk -v m="$m" -v r="$r" -v np="$np" -v c="$c" -v sizes=" $sizes " '
                        /^#/ || NF < 1 { next }
                        c == "barrier" && NF == 1 { print m, r, np, c, 0, $1; next }
                        NF < 2 { next }
                        index(sizes, " " $1 " ") { print m, r, np, c, $1, $2 }' >>"$out"
            done
        done
    done
done

awk -v hascomp="$([ "$mpi" = mpich ] && echo 0 || echo 1)" '
function med(s,   n, a, i, j, t) { n = split(s, a, " "); if (!n) return -1
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
function lo(s,   n, a, i, x) { n = split(s, a, " "); x = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < x + 0) x = a[i]; return x }
function hi(s,   n, a, i, x) { n = split(s, a, " "); x = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > x + 0) x = a[i]; return x }
{ key = $3 " " $4 " " $5; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  us[$1, key] = us[$1, key] " " $6; v[$1, $2, key] = $6 }
END {
  if (hascomp) {
    printf "| N | collective | bytes | default us | comp us | preload us | comp/default | preload/default |\n"
    printf "|---|---|---|---|---|---|---|---|\n"
  } else {
    printf "| N | collective | bytes | default us | preload us | preload/default |\n"
    printf "|---|---|---|---|---|---|\n"
  }
  for (i = 1; i <= n; i++) { key = order[i]; rc = ""; rp = ""
    for (r = 0; r < '"$runs"'; r++) {
      if ((("default", r, key) in v) && (("comp", r, key) in v)) rc = rc " " v["comp", r, key] / v["default", r, key]
      if ((("default", r, key) in v) && (("preload", r, key) in v)) rp = rp " " v["preload", r, key] / v["default", r, key] }
    split(key, kb, " ")
    mc = med(rc); mp = med(rp)
    if (hascomp)
      printf "| %s | %s | %s | %.2f | %.2f | %.2f | %.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] |\n", kb[1], kb[2], kb[2] == "barrier" ? "-" : kb[3],
        med(us["default", key]), med(us["comp", key]), med(us["preload", key]), mc, lo(rc), hi(rc), mp, lo(rp), hi(rp)
    else
      printf "| %s | %s | %s | %.2f | %.2f | %.2f [%.2f-%.2f] |\n", kb[1], kb[2], kb[2] == "barrier" ? "-" : kb[3],
        med(us["default", key]), med(us["preload", key]), mp, lo(rp), hi(rp)
    if (mc > 0) { lc[kb[1]] += log(mc); nc[kb[1]]++ }
    if (mp > 0) { lp[kb[1]] += log(mp); np_[kb[1]]++
      if (mp > worst[kb[1]]) { worst[kb[1]] = mp; wcell[kb[1]] = kb[2] (kb[2] == "barrier" ? "" : " " kb[3] " B") } } }
  for (k in np_) {
    printf "N=%s geometric mean:", k
    if (hascomp) printf " comp/default %.3f,", (k in nc) ? exp(lc[k] / nc[k]) : -1
    printf " preload/default %.3f (%d cells, %d runs), its highest cell %.2f (%s)\n", exp(lp[k] / np_[k]), np_[k],
      '"$runs"', worst[k], wcell[k] }
}' "$out"
rm -f "$out"
