# SPDX-License-Identifier: BSD-3-Clause
# Plot of bench/results/coll.dat, written by bench/run_coll.sh:
#   gnuplot -e "datafile='bench/results/coll.dat'; outfile='bench/results/coll.png'; \
#               colls='bcast reduce allreduce'; nps='2 4 8 16 32'" bench/plot_coll.gp
# (colls and nps default to every collective and 2..32).
# One panel per collective: ratio of medians amcoll / Open MPI against bytes per
# rank, one line per task count N; a last panel with allreduce's absolute
# latencies. Columns of the data (see its header): 1 coll, 2 bytes, 3 N,
# 4 amcoll median µs, 7 Open MPI median µs, 10 ratio; '?' = no number.

if (!exists("datafile")) datafile = "bench/results/coll.dat"
if (!exists("outfile"))  outfile  = "bench/results/coll.png"
if (!exists("colls"))    colls    = "bcast reduce allreduce gather scatter allgather alltoall " . \
                                   "reduce_scatter_block reduce_scatter scan exscan " . \
                                   "gatherv scatterv allgatherv alltoallv"
if (!exists("nps"))      nps      = "2 4 8 16 32"

npanels = words(colls) + 1
ncols   = (npanels > 4) ? 4 : npanels
nrows   = int((npanels + ncols - 1) / ncols)

set terminal pngcairo size 460*ncols, 400*nrows + 60 enhanced font "DejaVu Sans,9"
set output outfile
set datafile missing "?"
set grid xtics ytics mytics lc rgb "#dddddd"
set logscale x 2
set xtics ("1" 1, "8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "1M" 1048576)
set xrange [0.7:1.5*1048576]
set xlabel "bytes per rank"
set logscale y 2
set format y "%g"
# One row of keys at the top; the y range leaves room for it above 16.
set key top center horizontal maxrows 1 reverse Left samplen 1.5 width 0 font ",8" opaque

# One colour per N, the same in every panel.
ncolor(i) = word("#1f77b4 #2ca02c #ff7f0e #d62728 #9467bd #8c564b #e377c2 #7f7f7f #17becf", (i - 1) % 9 + 1)

if (!exists("how")) how = "median over reps of the slowest rank"
set multiplot layout nrows, ncols title \
    sprintf("amcoll / Open MPI latency ratio per collective (%s; below 1: amcoll faster)", how) font ",11"

do for [ci = 1:words(colls)] {
    cname = word(colls, ci)
    set title cname font ",10" noenhanced
    set ylabel "amcoll / Open MPI"
    set yrange [1.0/80:128]
    set ytics ("1/64" 1.0/64, "1/16" 1.0/16, "1/4" 0.25, "1" 1, "4" 4, "16" 16, "64" 64)
    plot for [k = 1:words(nps)] datafile \
             u ((strcol(1) eq cname && $3 == word(nps, k) + 0) ? $2 : NaN):10 \
             w lp lw 2 pt 7 ps 0.6 lc rgb ncolor(k) t sprintf("N=%s", word(nps, k)), \
         1 w l dt 2 lc rgb "#000000" notitle
}

# Absolute latencies of allreduce: amcoll solid, Open MPI dashed.
set title "allreduce latency (solid amcoll, dashed Open MPI)" font ",10"
set ylabel "µs per call"
set logscale y 10
set autoscale y
set ytics autofreq
set format y "10^{%L}"
set key top left box opaque font ",8" maxrows 5 width 0
plot for [k = 1:words(nps)] datafile \
         u ((strcol(1) eq "allreduce" && $3 == word(nps, k) + 0) ? $2 : NaN):4 \
         w lp lw 2 pt 7 ps 0.5 lc rgb ncolor(k) t sprintf("N=%s", word(nps, k)), \
     for [k = 1:words(nps)] datafile \
         u ((strcol(1) eq "allreduce" && $3 == word(nps, k) + 0) ? $2 : NaN):7 \
         w lp lw 1 dt 2 pt 6 ps 0.5 lc rgb ncolor(k) notitle

unset multiplot
