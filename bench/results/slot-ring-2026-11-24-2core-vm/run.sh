#!/usr/bin/env bash
# The slots path's speed against the ring's size and the CPUs' distance, np=2.
# For each round and configuration: the core-to-core round trip just before, then shmcoll-bench
# (p50 per size) through the slots only (SHMCOLL_SINGLE_COPY=off), except "default" (4 slots,
# single copy from 32 KiB). Run from the repository root: bench/results/slot-ring-.../run.sh OUT
set -euo pipefail
out=${1:-.}
rounds=${ROUNDS:-4}
run=(build/tools/shmcoll-run -n 2 --bind core build/bench/shmcoll-bench
     --coll bcast,scatter,gather --min-bytes 262144 --max-bytes 4194304)
for r in $(seq "$rounds"); do
  for cfg in "default:SHMCOLL_SLOTS=4" "4x64K:SHMCOLL_SINGLE_COPY=off SHMCOLL_SLOTS=4" \
             "8x64K:SHMCOLL_SINGLE_COPY=off SHMCOLL_SLOTS=8" \
             "16x64K:SHMCOLL_SINGLE_COPY=off SHMCOLL_SLOTS=16" \
             "4x256K:SHMCOLL_SINGLE_COPY=off SHMCOLL_SLOTS=4 SHMCOLL_SLOT_BYTES=262144"; do
    name=${cfg%%:*}
    echo "round $r $name $(build/bench/core-round-trip)" >> "$out/round-trips.txt"
    env ${cfg#*:} "${run[@]}" --csv "$out/$name-$r.csv" > /dev/null
  done
done
