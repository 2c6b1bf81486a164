#!/usr/bin/env bash
# shmcoll-bench's records and pictures: --numa-matrix, the collectives sweep and --placements,
# each with --quick, --json and --png, write a record whose fields a reader can rely on and a
# PNG image; --numa-matrix under shmcoll-run with several ranks is refused with a message.
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

# An MPI's own figures to compare with, as mpi-bench writes them (4-rank rows are not this run's).
{
  echo "label,collective,ranks,bytes,iterations,avg_us,min_us,max_us,memcpy_us,floor_us"
  for coll in bcast scatter scatterv gather gatherv; do
    for bytes in 1 4 16 64; do
      echo "mpi,$coll,2,$bytes,100,0.5,0.4,0.6,0.1,0.1"
      echo "mpi,$coll,4,$bytes,100,0.9,0.8,1.0,0.1,0.1"
    done
  done
} > "$dir/mpi.csv"
if ! out=$(timeout 120 "$run" -n 2 "$bench" --quick --max-bytes 64K --json "$dir/c.json" \
    --png "$dir/c.png" --compare "$dir/mpi.csv" 2>&1); then
  fail "shmcoll-run -n 2 shmcoll-bench --quick exited with an error:"
  echo "$out"
fi
[[ "$out" == *"estimated time"* ]] || fail "the sweep's output lacks its estimated time"
[ -s "$dir/c.png" ] && is_png "$dir/c.png" || fail "the sweep's --png did not write a PNG image"
python3 - "$dir/c.json" <<'PY' || fail "the sweep's record lacks fields (above)"
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
def need(cond, what):
    if not cond: problems.append(what)
need(r.get("kind") == "collectives" and r.get("revision"), "kind and revision")
need(len(r.get("machine", {}).get("numa_nodes", [])) >= 1, "machine.numa_nodes")
p = r.get("parameters", {})
need(p.get("ranks") == 2 and p.get("quick") is True and len(p.get("placement", [])) == 2,
     "parameters: ranks, quick, placement")
colls = [c["collective"] for c in r.get("collectives", [])]
need(colls == ["bcast", "scatter", "scatterv", "gather", "gatherv"], "five collectives")
for c in r.get("collectives", []):
    sizes = [s["bytes"] for s in c["sizes"]]
    need(sizes == [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536], c["collective"] + " sizes")
    for s in c["sizes"]:
        l = s["latency_us"]
        need(0 < l["min"] <= l["median"] <= l["max"], c["collective"] + " latency spread")
        need(s["valid"] == "ok" and s["bandwidth_mbps"] > 0, c["collective"] + " valid")
        for f in ("memcpy_us", "floor_us"):
            need(s[f]["min"] <= s[f]["median"] <= s[f]["max"], c["collective"] + " " + f)
cmp = r.get("compared_with", [])
need(len(cmp) == 1 and cmp[0]["label"] == "mpi" and len(cmp[0]["points"]) == 20 and
     all(p["osu_average_us"] == 0.5 for p in cmp[0]["points"]), "compared_with: the 2-rank rows")
for p in problems: print("record:", p)
sys.exit(1 if problems else 0)
PY
printf 'label,collective\n' > "$dir/bad.csv"
out=$(timeout 60 "$run" -n 2 "$bench" --quick --max-bytes 4 --compare "$dir/bad.csv" 2>&1)
rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"$dir/bad.csv: not mpi-bench's CSV"* ]] ||
  fail "--compare of a file that is not mpi-bench's: status $rc, output: $out"

if ! out=$(timeout 120 "$run" -n 2 "$bench" --placements --quick --max-bytes 1K \
    --json "$dir/p.json" --png "$dir/p.png" 2>&1); then
  fail "shmcoll-run -n 2 shmcoll-bench --placements --quick exited with an error:"
  echo "$out"
fi
for needle in "estimated time" "# P1: ranks by core" "what placement costs"; do
  [[ "$out" == *"$needle"* ]] || fail "--placements output lacks '$needle'"
done
[ -s "$dir/p.png" ] && is_png "$dir/p.png" || fail "--placements --png did not write a PNG image"
python3 - "$dir/p.json" <<'PY' || fail "the placements record lacks fields (above)"
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
def need(cond, what):
    if not cond: problems.append(what)
need(r.get("kind") == "placements" and r.get("revision"), "kind and revision")
places = r.get("placements", [])
need(len(places) >= 2, "at least two placements (ranks by core and by node)")
for p in places:
    need(p["ranks_mapped_by"] in ("core", "numa") and p["buffers"] in ("own node", "next node"),
         "mapping and buffer site")
    need(len(p["ranks"]) == 2, "two ranks")
    for rank in p["ranks"]:
        need(rank["buffer_on_node"] == 1.0, "every buffer page on its planned node")
    need(len(p["collectives"]) == 5, "five collectives")
costs = r.get("placement_cost", [])
need(len(costs) == 5 * 6, "a cost per collective and size")
for c in costs:
    need(len(c["ratios"]) == len(places) and min(c["ratios"]) == 1.0, "ratios to the best")
for p in problems: print("record:", p)
sys.exit(1 if problems else 0)
PY

out=$(timeout 60 "$run" -n 2 "$bench" --numa-matrix 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [[ "$out" == *"--numa-matrix runs in one process"* ]] ||
  fail "--numa-matrix under shmcoll-run -n 2: status $rc, output: $out"

[ "$failures" -eq 0 ] && echo "bench records: all checks passed"
exit $((failures > 0))
