#!/usr/bin/env bash
# Instructions per call of each small collective, per role (root, and one other rank), through
# the shmcoll plugin and in the MPI alone, counted by callgrind on that one rank while the
# others run at full speed. Instruction counts repeat exactly for the same binaries and inputs,
# whatever else the machine does, so they show what a change to the small-call paths costs or
# saves where timings on a shared or oversubscribed machine cannot.
#
# A call is the blocking MPI_<Coll>, or with FORM=nonblocking MPI_I<coll> and MPI_Wait, with
# FORM=persistent MPI_Start and MPI_Wait of a persistent request (mpi-bench --nonblocking,
# --persistent). Its count is the inclusive cost of those entry points, in the plugin's object
# (with the plugin) or in the MPI's library (alone; the larger of MPI_ and PMPI_ where both
# names appear).
#
# Each count is the difference between two runs of mpi-bench (1000 and 2000 timed calls after
# the same 512 untimed ones, bench/warmup.hpp) divided by the 1000 calls between them: the first
# call's one-time work (the team's formation, the MPI's lazy set-up) cancels out. Hence BYTES
# at most 4096, where mpi-bench times 2000 calls.
#
# usage: [MPI=openmpi|mpich] [NPS="2 4"] [COLLS=bcast,scatter,...] [BYTES=8] [CHECKS=full]
#        [FORM=blocking|nonblocking|persistent] bench/call_instructions.sh [BUILD_DIR] [OUT_FILE]
# Prints (and writes to OUT_FILE) one line per np, collective and role: instructions per call
# through the plugin and in the MPI alone. Runs np x collectives x 2 roles x 4 x REPEATS
# programs under valgrind, about 1-2 s each at np=2.
set -euo pipefail
build=${1:-build}
out_file=${2:-/dev/null}
mpi=${MPI:-openmpi}
bytes=${BYTES:-8}
colls=${COLLS:-bcast,scatter,scatterv,gather,gatherv}
if [ "$bytes" -gt 4096 ]; then
  echo "call_instructions.sh: BYTES must be at most 4096 (see the header)" >&2
  exit 1
fi
bin="$build/bench/mpi-bench-$mpi"
plugin="$(realpath "$build/lib/libshmcoll_mpi_$mpi.so")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Total instructions in the timed entry points (see the header) on rank `rank`, for `cap` timed
# calls.
count() {
  local with_plugin=$1 np=$2 coll=$3 rank=$4 cap=$5
  local entries="MPI_${coll^}" flags=()
  case "${FORM:-blocking}" in
    nonblocking) entries="MPI_I${coll} MPI_Wait" flags=(--nonblocking) ;;
    persistent) entries="MPI_Start MPI_Wait" flags=(--persistent) ;;
  esac
  local wrapper="$work/wrapper.sh" profile="$work/callgrind.out"
  rm -f "$profile"
  # The rank's number as either launcher gives it (Open MPI, or MPICH's Hydra).
  cat > "$wrapper" <<EOF
#!/bin/sh
if [ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}" = "$rank" ]; then
  exec valgrind --tool=callgrind --callgrind-out-file=$profile "\$@"
fi
exec "\$@"
EOF
  chmod +x "$wrapper"
  local launch preload=() object=libmpi
  [ "$mpi" = mpich ] && object=libmpich
  [ "$with_plugin" = 1 ] && object="libshmcoll_mpi_$mpi"
  if [ "$mpi" = openmpi ]; then
    launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np"
            -x SHMCOLL_CHECKS="${CHECKS:-full}")
    [ "$with_plugin" = 1 ] && preload=(-x LD_PRELOAD="$plugin")
  else
    launch=(mpiexec.mpich -n "$np" -env SHMCOLL_CHECKS "${CHECKS:-full}")
    [ "$with_plugin" = 1 ] && preload=(-env LD_PRELOAD "$plugin")
  fi
  "${launch[@]}" "${preload[@]}" "$wrapper" "$bin" --coll "$coll" --min-bytes "$bytes" \
    --max-bytes "$bytes" --max-iterations "$cap" "${flags[@]}" > /dev/null 2>&1
  callgrind_annotate --inclusive=yes --threshold=100 "$profile" |
    awk -v entries=" $entries " -v object="/$object" '
      index($0, object) && match($0, /:P?MPI_[A-Za-z_]+ \[/) {
        name = substr($0, RSTART + 1, RLENGTH - 3)
        base = name
        sub(/^P/, "", base)
        if (!index(entries, " " base " ")) next
        cost = $1
        gsub(",", "", cost)
        if (cost + 0 > best[base]) best[base] = cost + 0
      }
      END { total = 0; for (b in best) total += best[b]; print total }'
}

# The median over REPEATS (default 3) such differences: a rank that finds its data not there
# yet polls, and those instructions count too, so single counts stray now and then.
per_call() {
  local low high values=()
  for _ in $(seq 1 "${REPEATS:-3}"); do
    low=$(count "$@" 1000)
    high=$(count "$@" 2000)
    values+=($(( (high - low) / 1000 )))
  done
  printf '%s\n' "${values[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

{
  echo "# instructions per call, $mpi, ${FORM:-blocking}, $bytes B," \
    "SHMCOLL_CHECKS=${CHECKS:-full}, $(date -u +%F)"
  echo "# np collective role plugin mpi-alone"
} | tee "$out_file"
for np in ${NPS:-2 4}; do
  for coll in ${colls//,/ }; do
    for role in root other; do
      rank=0
      [ "$role" = other ] && rank=1
      echo "$np $coll $role $(per_call 1 "$np" "$coll" "$rank") $(per_call 0 "$np" "$coll" "$rank")"
    done
  done | tee -a "$out_file"
done
