#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds test/install/consumer (C++) and
# consumer_c (the C API) against it as an outside project would: with CMake's find_package and
# each compiler given (g++, clang++; gcc, clang), and with pkg-config; each program runs on 3
# ranks under the installed shmcoll-run.
#   consumer_test.sh BUILD_DIR COMPILER...       (a name ending in ++ builds the C++ program)
#   consumer_test.sh --prefix PREFIX COMPILER...  the same against an installed prefix (with a
#                                                 shared or a static libshmcoll)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$1" = --prefix ]; then
  prefix=$(realpath "$2")
  shift 2
else
  cmake --install "$(realpath "$1")" --prefix "$work/prefix" >/dev/null
  prefix=$work/prefix
  shift
fi
library=$(find "$prefix" \( -name 'libshmcoll.so' -o -name 'libshmcoll.a' \) -print -quit)
libdir=$(dirname "$library")
# A static library's users link its dependencies too: pkg-config --static names them.
static=()
[[ $library == *.a ]] && static=(--static)
run() { "$prefix/bin/shmcoll-run" -n 3 "$@"; }
# consume LANGUAGE COMPILER: the project of that language built with that compiler, and run.
consume() {
  local dir=$work/$2 project=consumer
  [ "$1" = C ] && project=consumer_c
  echo "== find_package(shmcoll): $project with $2"
  cmake -S "$here/$project" -B "$dir" -DCMAKE_"$1"_COMPILER="$2" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$dir" >/dev/null
  run "$dir/$project"
}
for compiler in "$@"; do
  case $compiler in
    *++) consume CXX "$compiler" ;;
    *) consume C "$compiler" ;;
  esac
done
pc() { PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config "${static[@]}" --cflags --libs "$1"; }
echo "== pkg-config shmcoll"
g++ "$here/consumer/main.cpp" $(pc shmcoll) -o "$work/consumer-pc"
LD_LIBRARY_PATH="$libdir" run "$work/consumer-pc"
echo "== pkg-config shmcoll-c"
gcc "$here/consumer_c/main.c" $(pc shmcoll-c) -o "$work/consumer_c-pc"
LD_LIBRARY_PATH="$libdir" run "$work/consumer_c-pc"
