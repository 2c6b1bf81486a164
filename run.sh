#!/usr/bin/env bash
# The two entry points of shmcoll on a fresh Debian machine:
#   ./run.sh bench   install dependencies, build, run the benchmark of all five collectives
#   ./run.sh test    install dependencies, build, run the whole test suite
#   ./run.sh sanitize  the core suite again in an ASan+UBSan build and in a TSan build (CI)
# Environment: BUILD_DIR (default build), BENCH_RANKS (default: number of cores),
# BENCH_MAX_BYTES (default 64M), CMAKE_ARGS (more arguments for every build's configuration,
# e.g. -DSHMCOLL_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")"

build_dir=${BUILD_DIR:-build}

gen=()
setup_and_build() {
  ./scripts/setup.sh
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S . -B "$build_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
  fi
  cmake --build "$build_dir" -j "$(nproc)"
}

# Builds the library and tests with the given sanitizers in $1 and runs the suite there, but
# for the tests whose labels match $4 (and the long ones).
sanitized_suite() {
  local dir=$1 sanitizers=$2 stress_ops=$3 leave_out=$4
  shift 4
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    # At -O1: the instrumented suite runs in less than half the time, for a longer build
    # (docs/testing.md).
    cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Debug -DSHMCOLL_SANITIZE="$sanitizers" \
      -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
      -DSHMCOLL_BUILD_MPI=OFF -DSHMCOLL_BUILD_BENCH=OFF ${CMAKE_ARGS:-}
  fi
  cmake --build "$dir" -j "$(nproc)"
  # Instrumented code runs 3-15 times slower: a shorter randomized stress there (ThreadSanitizer
  # the shortest: 0.2-0.9 s an operation on 2 cores).
  (cd "$dir" && STRESS_OPS=${STRESS_OPS:-$stress_ops} \
    ctest --output-on-failure --timeout 900 -LE "$leave_out" "$@")
}

# Segments whose creator has ended: what a test left behind. (Another job's team forming right
# now has a name in /dev/shm too, with its creator running.)
check_no_leftover_segments() {
  local leftover
  leftover=$("$build_dir/tools/shmcoll-info" --segments | grep ' stale: ' || true)
  if [ -n "$leftover" ]; then
    echo "run.sh: shared segments left in /dev/shm: $leftover" >&2
    exit 1
  fi
}

case "${1:-}" in
  bench)
    setup_and_build
    ranks=${BENCH_RANKS:-$(nproc)}
    # What was built, and where the CPUs sit right now (on a VM the host moves them): part of
    # the result.
    echo "# source revision: $(cat "$build_dir/source-revision.txt" 2>/dev/null || echo unknown)"
    "$build_dir/bench/core-round-trip" || true
    "$build_dir/tools/shmcoll-run" -n "$ranks" --bind core -- \
      "$build_dir/bench/shmcoll-bench" --max-bytes "${BENCH_MAX_BYTES:-64M}" "${@:2}"
    ;;
  test)
    setup_and_build
    (cd "$build_dir" && ctest --output-on-failure --timeout 900 -LE long "${@:2}")
    check_no_leftover_segments
    ;;
  sanitize)
    setup_and_build
    # The core suite again under AddressSanitizer with UndefinedBehaviorSanitizer, then under
    # ThreadSanitizer (without the MPI plugin: an instrumented library cannot be preloaded into
    # uninstrumented MPI programs). A sanitizer report fails the test it happens in.
    # Both without the "heavy" cases: single-threaded or bulk-copying work that the sanitizers
    # slow most (ASan 10 and 8 s, TSan 24 and 42 s on 2 cores), run in the optimized build.
    # ThreadSanitizer sees races between the threads of one process only: it also leaves out
    # the "processes" cases, whose ranks are single-threaded processes (ASan runs them).
    sanitized_suite "${build_dir}-asan" address,undefined 150 "long|heavy" "${@:2}"
    TSAN_OPTIONS=halt_on_error=1 sanitized_suite "${build_dir}-tsan" thread 50 \
      "long|heavy|processes" "${@:2}"
    check_no_leftover_segments
    ;;
  *)
    echo "usage: $0 bench|test|sanitize [extra arguments for shmcoll-bench or ctest]" >&2
    exit 2
    ;;
esac
