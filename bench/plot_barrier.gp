# SPDX-License-Identifier: BSD-3-Clause
# Plot of bench/results/barrier.dat, written by bench/run_barrier.sh:
#   gnuplot -e "datafile='bench/results/barrier.dat'; outfile='bench/results/barrier.png'" bench/plot_barrier.gp
# Columns (see the header line of the data): 1 N; per method median q1 q3 min max
# in µs at 2 amcoll, 7 layered, 12 openmpi, 17 am_pingpong; 22 amcoll/layered,
# 23 amcoll/openmpi. '?' = not measured.

if (!exists("datafile")) datafile = "bench/results/barrier.dat"
if (!exists("outfile"))  outfile  = "bench/results/barrier.png"

set terminal pngcairo size 1400,560 enhanced font "DejaVu Sans,10"
set output outfile
set datafile missing "?"
set key top left box opaque
set grid xtics ytics mytics lc rgb "#dddddd"
set logscale x 2
set xtics (2, 4, 8, 16, 32, 64, 128)
set xlabel "tasks N (one node, oversubscribed past 2 cores)"
# Keep the first and last task counts off the frame, tic labels included.
set offsets graph 0.06, graph 0.06, 0, 0

set multiplot layout 1,2 title "Barrier latency: amcoll AM barrier vs the same algorithm on UCP tags vs Open MPI (median over reps, bars = min..max)"

set logscale y 10
set format y "%g"
set ylabel "µs per barrier (ping-pong: one-way µs)"
plot datafile u 1:2:5:6   w yerrorlines lw 2 pt 7  lc rgb "#d62728" t "amcoll AM barrier", \
     datafile u 1:7:10:11 w yerrorlines lw 2 pt 5  lc rgb "#1f77b4" t "layered: dissemination on UCP tags", \
     datafile u 1:12:15:16 w yerrorlines lw 2 pt 9  lc rgb "#2ca02c" t "Open MPI MPI\\_Barrier (ob1+tuned)", \
     datafile u 1:17:20:21 w yerrorlines lw 1 pt 13 dt 2 lc rgb "#555555" t "raw UCX AM ping-pong, one-way (floor)"

# Log scale too: ratios near 1 stay readable beside ratios far above it.
set ylabel "ratio of medians (lower is better for amcoll)"
plot datafile u 1:22 w lp lw 2 pt 7 lc rgb "#1f77b4" t "amcoll / layered", \
     datafile u 1:23 w lp lw 2 pt 9 lc rgb "#2ca02c" t "amcoll / Open MPI", \
     1.0 w l dt 2 lc rgb "#000000" t "parity"

unset multiplot
