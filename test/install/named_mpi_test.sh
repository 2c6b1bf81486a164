#!/usr/bin/env bash
# The MPI plugin built for an MPI named the CMake way: this source tree configured with
# -DMPI_C_COMPILER=WRAPPER (FindMPI, as for a cluster's own MPI), the plugin alone built
# (unoptimized: the test is about finding and linking the MPI), then preloaded into a program
# of that MPI, whose broadcast it must serve.
#   named_mpi_test.sh SOURCE_DIR WRAPPER FAMILY PROGRAM LAUNCHER...   (LAUNCHER ends before -np N)
set -euo pipefail
source_dir=$1 wrapper=$2 family=$3 program=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S "$source_dir" -B "$work/build" -DMPI_C_COMPILER="$wrapper" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DSHMCOLL_LTO=OFF -DSHMCOLL_BUILD_TESTS=OFF \
  -DSHMCOLL_BUILD_BENCH=OFF > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
grep "MPI plugin:" "$work/configure.log"
cmake --build "$work/build" --target "shmcoll_mpi_$family" -j "$(nproc)" > "$work/build.log" ||
  { tail -30 "$work/build.log"; exit 1; }
plugin=$work/build/lib/libshmcoll_mpi_$family.so
[ -f "$plugin" ] || { echo "named_mpi_test: no $plugin"; ls "$work/build/lib"; exit 1; }
output=$(env LD_PRELOAD="$plugin" SHMCOLL_MPI_VERBOSE=1 "$@" 2 "$program" 2>&1)
echo "$output"
grep -q "MPI_Bcast on MPI_COMM_WORLD (2 ranks) served by shmcoll" <<< "$output" ||
  { echo "named_mpi_test: the plugin did not serve the broadcast"; exit 1; }
