#!/usr/bin/env python3
"""Medians over the runs in DIR/runs.csv (mpi-bench rows labelled ompi and plug): per collective
and size, plugin / Open MPI (avg_us). Usage: bench/summarize_plugin_vs_ompi.py DIR"""
import collections
import csv
import pathlib
import statistics
import sys

runs = collections.defaultdict(list)
with open(pathlib.Path(sys.argv[1]) / "runs.csv") as f:
    for r in csv.DictReader(f):
        runs[(r["label"], r["collective"], r["ranks"], int(r["bytes"]))].append(float(r["avg_us"]))
sizes = sorted({k[3] for k in runs})
print("| ranks | collective | " + " | ".join(f"{b} B" for b in sizes) + " |")
print("|---:|---|" + "---:|" * len(sizes))
for np in sorted({k[2] for k in runs}, key=int):
    for coll in ["bcast", "scatter", "scatterv", "gather", "gatherv"]:
        cells = []
        for b in sizes:
            o, p = runs.get(("ompi", coll, np, b)), runs.get(("plug", coll, np, b))
            cells.append(f"{statistics.median(p) / statistics.median(o):.2f}" if o and p else "")
        print(f"| {np} | {coll} | " + " | ".join(cells) + " |")
