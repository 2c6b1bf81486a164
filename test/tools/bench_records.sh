#!/usr/bin/env bash
# shmcoll-bench's records and pictures: --numa-matrix, the collectives sweep and --placements,
# each with --quick, --json and --png, write a record whose fields a reader can rely on
# (check_bench_record.py) and a PNG image; the sweep's --compare refuses a file that is not
# mpi-bench's; --numa-matrix under shmcoll-run with several ranks is refused with a message.
#   bench_records.sh BUILD_DIR
set -uo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
bench=$build/bench/shmcoll-bench run=$build/tools/shmcoll-run
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}

# A PNG file starts with these eight bytes.
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }

# recorded KIND NEEDLES COMMAND...: runs COMMAND with --json and --png into $dir/KIND.*; its
# output must hold each of the |-separated NEEDLES, the picture be a PNG image and the record
# pass check_bench_record.py KIND.
recorded() {
  local kind=$1 needles=$2 needle
  shift 2
  if ! out=$(timeout 120 "$@" --json "$dir/$kind.json" --png "$dir/$kind.png" 2>&1); then
    fail "$* exited with an error:"
    echo "$out"
  fi
  IFS='|' read -ra needles <<< "$needles"
  for needle in "${needles[@]}"; do
    [[ "$out" == *"$needle"* ]] || fail "the output of $* lacks '$needle'"
  done
  [ -s "$dir/$kind.png" ] && is_png "$dir/$kind.png" || fail "$kind: --png wrote no PNG image"
  python3 "$here/check_bench_record.py" "$kind" "$dir/$kind.json" || fail "$kind: the record (above)"
}

recorded numa-matrix "estimated time|copy bandwidth, one core|load latency|NUMA distances" \
  "$bench" --numa-matrix --quick

# An MPI's own figures to compare with, as mpi-bench writes them (4-rank rows are not this run's).
{
  echo "label,collective,ranks,bytes,iterations,avg_us,min_us,max_us,memcpy_us,floor_us"
  for coll in bcast scatter scatterv gather gatherv; do
    for bytes in 1 4 16 64; do
      echo "mpi,$coll,2,$bytes,100,0.5,0.4,0.6,0.1,0.1"
      echo "mpi,$coll,4,$bytes,100,0.9,0.8,1.0,0.1,0.1"
    done
  done
} > "$dir/mpi.csv"
recorded collectives "estimated time|# gatherv" \
  "$run" -n 2 "$bench" --quick --max-bytes 64K --compare "$dir/mpi.csv"
printf 'label,collective\n' > "$dir/bad.csv"
out=$(timeout 60 "$run" -n 2 "$bench" --quick --max-bytes 4 --compare "$dir/bad.csv" 2>&1)
rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"$dir/bad.csv: not mpi-bench's CSV"* ]] ||
  fail "--compare of a file that is not mpi-bench's: status $rc, output: $out"

recorded placements "estimated time|# P1: ranks by core|what placement costs" \
  "$run" -n 2 "$bench" --placements --quick --max-bytes 1K

out=$(timeout 60 "$run" -n 2 "$bench" --numa-matrix 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [[ "$out" == *"--numa-matrix runs in one process"* ]] ||
  fail "--numa-matrix under shmcoll-run -n 2: status $rc, output: $out"

[ "$failures" -eq 0 ] && echo "bench records: all checks passed"
exit $((failures > 0))
