#!/usr/bin/env bash
# The static library as a user who asks for one gets it: this source tree configured with
# -DSHMCOLL_SHARED=OFF in an optimized build (link-time optimization on, so the archive holds
# fat LTO objects that every compiler can link), the library and the launcher built and
# installed, then consumer_test.sh's outside projects built against it with each compiler.
#   static_test.sh SOURCE_DIR COMPILER...
set -euo pipefail
source_dir=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S "$source_dir" -B "$work/build" -DSHMCOLL_SHARED=OFF -DCMAKE_BUILD_TYPE=Release \
  -DSHMCOLL_BUILD_TESTS=OFF -DSHMCOLL_BUILD_BENCH=OFF -DSHMCOLL_BUILD_MPI=OFF > "$work/log"
cmake --build "$work/build" --target shmcoll shmcoll-run shmcoll-info -j "$(nproc)" >> "$work/log" ||
  { tail -30 "$work/log"; exit 1; }
for component in dev tools; do
  cmake --install "$work/build" --prefix "$work/prefix" --component "$component" > /dev/null
done
[ -f "$(find "$work/prefix" -name libshmcoll.a -print -quit)" ] ||
  { echo "static_test: no libshmcoll.a installed"; exit 1; }
"$here/consumer_test.sh" --prefix "$work/prefix" "$@"
