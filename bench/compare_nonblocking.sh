#!/usr/bin/env bash
# The non-blocking (or persistent) forms through the plugin against the blocking ones and the
# MPI's own, on one mpi-bench binary: per round, at NP ranks (2), the plugin's blocking calls, its
# non-blocking calls (each MPI_I* followed by MPI_Wait, --nonblocking; with FORM=persistent each
# MPI_Start of a persistent request followed by MPI_Wait, --persistent), and the MPI's own of
# both with a preload that does nothing (an equal-length path beside the plugin), in the
# opposite order every other round. Prints, per collective and size, each variant's median over
# the rounds and the medians of the rounds' own ratios: the form / blocking through the plugin,
# and plugin / MPI for the form.
# RANK_ENV (NAME=VALUE ...) is set in every rank of every run, e.g.
# RANK_ENV=SHMCOLL_MPI_FAKE_NODES=2 for a communicator across nodes.
# usage: [MPI=openmpi|mpich] [FORM=nonblocking|persistent] [COLLS=bcast,scatter,gather]
#        [SIZES="8 1048576"] [NP=2] [RANK_ENV=...] bench/compare_nonblocking.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-4}
mpi=${MPI:-openmpi}
form=${FORM:-nonblocking}
colls=${COLLS:-bcast,scatter,gather}
sizes=${SIZES:-8 1048576}
np=${NP:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
plugin=$(realpath "$build/lib/libshmcoll_mpi_$mpi.so")
nop=$(realpath "$build/lib/libshmcoll_nop_$mpi.so")
min=$(printf '%s\n' $sizes | sort -n | head -1)
max=$(printf '%s\n' $sizes | sort -n | tail -1)
# run NAME PRELOAD [mpi-bench arguments]: "NAME,collective,bytes,avg_us" for the chosen sizes.
run() {
  local name=$1 preload=$2
  shift 2
  local bench=("$build/bench/mpi-bench-$mpi" --coll "$colls" --min-bytes "$min" --max-bytes "$max")
  local setting env=()
  for setting in LD_PRELOAD="$preload" ${RANK_ENV:-}; do
    if [ "$mpi" = openmpi ]; then
      env+=(-x "$setting")
    else
      env+=(-env "${setting%%=*}" "${setting#*=}")
    fi
  done
  if [ "$mpi" = openmpi ]; then
    mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to core:overload-allowed -np "$np" \
      "${env[@]}" "${bench[@]}" "$@"
  else
    mpiexec.mpich -bind-to core -n "$np" "${env[@]}" "${bench[@]}" "$@"
  fi 2>/dev/null | awk -F, -v name="$name" -v sizes=" $sizes " \
    'NR > 1 && index(sizes, " " $4 " ") {print name "," $2 "," $4 "," $6}'
}
for round in $(seq 1 "$rounds"); do
  order="plugin-blocking plugin-$form mpi-blocking mpi-$form"
  [ $((round % 2)) = 0 ] && order="mpi-$form mpi-blocking plugin-$form plugin-blocking"
  for variant in $order; do
    preload=$plugin
    [[ $variant == mpi-* ]] && preload=$nop
    flags=()
    [[ $variant == *-"$form" ]] && flags=(--"$form")
    run "$variant" "$preload" "${flags[@]}"
  done > "$out/round$round.csv"
done
python3 - "$out" "$form" <<'PY'
import collections, glob, statistics, sys
form = sys.argv[2]
short = "I" if form == "nonblocking" else "Start"
runs = collections.defaultdict(dict)
for path in sorted(glob.glob(sys.argv[1] + "/round*.csv")):
    for line in open(path):
        name, coll, size, us = line.strip().split(",")
        runs[(coll, int(size))][(name, path)] = float(us)
print(f"| collective | bytes | plugin {short}+Wait | plugin blocking | MPI {short}+Wait"
      f" | MPI blocking | {short} / blocking | {short} / MPI's {short} |")
print("|---|---|---|---|---|---|---|---|")
for (coll, size), d in sorted(runs.items()):
    paths = sorted({p for _, p in d})
    med = lambda n: statistics.median(d[(n, p)] for p in paths)
    ratio = lambda a, b: statistics.median(d[(a, p)] / d[(b, p)] for p in paths)
    print(f"| {coll} | {size} | {med('plugin-' + form):.3f} | {med('plugin-blocking'):.3f}"
          f" | {med('mpi-' + form):.3f} | {med('mpi-blocking'):.3f}"
          f" | {ratio('plugin-' + form, 'plugin-blocking'):.2f}"
          f" | {ratio('plugin-' + form, 'mpi-' + form):.2f} |")
PY
