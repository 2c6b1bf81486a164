# Latency against message size for each collective, each MPI natively and with the shmcoll
# plugin. usage: gnuplot -e "dir='FOLDER'; np=2" bench/plot_mpi.gp, after
# bench/summarize_mpi.py FOLDER has written the plot-*.dat files; an MPI the runs left out
# (all NaN in its columns) has no key entry: -e "... mpis='openmpi'" (default: both).
if (!exists("mpis")) mpis = "openmpi mpich"
ompi = strstrt(mpis, "openmpi") > 0
mpich = strstrt(mpis, "mpich") > 0
set terminal pngcairo size 1500,900 font ",10"
set output sprintf("%s/latency-np%d.png", dir, np)
set multiplot layout 2,3 title sprintf("OSU-style average latency, np=%d (median of runs; lower is better)", np)
set logscale xy
set format x "%.0s%cB"
set xlabel "message size per rank"
set ylabel "us"
set key top left
set grid
do for [coll in "bcast scatter scatterv gather gatherv"] {
  set title coll
  f = sprintf("%s/plot-np%d-%s.dat", dir, np, coll)
  plot f using 1:2 with linespoints lc rgb "#1f77b4" pt 7 ps 0.5 title (ompi ? "Open MPI" : ""), \
       f using 1:3 with linespoints lc rgb "#1f77b4" dt 2 pt 5 ps 0.5 title (ompi ? "Open MPI + shmcoll" : ""), \
       f using 1:4 with linespoints lc rgb "#d62728" pt 7 ps 0.5 title (mpich ? "MPICH" : ""), \
       f using 1:5 with linespoints lc rgb "#d62728" dt 2 pt 5 ps 0.5 title (mpich ? "MPICH + shmcoll" : ""), \
       f using 1:6 with lines lc rgb "#7f7f7f" dt 3 title "memcpy (rank 0)", \
       f using 1:7 with lines lc rgb "#000000" dt 4 title "copy floor (all ranks)"
}
unset multiplot
