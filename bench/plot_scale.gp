# SPDX-License-Identifier: BSD-3-Clause
# Plot of bench/results/scale.dat, written by bench/run_sim_scale.sh: the
# scale simulator's predicted latency against N, one data block per line
# (columns: N, predicted us, correct, wall s).
if (!exists("datafile")) datafile = "bench/results/scale.dat"
if (!exists("outfile"))  outfile  = "bench/results/scale.png"
if (!exists("nodesize")) nodesize = 32

set terminal pngcairo size 1400,560 enhanced font "DejaVu Sans,10"
set output outfile
set key top left box opaque
set grid xtics ytics lc rgb "#dddddd"
set logscale x 2
set logscale y 10
set format x "2^{%L}"
set format y "%g"
set xlabel sprintf("ranks N (%d per node)", nodesize)
set multiplot layout 1,2 title "amcoll scale simulator: predicted completion time (LogGP; intra-node fitted to UCX here, inter-node HDR InfiniBand)"

set ylabel "predicted µs"
set title "latency-bound: barrier, 8 B allreduce, 8 B bcast"
plot datafile i 0 u 1:2 w lp lw 2 pt 7 lc rgb "#d62728" t "barrier dissemination (flat)", \
     datafile i 1 u 1:2 w lp lw 2 pt 7 dt 2 lc rgb "#d62728" t "barrier hierarchical (leaders)", \
     datafile i 2 u 1:2 w lp lw 2 pt 6 dt 3 lc rgb "#d62728" t "barrier multi-lane", \
     datafile i 3 u 1:2 w lp lw 2 pt 5 lc rgb "#1f77b4" t "allreduce recursive doubling (flat)", \
     datafile i 4 u 1:2 w lp lw 2 pt 5 dt 2 lc rgb "#1f77b4" t "allreduce hierarchical (leaders)", \
     datafile i 5 u 1:2 w lp lw 2 pt 4 dt 3 lc rgb "#1f77b4" t "allreduce multi-lane", \
     datafile i 6 u 1:2 w lp lw 2 pt 9 lc rgb "#2ca02c" t "bcast binomial (flat)", \
     datafile i 7 u 1:2 w lp lw 2 pt 9 dt 2 lc rgb "#2ca02c" t "bcast hierarchical"

set title "1 MiB bcast"
plot datafile i 8 u 1:2 w lp lw 2 pt 7 lc rgb "#9467bd" t "pipeline (32 KiB segments)", \
     datafile i 9 u 1:2 w lp lw 2 pt 5 lc rgb "#8c564b" t "binomial"
unset multiplot
