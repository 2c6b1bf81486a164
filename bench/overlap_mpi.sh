#!/usr/bin/env bash
# How much of a non-blocking collective through the plugin hides behind computation, against
# the MPI's own (with the no-op preload), by OSU's method on mpi-bench: per round, each variant
# runs the MPI_I* call with MPI_Wait right after (pure) and with COMPUTE_US of busy computation
# between them (overall); overlap = 100 x (1 - (overall - COMPUTE_US) / pure). Variants: the
# plugin without and with its progress thread (SHMCOLL_PROGRESS_THREAD), and the MPI alone;
# their order alternates by round. Prints the medians over the rounds.
# usage: [MPI=openmpi|mpich] [NP=2] [COLL=bcast] [BYTES=4M] [COMPUTE_US=5000]
#        bench/overlap_mpi.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
mpi=${MPI:-openmpi}
np=${NP:-2}
coll=${COLL:-bcast}
bytes=${BYTES:-4M}
compute=${COMPUTE_US:-5000}
plugin=$(realpath "$build/lib/libshmcoll_mpi_$mpi.so")
nop=$(realpath "$build/lib/libshmcoll_nop_$mpi.so")
# time_us PRELOAD THREAD COMPUTE: the mean time per call, averaged over the ranks.
time_us() {
  local args=("$build/bench/mpi-bench-$mpi" --coll "$coll" --min-bytes "$bytes"
              --max-bytes "$bytes" --nonblocking --compute-us "$3")
  if [ "$mpi" = openmpi ]; then
    mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" -x LD_PRELOAD="$1" \
      -x SHMCOLL_PROGRESS_THREAD="$2" "${args[@]}"
  else
    mpiexec.mpich -n "$np" -env LD_PRELOAD "$1" -env SHMCOLL_PROGRESS_THREAD "$2" "${args[@]}"
  fi 2>/dev/null | awk -F, 'NR > 1 {print $6}'
}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
  order="plugin plugin+thread mpi"
  [ $((round % 2)) = 0 ] && order="mpi plugin+thread plugin"
  for variant in $order; do
    case $variant in
      plugin) preload=$plugin thread=0 ;;
      plugin+thread) preload=$plugin thread=1 ;;
      mpi) preload=$nop thread=0 ;;
    esac
    echo "$variant $(time_us "$preload" "$thread" 0) $(time_us "$preload" "$thread" "$compute")"
  done >> "$results"
done
python3 - "$results" "$compute" "$mpi" "$np" "$coll" "$bytes" <<'PY'
import collections, statistics, sys
path, compute, mpi, np, coll, size = sys.argv[1], float(sys.argv[2]), *sys.argv[3:]
runs = collections.defaultdict(list)
for line in open(path):
    variant, pure, overall = line.split()
    pure, overall = float(pure), float(overall)
    runs[variant].append((pure, overall, 100 * (1 - (overall - compute) / pure)))
print(f"# {mpi}, np={np}, {coll} {size}, {compute:.0f} us of computation; medians of "
      f"{len(runs['mpi'])} rounds")
print("| variant | pure us | overall us | overlap % |")
print("|---|---|---|---|")
for variant in ("plugin", "plugin+thread", "mpi"):
    rows = runs[variant]
    med = lambda i: statistics.median(r[i] for r in rows)
    print(f"| {variant} | {med(0):.1f} | {med(1):.1f} | {max(0.0, min(100.0, med(2))):.0f} |")
PY
