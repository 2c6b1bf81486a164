#!/usr/bin/env bash
# Compares each MPI's own collectives with the shmcoll plugin, on the same mpi-bench binary,
# back to back, for np=2 and np=4 (one rank per core where there are enough cores). The MPI's
# own runs preload lib/libshmcoll_nop_<mpi>.so, a library that does nothing, from beside the
# plugin under a name of the same length: both runs then carry an environment of one length,
# which shifts the stack alike. Repetitions alternate the order (native first in odd ones,
# the plugin first in even ones: ABBA), so that a machine that drifts moves both alike;
# bench/summarize_mpi.py reports the median of the per-repetition ratios. With more
# ranks than cores, iterations are capped at OVERSUBSCRIBED_ITERATIONS (default 50): MPICH
# busy-polls, so each of its calls then costs scheduler time slices.
# BENCH_ARGS go to every mpi-bench run (--window: buffers in an MPI-3 shared window); RANK_ENV
# (NAME=VALUE ...) is set in every rank of every run, e.g. RANK_ENV=SHMCOLL_CHECKS=full.
# usage: [NPS="2 4"] [MPIS="openmpi mpich"] [BENCH_ARGS=...] [RANK_ENV=...] bench/compare_mpi.sh
#        [BUILD_DIR] [OUT_DIR] [REPETITIONS]
set -euo pipefail
build=${1:-build}
out=${2:-results/mpi-$(date +%Y-%m-%d)}
reps=${3:-3}
mkdir -p "$out"
# The machine and the MPIs these figures belong to.
{
  echo "# $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
  lscpu | grep -E '^(Model name|Socket|Core|Thread|NUMA node\(s\)|L[123])' || true
  mpirun.openmpi --version 2>/dev/null | head -1 || true
  mpichversion 2>/dev/null | head -1 || true
  echo "build: $build ($(cat "$build/source-revision.txt" 2>/dev/null || echo unknown))"
  echo "mpi-bench arguments: ${BENCH_ARGS:-(none)}"
  echo "rank environment: ${RANK_ENV:-(none)}"
} > "$out/machine.txt"
openmpi=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to core:overload-allowed)
mpich=(mpiexec.mpich -bind-to core)
# run MODE LIBRARY LABEL: one launch of $bin for $mpi with $np ranks and LIBRARY preloaded,
# into MODE's file of repetition $rep.
run() {
  local library setting
  local -a env_args=()
  library=$(realpath "$build/lib/$2")
  for setting in LD_PRELOAD="$library" ${RANK_ENV:-}; do
    if [ "$mpi" = openmpi ]; then env_args+=(-x "$setting"); else env_args+=(-env "${setting%%=*}" "${setting#*=}"); fi
  done
  if [ "$mpi" = openmpi ]; then
    "${openmpi[@]}" -np "$np" "${env_args[@]}" "$bin" --label "$3" "${args[@]}"
  else
    "${mpich[@]}" -n "$np" "${env_args[@]}" "$bin" --label "$3" "${args[@]}"
  fi > "$out/$mpi-$1-np$np-$rep.csv"
}
for rep in $(seq 1 "$reps"); do
  for np in ${NPS:-2 4}; do
    for mpi in ${MPIS:-openmpi mpich}; do
      bin="$build/bench/mpi-bench-$mpi"
      [ -x "$bin" ] || continue
      args=(${BENCH_ARGS:-})
      if [ "$np" -gt "$(nproc)" ]; then args+=(--max-iterations "${OVERSUBSCRIBED_ITERATIONS:-50}"); fi
      # The CPUs' distance can change between runs on a VM (bench/core_round_trip.cpp).
      echo "rep $rep np $np $mpi: $("$build/bench/core-round-trip" 2>&1)" >> "$out/machine.txt"
      if [ $((rep % 2)) -eq 1 ]; then
        run native "libshmcoll_nop_$mpi.so" "$mpi"
        run shmcoll "libshmcoll_mpi_$mpi.so" "$mpi+shmcoll"
      else
        run shmcoll "libshmcoll_mpi_$mpi.so" "$mpi+shmcoll"
        run native "libshmcoll_nop_$mpi.so" "$mpi"
      fi
    done
  done
done
echo "results in $out"
