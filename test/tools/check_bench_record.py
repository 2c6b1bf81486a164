#!/usr/bin/env python3
"""Checks the fields of a shmcoll-bench record (--json) that readers rely on.

usage: check_bench_record.py KIND FILE   (KIND: numa-matrix, collectives or placements)
Prints each problem found and exits 1 if there is one.
"""
import json
import sys

problems = []


def need(condition, what):
    if not condition:
        problems.append(what)


def spread(s, what):
    need(s["min"] <= s["median"] <= s["max"], what + ": min <= median <= max")


def common(r, kind):
    need(r.get("tool") == "shmcoll-bench" and r.get("kind") == kind, "tool and kind")
    need(isinstance(r.get("revision"), str) and r["revision"], "revision")
    m = r.get("machine", {})
    need(len(m.get("numa_nodes", [])) >= 1 and "cpu_model" in m and "kernel" in m, "machine")
    need(r.get("parameters", {}).get("quick") is True, "parameters.quick")


def numa_matrix(r):
    rows = r.get("numa_matrix", [])
    need(len(rows) == len(r["machine"]["numa_nodes"]), "one row per memory node")
    for row in rows:
        for cell in row:
            need(cell["bandwidth_gbps"] > 0 and cell["latency_ns"] > 0, "positive figures")
            for f in ("bandwidth_gbps", "bandwidth_all_cores_gbps", "latency_ns"):
                spread(cell["repetitions"][f], f)


def sweep(collectives, sizes):
    names = [c["collective"] for c in collectives]
    need(names == ["bcast", "scatter", "scatterv", "gather", "gatherv"], "five collectives")
    for c in collectives:
        need([s["bytes"] for s in c["sizes"]] == sizes, c["collective"] + " sizes")
        for s in c["sizes"]:
            need(s["latency_us"]["min"] > 0, c["collective"] + " latency")
            need(s["valid"] == "ok" and s["bandwidth_mbps"] > 0, c["collective"] + " valid")
            for f in ("latency_us", "memcpy_us", "floor_us"):
                spread(s[f], c["collective"] + " " + f)


def collectives(r):
    p = r["parameters"]
    need(p.get("ranks") == 2 and len(p.get("placement", [])) == 2, "parameters: ranks, placement")
    sweep(r.get("collectives", []), [4**k for k in range(9)])  # --quick to 64K
    compared = r.get("compared_with", [])
    need(len(compared) == 1 and compared[0]["label"] == "mpi" and
         len(compared[0]["points"]) == 20 and
         all(p["osu_average_us"] == 0.5 for p in compared[0]["points"]),
         "compared_with: the 2-rank rows of the CSV")


def placements(r):
    places = r.get("placements", [])
    need(len(places) >= 2, "at least two placements (ranks by core and by node)")
    for p in places:
        need(p["ranks_mapped_by"] in ("core", "numa") and p["buffers"] in ("own node", "next node"),
             "mapping and buffer site")
        need(len(p["ranks"]) == 2, "two ranks")
        need(all(rank["buffer_on_node"] == 1.0 for rank in p["ranks"]),
             "every buffer page on its planned node")
        sweep(p["collectives"], [4**k for k in range(6)])  # --quick to 1K
    costs = r.get("placement_cost", [])
    need(len(costs) == 5 * 6, "a cost per collective and size")
    for c in costs:
        need(len(c["ratios"]) == len(places) and min(c["ratios"]) == 1.0, "ratios to the best")


def main():
    kind, path = sys.argv[1], sys.argv[2]
    record = json.load(open(path))
    common(record, kind)
    {"numa-matrix": numa_matrix, "collectives": collectives, "placements": placements}[kind](record)
    for p in problems:
        print("record %s: %s" % (path, p))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
