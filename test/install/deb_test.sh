#!/usr/bin/env bash
# The Debian packages as a fresh machine gets them: cpack -G DEB from the build, each package's
# declared dependencies (dpkg-deb -I), then every package unpacked into one temporary root
# (dpkg-deb -x) and the outside projects of consumer_test.sh built against root/usr and run.
#   deb_test.sh BUILD_DIR COMPILER...
set -euo pipefail
build=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$work/debs" >/dev/null
fail() { echo "deb_test: $*" >&2; exit 1; }
# expect PACKAGE FIELD WORD...: the package exists and its FIELD names every WORD.
expect() {
  local deb package=$1 field=$2
  shift 2
  deb=$(find "$work/debs" -maxdepth 1 -name "${package}_*.deb" -print -quit)
  [ -n "$deb" ] || fail "no package $package in $(ls "$work/debs")"
  local value
  value=$(dpkg-deb -f "$deb" "$field")
  echo "$package $field: $value"
  for word in "$@"; do
    [[ ", $value," == *", $word"[\ ,]* ]] || fail "$package: $field lacks $word"
  done
  dpkg-deb -x "$deb" "$work/root"
}
expect libshmcoll0 Depends libhwloc15 libnuma1 libstdc++6 libc6
expect libshmcoll-dev Depends libshmcoll0 libhwloc-dev libnuma-dev pkg-config
expect shmcoll-tools Depends libhwloc15 libnuma1
[ -f "$build/lib/libshmcoll_mpi_openmpi.so" ] && expect shmcoll-mpi-openmpi Depends libopenmpi3
[ -f "$build/lib/libshmcoll_mpi_mpich.so" ] && expect shmcoll-mpi-mpich Depends libmpich12
"$here/consumer_test.sh" --prefix "$work/root/usr" "$@"
