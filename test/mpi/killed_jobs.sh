#!/usr/bin/env bash
# killed_jobs.sh PROGRAM CLEAN_PROGRAM LAUNCHER...
# Five jobs of PROGRAM's dup/bcast/free loop (2 ranks) killed with SIGKILL at random moments,
# then one clean job (CLEAN_PROGRAM): afterwards no shmcoll segment may be left in /dev/shm.
# Run it through isolated.sh: other jobs' segments would be counted, and it would remove their
# stale ones. Outside a private /dev/shm it is skipped (exit 77).
set -uo pipefail
[ "${ISOLATED_NAMESPACES:-}" = 1 ] || { echo "killed_jobs: needs isolated.sh's private /dev/shm"; exit 77; }
program=$1 clean=$2
shift 2

left_by_killed=0
for job in 1 2 3 4 5; do
  "$@" 2 "$program" dup-loop 1000000 >/dev/null 2>&1 &
  launcher=$!
  # A random moment from 0.3 to 2.3 s in: team formation is most of each cycle.
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.3 + 2.0 * r / 32768 }')"
  pkill -KILL -f "^$program dup-loop" ; kill -KILL "$launcher" 2>/dev/null
  wait "$launcher" 2>/dev/null
  # A rank its launcher's helper was starting as the kill came runs on, orphaned, and would
  # keep its segment alive through the clean job: kill until none has been seen for 0.3 s.
  quiet=0
  for _ in $(seq 100); do
    if pkill -KILL -f "^$program dup-loop"; then quiet=0; else quiet=$((quiet + 1)); fi
    [ "$quiet" -ge 3 ] && break
    sleep 0.1
  done
  n=$(ls /dev/shm | grep -c '^shmcoll-' || true)
  echo "killed job $job: $n shmcoll segment(s) in /dev/shm"
  left_by_killed=$n
done
"$@" 2 "$clean" || { echo "killed_jobs: the clean job failed"; exit 1; }
left=$(ls /dev/shm | grep '^shmcoll-' || true)
if [ -n "$left" ]; then
  echo "killed_jobs: left in /dev/shm after the clean job:"
  echo "$left"
  exit 1
fi
echo "killed_jobs: $left_by_killed segment(s) left by the killed jobs, none after the clean job"
