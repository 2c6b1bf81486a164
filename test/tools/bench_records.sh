#!/usr/bin/env bash
# shmcoll-bench's records and pictures: --numa-matrix --quick with --json and --png writes a
# record whose fields a reader can rely on and a PNG image; the same run under shmcoll-run
# is refused with a message.
#   bench_records.sh BUILD_DIR
set -uo pipefail
build=$1
bench=$build/bench/shmcoll-bench run=$build/tools/shmcoll-run
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}

# A PNG file starts with these eight bytes.
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }

if ! out=$(timeout 120 "$bench" --numa-matrix --quick --json "$dir/m.json" --png "$dir/m.png" 2>&1); then
  fail "shmcoll-bench --numa-matrix --quick exited with an error:"
  echo "$out"
fi
for needle in "estimated time" "copy bandwidth, one core" "load latency" "NUMA distances"; do
  [[ "$out" == *"$needle"* ]] || fail "--numa-matrix output lacks '$needle'"
done
[ -s "$dir/m.png" ] && is_png "$dir/m.png" || fail "--png did not write a PNG image"
python3 - "$dir/m.json" <<'PY' || fail "the --numa-matrix record lacks fields (above)"
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
def need(cond, what):
    if not cond: problems.append(what)
need(r.get("tool") == "shmcoll-bench" and r.get("kind") == "numa-matrix", "tool and kind")
need(isinstance(r.get("revision"), str) and r["revision"], "revision")
m = r.get("machine", {})
need(len(m.get("numa_nodes", [])) >= 1 and "cpu_model" in m and "kernel" in m, "machine")
rows = r.get("numa_matrix", [])
need(len(rows) == len(m.get("numa_nodes", [])), "one row per memory node")
for row in rows:
    for cell in row:
        need(cell["bandwidth_gbps"] > 0 and cell["latency_ns"] > 0, "positive figures")
        for f in ("bandwidth_gbps", "bandwidth_all_cores_gbps", "latency_ns"):
            s = cell["repetitions"][f]
            need(s["min"] <= s["median"] <= s["max"], f + " min <= median <= max")
need(r.get("parameters", {}).get("quick") is True, "parameters.quick")
for p in problems: print("record:", p)
sys.exit(1 if problems else 0)
PY

out=$(timeout 60 "$run" -n 2 "$bench" --numa-matrix 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [[ "$out" == *"--numa-matrix runs in one process"* ]] ||
  fail "--numa-matrix under shmcoll-run -n 2: status $rc, output: $out"

[ "$failures" -eq 0 ] && echo "bench records: all checks passed"
exit $((failures > 0))
