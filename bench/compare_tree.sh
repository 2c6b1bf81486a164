#!/usr/bin/env bash
# Flat against tree for all five collectives, forced through SHMCOLL_*_ALGORITHM, alternating
# run by run so that drift hits both alike, and which goes first alternating round by round (the
# second of two back-to-back 1 MiB runs on 4-8 ranks ran 4-9% slower, with identical code).
# Usage:
#   bench/compare_tree.sh OUTDIR "RANKS..." "SIZES..." REPS [shmcoll-run placement options]
# e.g. bench/compare_tree.sh results/tree-x "2 4 8" "8 1M" 5 --bind core
# BENCH_ARGS adds shmcoll-bench options (e.g. "--iterations 20000").
# Writes OUTDIR/<alg>-np<N>-<size>-r<k>.csv and .txt; bench/summarize_tree.py makes the table.
set -euo pipefail
out=$1 ranks=$2 sizes=$3 reps=$4
shift 4
build=${BUILD:-build}
mkdir -p "$out"
for ((k = 1; k <= reps; ++k)); do
  for n in $ranks; do
    for size in $sizes; do
      order="flat tree"
      ((k % 2 == 0)) && order="tree flat"
      for alg in $order; do
        SHMCOLL_BCAST_ALGORITHM=$alg SHMCOLL_SCATTER_ALGORITHM=$alg SHMCOLL_GATHER_ALGORITHM=$alg \
          "$build/tools/shmcoll-run" -n "$n" "$@" "$build/bench/shmcoll-bench" \
          --min-bytes "$size" --max-bytes "$size" ${BENCH_ARGS:-} --csv "$out/$alg-np$n-$size-r$k.csv" \
          > "$out/$alg-np$n-$size-r$k.txt"
      done
    done
  done
done
