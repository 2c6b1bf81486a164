#!/usr/bin/env bash
# The programs' command lines: every bad argument ends with status 2 and a message naming its
# flag; --help exits 0 without running anything; shmcoll-run takes mpirun's spellings.
#   arguments.sh BUILD_DIR
set -uo pipefail
build=$1
run=$build/tools/shmcoll-run info=$build/tools/shmcoll-info bench=$build/bench/shmcoll-bench
failures=0

# expect STATUS NEEDLE COMMAND...: COMMAND exits with STATUS and its output contains NEEDLE.
expect() {
  local status=$1 needle=$2
  shift 2
  local out rc
  out=$(timeout 60 "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$status" ] || [[ "$out" != *"$needle"* ]]; then
    echo "FAILED: $* -> status $rc (expected $status), output lacks '$needle' or is:"
    echo "$out" | head -5
    failures=$((failures + 1))
  fi
}

expect 2 "--max-bytes" "$bench" --max-bytes abc
expect 2 "--max-bytes" "$bench" --max-bytes 1X
expect 2 "--min-bytes" "$bench" --min-bytes 4K --max-bytes 1K
expect 2 "--iterations" "$bench" --iterations 0
expect 2 "--coll" "$bench" --coll bcast,allreduce
expect 2 "--placements" "$bench" --numa-matrix --placements
expect 2 "--shared" "$bench" --placements --shared
expect 2 "--compare" "$bench" --compare /nonexistent.csv
expect 2 "--numa-matrix" "$bench" --numa-matrix --max-bytes 4K
expect 2 "--csv" "$bench" --numa-matrix --csv x.csv
expect 0 "--min-bytes" "$bench" --help

for bad in abc 0 -3; do expect 2 "--ranks" "$info" --ranks "$bad"; done
expect 2 "--png" "$info" --png x.png
expect 2 "--topology" "$info" --ranks 2 --topology foo:3
expect 2 "--root" "$info" --ranks 2 --root 5
expect 2 "--segments" "$info" --segments --ranks 2
expect 2 "--markdown" "$info" --markdown readme
expect 0 "--ranks" "$info" --help
png=$(mktemp -u --suffix=.png)
expect 1 "gnuplot is not installed" env PATH=/nonexistent "$info" --ranks 2 --png "$png"

expect 0 "" "$run" -np 2 true
expect 0 "" "$run" -np=2 true
expect 0 "" "$run" --np=2 true
expect 0 "" "$run" -n2 true
expect 0 "x -n 3" "$run" -n 1 -- echo x -n 3   # the program's arguments stay its own
expect 0 "x -n 3" "$run" -n 1 echo x -n 3
expect 2 "--np" "$run" -n abc true
expect 2 "--np" "$run" true
expect 2 "--bind" "$run" -n 2 --bind socket true
expect 2 "--timeout" "$run" -n 2 --timeout -1 true
expect 2 "PROGRAM" "$run" -n 2

for mpi in openmpi mpich; do
  mpi_bench=$build/bench/mpi-bench-$mpi
  [ -x "$mpi_bench" ] || continue
  expect 0 "--min-bytes" "$mpi_bench" --help
  expect 2 "--max-bytes" "$mpi_bench" --max-bytes abc
done

if [ "$failures" -ne 0 ]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "every case passed"
