#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds test/install/consumer against it as
# an outside project would: with CMake's find_package and each compiler given (g++, clang++),
# and with pkg-config; each program runs on 3 ranks under the installed shmcoll-run.
#   consumer_test.sh BUILD_DIR COMPILER...
set -euo pipefail
build=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
prefix=$work/prefix
libdir=$(dirname "$(find "$prefix" -name 'libshmcoll.so' -print -quit)")
run() { "$prefix/bin/shmcoll-run" -n 3 "$@"; }
for cxx in "$@"; do
  echo "== find_package(shmcoll) with $cxx"
  cmake -S "$here/consumer" -B "$work/$cxx" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/$cxx" >/dev/null
  run "$work/$cxx/consumer"
done
echo "== pkg-config shmcoll"
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs shmcoll)
g++ "$here/consumer/main.cpp" $flags -o "$work/consumer-pc"
LD_LIBRARY_PATH="$libdir" run "$work/consumer-pc"
