#!/bin/bash
# The folders of lib/ form layers: each may include the public headers (shmcoll/) and the
# folders before it in LAYERS, never one after it, so their dependencies cannot form a cycle.
# The algorithms (lib/coll) touch shared memory only through the protocol's calls: no atomics
# or memory orders of their own. The tools use the public API (include/shmcoll/, with its
# introspection.hpp) and nothing else of lib/, but for the launcher's own layer (shmcoll-run,
# lib/launch) and the MPI plugin's parameter list (shmcoll-info prints it); the MPI plugin uses
# the public API and its own folder alone. Prints every line
# that breaks a rule and fails if there is one.
# usage: layers.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: layers.sh SOURCE_DIR}/lib"

LAYERS=(base sync copy topology segment bootstrap protocol coll team capi launch mpi)

status=0
for ((i = 0; i < ${#LAYERS[@]}; i++)); do
  folder=${LAYERS[i]}
  allowed=" shmcoll $folder ${LAYERS[*]:0:i} "
  while IFS=: read -r file line text; do
    used=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([a-z_]+)\/.*/\1/' <<<"$text")
    if [[ $allowed != *" $used "* ]]; then
      echo "lib/$folder/${file#./}:$line includes $used/, which is not below $folder/ ($text)"
      status=1
    fi
  done < <(cd "$folder" && grep -rHn -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' -- . || true)
done
if grep -rn -E 'std::atomic|memory_order|atomic_ref|__atomic' coll; then
  echo "lib/coll/ uses atomics itself (above): the protocol (lib/protocol/) owns every one"
  status=1
fi
while IFS=: read -r file line text; do
  case $text in
    *'"shmcoll/'* | *'"launch/'* | *'"mpi/plugin_parameters.hpp"'*) ;;
    *)
      echo "tools/${file#./}:$line includes a part of lib/ outside the public API ($text)"
      status=1
      ;;
  esac
done < <(cd ../tools && grep -rHn -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' -- . || true)
# The MPI plugin is a client of the public API, as any program: its own folder and shmcoll/.
while IFS=: read -r file line text; do
  case $text in
    *'"shmcoll/'* | *'"mpi/'*) ;;
    *)
      echo "lib/mpi/${file#./}:$line includes a part of lib/ outside the public API ($text)"
      status=1
      ;;
  esac
done < <(cd mpi && grep -rHn -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' -- . || true)
for dir in */; do
  dir=${dir%/}
  if [[ " ${LAYERS[*]} " != *" $dir "* ]]; then
    echo "lib/$dir/ is in no layer: add it to LAYERS in test/layers.sh"
    status=1
  fi
done
exit $status
