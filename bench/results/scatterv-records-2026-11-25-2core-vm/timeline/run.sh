#!/usr/bin/env bash
# usage: run.sh OUT ; per round: native and plugin, no delay and delays
set -euo pipefail
out=$1; mkdir -p "$out"
L=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to core:overload-allowed -np 4 -x MPI_BENCH_TIMELINE=1)
P=(-x SHMCOLL_CHECKS=deferred -x LD_PRELOAD=build/lib/libshmcoll_mpi_openmpi.so)
for round in 1 2 3; do
  for delays in none root2-others4; do
    D=(); [ $delays = none ] || D=(--root-delay-us 2 --others-delay-us 4)
    "${L[@]}" build/bench/mpi-bench-openmpi --label native --coll scatterv,gatherv --min-bytes 8 --max-bytes 128 --max-iterations 2000 "${D[@]}" > "$out/native-$delays-$round.csv" 2> "$out/native-$delays-$round.timeline"
    "${L[@]}" "${P[@]}" build/bench/mpi-bench-openmpi --label plugin --coll scatterv,gatherv --min-bytes 8 --max-bytes 128 --max-iterations 2000 "${D[@]}" > "$out/plugin-$delays-$round.csv" 2> "$out/plugin-$delays-$round.timeline"
  done
done
