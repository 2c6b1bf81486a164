#!/usr/bin/env bash
# expect_output.sh STATUS COUNT REGEX -- COMMAND...
# Runs COMMAND and passes when it exits with STATUS ("nonzero" for any failure) and its output
# (stdout and stderr together) has exactly COUNT lines matching the extended REGEX.
set -uo pipefail
want_status=$1 want_count=$2 regex=$3
shift 3
[ "$1" = "--" ] && shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
count=$(printf '%s\n' "$output" | grep -cE -- "$regex")
if [ "$want_status" = nonzero ]; then
  [ "$status" -ne 0 ] || { echo "expect_output: exit status 0, expected a failure"; exit 1; }
elif [ "$status" -ne "$want_status" ]; then
  echo "expect_output: exit status $status, expected $want_status"
  exit 1
fi
if [ "$count" -ne "$want_count" ]; then
  echo "expect_output: $count lines match '$regex', expected $want_count"
  exit 1
fi
echo "expect_output: as expected"
