#!/usr/bin/env bash
# The README's C++ examples compile as written against the build and run on 3 ranks: the first
# ```cpp block is a whole program; each later one is a fragment that runs, in the order of the
# README, in a function given the team (and an empty compute()).
#   readme_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") source=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# block N: the Nth ```cpp block of the README.
block() {
  awk -v want="$1" '/^```cpp$/ { n++; inside = (n == want); next }
                    inside && /^```$/ { exit } inside' "$source/README.md"
}
compile_and_run() {
  g++ -std=c++20 -Wall -Wextra -Werror -I"$source/include" "$1" \
    -L"$build/lib" -Wl,-rpath,"$build/lib" -lshmcoll -o "$work/program"
  "$build/tools/shmcoll-run" -n 3 "$work/program"
}
block 1 > "$work/example.cpp"
compile_and_run "$work/example.cpp"
count=$(grep -c '^```cpp$' "$source/README.md")
{
  echo '#include <shmcoll/shmcoll.hpp>'
  echo '#include <span>'
  echo '#include <vector>'
  echo 'namespace {'
  echo 'void compute() {}'
  for n in $(seq 2 "$count"); do
    echo "[[maybe_unused]] void fragment_$n(shmcoll::Team& team) {"
    block "$n"
    echo '}'
  done
  echo '}  // namespace'
  echo 'int main() {'
  echo '  auto bootstrap = shmcoll::SocketBootstrap::from_environment();'
  echo '  shmcoll::Team team(*bootstrap);'
  for n in $(seq 2 "$count"); do echo "  fragment_$n(team);"; done
  echo '}'
} > "$work/fragments.cpp"
compile_and_run "$work/fragments.cpp"
echo "the README's $count C++ examples compiled and ran"
