#!/usr/bin/env bash
# Two builds of the MPI plugin back to back on the same mpi-bench binary, with the MPI's own
# collectives in the same rounds: each round runs, per np, the MPI alone, then build A's plugin
# and build B's, A first in odd rounds and B first in even ones, so that a machine that drifts
# (a VM whose CPUs move) moves both builds alike. Give the two builds' directories paths of the
# same length: the preload's path shifts the stack. Files: <A|B|native>-np<N>-<round>.csv;
# machine.txt has the machine, the two commits and the core round trip before each round.
# bench/summarize_builds.py summarizes.
# ENV_A and ENV_B (NAME=VALUE words) are set for A's and for B's runs only: with the same build
# twice, they compare two settings of a parameter.
# usage: [NPS="2"] [MPI=openmpi|mpich] [COLLS=scatter,gather] [MIN_BYTES=32K] [MAX_BYTES=16M]
#        [BENCH_ARGS=...] [ENV_A=...] [ENV_B=...] bench/compare_builds.sh BUILD_A BUILD_B OUT_DIR
#        [ROUNDS]
set -euo pipefail
a=$1 b=$2 out=$3 rounds=${4:-5}
mpi=${MPI:-openmpi}
mkdir -p "$out"
# What a build was made from: its source-revision.txt (written at every build, "-dirty" when the
# checkout had uncommitted changes), not the checkout's state now.
revision() { cat "$1/source-revision.txt" 2>/dev/null || echo "unknown (no source-revision.txt)"; }
{
  echo "# $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
  lscpu | grep -E '^(Model name|Socket|Core|Thread|NUMA node\(s\)|L[123])' || true
  echo "A: $a ($(revision "$a"))"
  echo "B: $b ($(revision "$b"))"
  echo "environment of A: ${ENV_A:-}; of B: ${ENV_B:-}"
  echo "mpi-bench arguments: --coll ${COLLS:-scatter,gather} ${BENCH_ARGS:-}"
} > "$out/machine.txt"
bin="$b/bench/mpi-bench-$mpi"
# shellcheck disable=SC2206 # BENCH_ARGS is meant to split into words
args=(--coll "${COLLS:-scatter,gather}" --min-bytes "${MIN_BYTES:-32K}"
      --max-bytes "${MAX_BYTES:-16M}" ${BENCH_ARGS:-})
# The launcher, up to its rank-count argument, and the words that preload a build's plugin.
if [ "$mpi" = openmpi ]; then
  launcher=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to core:overload-allowed -np)
  preload() { echo -x "LD_PRELOAD=$(realpath "$1/lib/libshmcoll_mpi_openmpi.so")"; }
  environment() { for kv in $1; do echo -x "$kv"; done; }
else
  launcher=(mpiexec.mpich -bind-to core -n)
  preload() { echo -env LD_PRELOAD "$(realpath "$1/lib/libshmcoll_mpi_mpich.so")"; }
  environment() { for kv in $1; do echo -env "${kv%%=*}" "${kv#*=}"; done; }
fi
for round in $(seq 1 "$rounds"); do
  for np in ${NPS:-2}; do
    launch=("${launcher[@]}" "$np")
    echo "round $round np $np: $("$b/bench/core-round-trip" 2>&1)" >> "$out/machine.txt"
    "${launch[@]}" "$bin" --label native "${args[@]}" > "$out/native-np$np-$round.csv"
    # A then B in odd rounds, B then A in even ones (ABBA).
    order=(A B)
    if [ $((round % 2)) -eq 0 ]; then order=(B A); fi
    for build in "${order[@]}"; do
      if [ "$build" = A ]; then dir=$a env_words=${ENV_A:-}; else dir=$b env_words=${ENV_B:-}; fi
      # shellcheck disable=SC2046 # preload prints the launcher's words for the variable
      "${launch[@]}" $(preload "$dir") $(environment "$env_words") "$bin" --label "$build" \
        "${args[@]}" > "$out/$build-np$np-$round.csv"
    done
  done
done
echo "results in $out"
