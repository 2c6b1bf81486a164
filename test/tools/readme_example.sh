#!/usr/bin/env bash
# The README's C++ program (its first ```cpp block) compiles as written against the build and
# runs on 3 ranks.
#   readme_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") source=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '/^```cpp$/ { inside = 1; next } inside && /^```$/ { exit } inside' "$source/README.md" \
  > "$work/example.cpp"
g++ -std=c++20 -Wall -Wextra -Werror -I"$source/include" "$work/example.cpp" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -lshmcoll -o "$work/example"
"$build/tools/shmcoll-run" -n 3 "$work/example"
echo "the README's example compiled and ran"
