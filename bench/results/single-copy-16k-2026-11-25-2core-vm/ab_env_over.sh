#!/usr/bin/env bash
# usage: ab_env.sh OUT MPI ROUNDS "ENV_A" "ENV_B"  (one build, two environments)
set -euo pipefail
out=$1 mpi=$2 rounds=$3 envA=$4 envB=$5
mkdir -p "$out"
cd /work/main
args=(--coll scatter,scatterv --min-bytes 8K --max-bytes 64K --max-iterations 200)
if [ "$mpi" = openmpi ]; then
  L=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to core:overload-allowed -np $NP); P=(-x LD_PRELOAD=$PWD/build/lib/libshmcoll_mpi_openmpi.so -x SHMCOLL_CHECKS=deferred)
  ea() { for kv in $1; do echo -x "$kv"; done; }
else
  L=(mpiexec.mpich -bind-to core -n 2); P=(-env LD_PRELOAD $PWD/build/lib/libshmcoll_mpi_mpich.so -env SHMCOLL_CHECKS deferred)
  ea() { for kv in $1; do echo -env "${kv%%=*}" "${kv#*=}"; done; }
fi
echo "A: $envA; B: $envB; $(git rev-parse --short HEAD); $mpi" > "$out/machine.txt"
for r in $(seq 1 "$rounds"); do
  "${L[@]}" build/bench/mpi-bench-$mpi --label native "${args[@]}" > "$out/native-np$NP-$r.csv"
  "${L[@]}" "${P[@]}" $(ea "$envA") build/bench/mpi-bench-$mpi --label A "${args[@]}" > "$out/A-np$NP-$r.csv"
  "${L[@]}" "${P[@]}" $(ea "$envB") build/bench/mpi-bench-$mpi --label B "${args[@]}" > "$out/B-np$NP-$r.csv"
done
