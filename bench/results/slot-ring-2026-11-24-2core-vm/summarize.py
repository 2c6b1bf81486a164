#!/usr/bin/env python3
"""Table of run.sh's results: p50 (us) per configuration, median over rounds, and the rounds'
range; then bcast 1 MiB per round next to the round trip measured just before it.
usage: python3 summarize.py [DIR]"""
import csv, glob, os, re, statistics, sys

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
configs = ["default", "4x64K", "8x64K", "16x64K", "4x256K"]
cells = {}
for path in glob.glob(os.path.join(folder, "*-[0-9]*.csv")):
    name, rnd = os.path.basename(path)[:-4].rsplit("-", 1)
    for row in csv.DictReader(open(path)):
        key = (row["collective"], int(row["bytes"]))
        cells.setdefault((name, key), {})[int(rnd)] = float(row["p50_us"])
keys = sorted({k for (_, k) in cells})
print("| collective | bytes | " + " | ".join(configs) + " |")
print("|---|---:|" + "---:|" * len(configs))
for k in keys:
    row = []
    for c in configs:
        v = cells.get((c, k), {})
        row.append(f"{statistics.median(v.values()):.0f} ({min(v.values()):.0f}-{max(v.values()):.0f})"
                   if v else "-")
    print(f"| {k[0]} | {k[1]} | " + " | ".join(row) + " |")
trips = {}
for line in open(os.path.join(folder, "round-trips.txt")):
    m = re.match(r"round (\d+) (\S+) .*: (\d+) ns", line)
    if m:
        trips[(m.group(2), int(m.group(1)))] = int(m.group(3))
print("\nbcast 1 MiB, per round: p50 us @ round trip ns")
for c in configs:
    v = cells.get((c, ("bcast", 1 << 20)), {})
    print(f"{c:8s} " + "  ".join(f"{v[r]:.0f}@{trips.get((c, r), 0)}" for r in sorted(v)))
