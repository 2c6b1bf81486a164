#!/usr/bin/env python3
"""Ratios pipeline / single from run.sh's results: per collective and size, the median over
rounds of each configuration, for the fixed-root runs (osu-*, mean latency) and the rotating-
root runs (rot-*, p50). Rounds whose core round trip was 300 ns or more (the two CPUs sharing
one physical core, on this VM) are listed but left out of the medians.
usage: python3 summarize.py [DIR]"""
import csv, glob, os, re, statistics, sys

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
trips = {}
for line in open(os.path.join(folder, "round-trips.txt")):
    m = re.match(r"round (\d+) (\S+) .*: (\d+) ns", line)
    if m:
        trips[(m.group(2), int(m.group(1)))] = int(m.group(3))
print("round trips (ns):", ", ".join(f"{c} {r}: {v}" for (c, r), v in sorted(trips.items())))
data = {}
for path in glob.glob(os.path.join(folder, "*-*-[0-9]*.csv")):
    style, cfg, rnd = os.path.basename(path)[:-4].split("-")
    if trips.get((cfg, int(rnd)), 0) >= 300:
        continue
    if style == "osu":
        rows = [(r[1], int(r[3]), float(r[5])) for r in csv.reader(open(path))]
    else:
        rows = [(r["collective"], int(r["bytes"]), float(r["p50_us"]))
                for r in csv.DictReader(open(path))]
    for coll, size, us in rows:
        data.setdefault((style, coll, size, cfg), []).append(us)
for style, title in (("osu", "fixed root (OSU way, mean us)"), ("rot", "rotating root (p50 us)")):
    print(f"\n{title}: pipeline / single, medians over rounds")
    print("| collective | " + " | ".join(f"{s >> 10} KiB" for s in
                                         sorted({k[2] for k in data if k[0] == style})) + " |")
    sizes = sorted({k[2] for k in data if k[0] == style})
    print("|---|" + "---:|" * len(sizes))
    for coll in ["bcast", "scatter", "scatterv", "gather", "gatherv"]:
        cells = []
        for s in sizes:
            p, q = data.get((style, coll, s, "pipeline")), data.get((style, coll, s, "single"))
            cells.append(f"{statistics.median(p):.0f}/{statistics.median(q):.0f} = "
                         f"{statistics.median(p) / statistics.median(q):.2f}" if p and q else "-")
        print(f"| {coll} | " + " | ".join(cells) + " |")
