#!/usr/bin/env bash
# The measurements that need more cores than a 2-core machine has, for a machine lent for a
# few minutes: one command, bounded as a whole, the most telling first, each step in its own
# folder under OUT with compare_mpi.sh's files (machine.txt, CSVs). A step that would start
# with less than its share of the budget left is skipped and says so in OUT/steps.txt.
#
#   1. small calls with a core per rank (the default full checks): 8 ranks, and 16 where there
#      are 16 cores, 1 B-64 KiB, the five collectives, Open MPI alone and through its plugin;
#      then the v-forms with counts that differ from rank to rank (mpi-bench --uneven), and
#      1 B-4 KiB under deferred checks;
#      then 8 ranks on 2 fake nodes, broadcasts of 1-16 MiB cut into segments across nodes
#      against uncut (SHMCOLL_MPI_BCAST_SEGMENTS, whose default this decides);
#   2. 4 and 8 ranks on 2 of the cores (taskset), 1 B-64 KiB, the five collectives;
#   3. the NUMA node matrix and the placement sweep (shmcoll-bench --numa-matrix,
#      --placements), with their records and plots;
#   4. np=2 against both MPIs, 1 B-16 MiB (the large-message figures), if time is left.
#
# usage: bench/device_checks.sh [BUILD_DIR] [OUT_DIR] [BUDGET_SECONDS]   (default 540)
# Summaries afterwards, on any machine: bench/summarize_mpi.py and bench/ratios_mpi.py on each
# folder.
set -uo pipefail
build=${1:-build}
out=${2:-results/device-$(date +%Y-%m-%d)}
budget=${3:-540}
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
mkdir -p "$out"
{
  echo "# $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
  lscpu || true
  "$build/bench/core-round-trip" 2>&1 || true
  echo "build: $build ($(cat "$build/source-revision.txt" 2>/dev/null || echo unknown))"
} > "$out/probe.txt"

# step NAME SECONDS COMMAND...: runs COMMAND with at most SECONDS (and never past the budget).
step() {
  local name=$1 share=$2
  shift 2
  local left=$((budget - ($(date +%s) - start)))
  if [ "$left" -lt "$share" ]; then
    echo "$name: skipped, ${left} s of the budget left (needs ${share})" >> "$out/steps.txt"
    return
  fi
  local t0
  t0=$(date +%s)
  timeout "$share" "$@"
  local rc=$?
  echo "$name: exit $rc after $(($(date +%s) - t0)) s" >> "$out/steps.txt"
}

cores=$(nproc)
nps="8"
[ "$cores" -ge 16 ] && nps="8 16"
if [ "$cores" -ge 8 ]; then
  step per-core 150 env NPS="$nps" MPIS=openmpi BENCH_ARGS="--max-bytes 64K" \
    "$here/compare_mpi.sh" "$build" "$out/per-core" 1
  step per-core-uneven 90 env NPS="$nps" MPIS=openmpi \
    BENCH_ARGS="--coll scatterv,gatherv --max-bytes 64K --uneven" \
    "$here/compare_mpi.sh" "$build" "$out/per-core-uneven" 1
  # What the default full checks cost there, against deferred ones (the plugin's runs inherit
  # the variable; Open MPI alone ignores it).
  step per-core-deferred 70 env SHMCOLL_CHECKS=deferred NPS="$nps" MPIS=openmpi \
    BENCH_ARGS="--max-bytes 4K" "$here/compare_mpi.sh" "$build" "$out/per-core-deferred" 1
  # The pipeline across nodes where its two levels have cores of their own (A: uncut, B: cut).
  step bcast-segments 60 env NPS=8 MPI=openmpi COLLS=bcast MIN_BYTES=1M MAX_BYTES=16M \
    ENV_A="SHMCOLL_MPI_FAKE_NODES=2" ENV_B="SHMCOLL_MPI_FAKE_NODES=2 SHMCOLL_MPI_BCAST_SEGMENTS=1" \
    "$here/compare_builds.sh" "$build" "$build" "$out/bcast-segments" 2
else
  echo "per-core: skipped, $cores CPUs" >> "$out/steps.txt"
fi
step two-cpus 110 taskset -c 0,1 env NPS="4 8" MPIS=openmpi OVERSUBSCRIBED_ITERATIONS=200 \
  BENCH_ARGS="--max-bytes 64K" "$here/compare_mpi.sh" "$build" "$out/two-cpus" 1
# The node's memory between NUMA nodes, and what placement costs (one rank per core, at most
# 16), recorded and drawn.
mkdir -p "$out/numa"
step numa-matrix 60 "$build/bench/shmcoll-bench" --numa-matrix --quick --json "$out/numa/matrix.json" \
  --png "$out/numa/matrix.png" > "$out/numa/matrix.txt"
step placements 90 "$build/tools/shmcoll-run" -n "$((cores < 16 ? cores : 16))" \
  "$build/bench/shmcoll-bench" --placements --quick --max-bytes 1M \
  --json "$out/numa/placements.json" --png "$out/numa/placements.png" > "$out/numa/placements.txt"
step np2 150 env NPS=2 MPIS="openmpi mpich" "$here/compare_mpi.sh" "$build" "$out/np2" 1
cat "$out/steps.txt"
