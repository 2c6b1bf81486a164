#!/usr/bin/env bash
# Slot ring depth, 4 against 16 slots of 64 KiB, alternating run by run (3 rounds):
# np=2 all five through the slots only (SHMCOLL_SINGLE_COPY=off) and with the default single
# copy; np=4 (oversubscribed) bcast, scatter and gather with defaults. Run from the repository
# root after a Release build: bash bench/results/slot-depth-2026-11-23-2core-vm/run.sh
set -euo pipefail
out=$(dirname "$0")
run() {  # name ranks env...
  local name=$1 n=$2
  shift 2
  env "$@" build/tools/shmcoll-run -n "$n" --bind core build/bench/shmcoll-bench \
    --min-bytes 64K --max-bytes 16M --csv "$out/$name.csv" > "$out/$name.txt" 2>&1
}
for k in 1 2 3; do
  for s in 4 16; do
    run "np2-slots$s-off-r$k" 2 SHMCOLL_SLOTS=$s SHMCOLL_SINGLE_COPY=off
    run "np2-slots$s-auto-r$k" 2 SHMCOLL_SLOTS=$s
    run "np4-slots$s-auto-r$k" 4 SHMCOLL_SLOTS=$s
  done
done
