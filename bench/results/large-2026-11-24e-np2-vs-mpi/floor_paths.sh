#!/bin/bash
# Broadcast at np=2 through the Open MPI plugin: the single copy (SHMCOLL_SINGLE_COPY=auto)
# against the slot pipeline alone (off), alternating, with the floor of each run.
# usage: bench/results/large-2026-11-24e-np2-vs-mpi/floor_paths.sh [BUILD_DIR] [ROUNDS]
build=${1:-build}
P=$(realpath "$build/lib/libshmcoll_mpi_openmpi.so")
for round in $(seq "${2:-3}"); do
  for v in auto off; do
    echo "$v r$round: $(mpirun.openmpi --allow-run-as-root --bind-to core -np 2 -x LD_PRELOAD="$P" \
      -x SHMCOLL_SINGLE_COPY=$v "$build/bench/mpi-bench-openmpi" --coll bcast --min-bytes 4M \
      --max-bytes 16M --label $v 2>/dev/null | grep -v ^label |
      awk -F, '{printf "%s: %s us (floor %s, x%.2f)  ", $4, $6, $10, $6 / $10}')"
  done
done
