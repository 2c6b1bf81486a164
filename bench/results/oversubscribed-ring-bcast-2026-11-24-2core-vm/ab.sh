#!/bin/bash
P=$(realpath /work/main/build/lib/libshmcoll_mpi_openmpi.so)
for round in $(seq ${ROUNDS:-3}); do
  rt=$(/work/main/build/bench/core-round-trip 2>&1 | grep -o "[0-9]* ns" | head -1)
  for v in native single slots; do
    pre=(); [ $v != native ] && pre=(-x LD_PRELOAD=$P -x SHMCOLL_CHECKS=deferred)
    [ $v = slots ] && pre+=(-x SHMCOLL_OVERSUBSCRIBED_BCAST_SINGLE_COPY_MIN_BYTES=1073741824)
    echo "$v r$round ($rt): $(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to core:overload-allowed -np ${NP:-8} "${pre[@]}" /work/main/build/bench/mpi-bench-openmpi --coll ${COLL:-bcast} --min-bytes ${MIN:-262144} --max-bytes ${MAX:-4194304} --max-iterations 200 --label $v 2>/dev/null | grep -v ^label | awk -F, '{printf "%s:%s ", $4, $6}')"
  done
done
