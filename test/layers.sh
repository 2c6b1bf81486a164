#!/bin/bash
# The folders of lib/ form layers: each may include the public headers (shmcoll/) and the
# folders before it in LAYERS, never one after it, so their dependencies cannot form a cycle.
# Prints every include that breaks the order and fails if there is one.
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
for dir in */; do
  dir=${dir%/}
  if [[ " ${LAYERS[*]} " != *" $dir "* ]]; then
    echo "lib/$dir/ is in no layer: add it to LAYERS in test/layers.sh"
    status=1
  fi
done
exit $status
