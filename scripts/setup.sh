#!/usr/bin/env bash
# Installs what shmcoll needs to build, test and benchmark on a Debian machine, and the further
# Debian packages named as arguments (scripts/clang_check.sh and scripts/fuzz.sh: clang).
# Idempotent: packages already present are left as they are.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config make
  clang                 # the second compiler: builds and the install tests use both
  libboost-dev          # Boost.Interprocess (header-only)
  libhwloc-dev hwloc    # topology discovery and binding
  libnuma-dev           # NUMA memory placement
  doctest-dev           # unit and multi-process tests
  libcli11-dev          # command-line parsing of the tools
  libbenchmark-dev      # copy-kernel micro-benchmarks
  libopenmpi-dev openmpi-bin   # the MPI plugin for Open MPI, its tests and comparisons
  libmpich-dev mpich           # the MPI plugin for MPICH, its tests and comparisons
  gfortran              # the plugin's Fortran tests (mpif.h, use mpi, use mpi_f08)
  gnuplot-nox           # benchmark plots, shmcoll-info --png and shmcoll-bench --png
  nlohmann-json3-dev    # shmcoll-bench --json records
  python3               # benchmark summaries and the record tests
  dpkg-dev              # dpkg-shlibdeps: the Debian packages' dependencies (cpack)
  libudev-dev           # what pkg-config --static hwloc names: linking the static library
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
echo "setup: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
