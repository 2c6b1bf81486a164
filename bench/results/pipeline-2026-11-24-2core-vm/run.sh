#!/usr/bin/env bash
# Large blocks through a 1 MiB slot ring or with the single copy, np=2, both benchmark styles,
# rounds alternating: "pipeline" is the default (broadcast through the slots from 2 MiB, a
# 2-rank gather(v) from 256 KiB to 2 MiB), "single" takes the single copy from 32 KiB for
# everything (as before). osu-*: bench/mpi_bench.cpp through the Open MPI plugin (root 0,
# barrier before each call, mean over ranks); rot-*: shmcoll-bench (root rotating, p50).
# Run from the repository root: bench/results/pipeline-2026-11-24-2core-vm/run.sh OUT
set -euo pipefail
out=${1:-.}
plugin=$(realpath build/lib/libshmcoll_mpi_openmpi.so)
single=(SHMCOLL_BCAST_PIPELINE_MIN_BYTES=1099511627776 SHMCOLL_GATHER_PIPELINE_MAX_BYTES=0)
for r in $(seq "${ROUNDS:-4}"); do
  for cfg in pipeline single; do
    envs=(SHMCOLL_VERBOSE=0)
    [ "$cfg" = single ] && envs=("${single[@]}")
    echo "round $r $cfg $(build/bench/core-round-trip)" >> "$out/round-trips.txt"
    xs=(); for e in "${envs[@]}"; do xs+=(-x "$e"); done
    for c in bcast scatter scatterv gather gatherv; do
      mpirun.openmpi --allow-run-as-root --bind-to core -np 2 "${xs[@]}" -x LD_PRELOAD="$plugin" \
        build/bench/mpi-bench-openmpi --coll $c --min-bytes 262144 --max-bytes 16M --label $cfg \
        | grep -v '^label' >> "$out/osu-$cfg-$r.csv"
    done
    env "${envs[@]}" build/tools/shmcoll-run -n 2 --bind core build/bench/shmcoll-bench \
      --min-bytes 262144 --max-bytes 16M --csv "$out/rot-$cfg-$r.csv" > /dev/null
  done
done
