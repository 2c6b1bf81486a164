#!/usr/bin/env bash
# Runs the libFuzzer target fuzz/fuzz_shared_state.cpp (shared-memory contents and argument
# validation) under ASan+UBSan for a time budget, keeping its corpus in fuzz/corpus/.
#   scripts/fuzz.sh [seconds]    default 600
# Installs clang (Debian's, with libFuzzer) if it is missing. Prints libFuzzer's final
# statistics (executions, corpus size); a finding stops the run and leaves a crash-* file.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
./scripts/setup.sh clang libclang-rt-dev  # libFuzzer and the sanitizers

dir=build-fuzz
if [ ! -f "$dir/CMakeCache.txt" ]; then
  gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  CC=clang CXX=clang++ cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHMCOLL_FUZZ=ON -DSHMCOLL_SANITIZE=address,undefined -DSHMCOLL_BUILD_TESTS=OFF \
    -DSHMCOLL_BUILD_BENCH=OFF -DSHMCOLL_BUILD_MPI=OFF -DSHMCOLL_LTO=OFF
fi
cmake --build "$dir" -j "$(nproc)" --target fuzz_shared_state
mkdir -p fuzz/corpus
"$dir/fuzz/fuzz_shared_state" -max_total_time="$seconds" -print_final_stats=1 \
  -artifact_prefix="$dir/" fuzz/corpus
echo "fuzz: corpus now holds $(ls fuzz/corpus | wc -l) inputs"
