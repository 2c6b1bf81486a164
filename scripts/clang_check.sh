#!/usr/bin/env bash
# Builds everything with clang (Debian 12: clang 14) with warnings as errors, and runs the test
# suite of that build (without the long tests). Installs clang if it is missing.
#   scripts/clang_check.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh clang
dir=${CLANG_BUILD_DIR:-build-clang}
if [ ! -f "$dir/CMakeCache.txt" ]; then
  gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  CC=clang CXX=clang++ cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DSHMCOLL_WERROR=ON
fi
cmake --build "$dir" -j "$(nproc)"
(cd "$dir" && ctest --output-on-failure --timeout 900 -LE long "$@")
