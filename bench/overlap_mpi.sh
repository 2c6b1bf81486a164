#!/usr/bin/env bash
# How much of a non-blocking collective through the plugin hides behind computation, against
# the MPI's own (with the no-op preload), by OSU's method on mpi-bench: per round, each variant
# runs the MPI_I* call with MPI_Wait right after (pure), with COMPUTE_US of busy computation
# between them (overall), and the same with 0 bytes (compute: the computation's own time, a
# sleep overshoots); overlap = 100 x (1 - (overall - compute) / pure). Variants: the plugin
# without and with its progress thread (SHMCOLL_PROGRESS_THREAD), and the MPI alone; their
# order alternates by round. Prints the medians over the rounds. IDLE=1: the computation
# sleeps (mpi-bench --idle), leaving the core to a progress thread.
# usage: [MPI=openmpi|mpich] [NP=2] [COLL=bcast] [BYTES=4M] [COMPUTE_US=5000] [IDLE=1]
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
# time_us PRELOAD THREAD COMPUTE [BYTES]: the mean time per call, averaged over the ranks.
time_us() {
  local size=${4:-$bytes}
  local args=("$build/bench/mpi-bench-$mpi" --coll "$coll" --min-bytes "$size"
              --max-bytes "$size" --nonblocking --compute-us "$3")
  [ "${IDLE:-0}" = 1 ] && [ "$3" != 0 ] && args+=(--idle)
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
    echo "$variant $(time_us "$preload" "$thread" 0) $(time_us "$preload" "$thread" "$compute")" \
      "$(time_us "$preload" "$thread" "$compute" 0)"
  done >> "$results"
done
python3 - "$results" "$compute" "$mpi" "$np" "$coll" "$bytes" "${IDLE:-0}" <<'PY'
import collections, statistics, sys
path, compute, mpi, np, coll, size, idle = sys.argv[1], float(sys.argv[2]), *sys.argv[3:]
idle = idle == "1"
runs = collections.defaultdict(list)
for line in open(path):
    variant, pure, overall, alone = line.split()
    pure, overall, alone = float(pure), float(overall), float(alone)
    runs[variant].append((pure, overall, alone, 100 * (1 - (overall - alone) / pure)))
print(f"# {mpi}, np={np}, {coll} {size}, {compute:.0f} us of computation"
      f"{' (sleeping)' if idle else ''}; medians of "
      f"{len(runs['mpi'])} rounds")
print("| variant | pure us | overall us | compute us | overlap % |")
print("|---|---|---|---|---|")
for variant in ("plugin", "plugin+thread", "mpi"):
    rows = runs[variant]
    med = lambda i: statistics.median(r[i] for r in rows)
    print(f"| {variant} | {med(0):.1f} | {med(1):.1f} | {med(2):.1f}"
          f" | {max(0.0, min(100.0, med(3))):.0f} |")
PY
