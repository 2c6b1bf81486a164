#!/usr/bin/env python3
"""auto / 4 slots per size: median over rounds of the mean latency (bench/mpi_bench.cpp).
usage: python3 summarize.py [DIR]"""
import csv, glob, os, statistics, sys

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
d = {}
for p in glob.glob(os.path.join(folder, "*-*-*.csv")):
    n, np_, _ = os.path.basename(p)[:-4].split("-")
    for row in csv.reader(open(p)):
        d.setdefault((int(np_), row[1], int(row[3]), n), []).append(float(row[5]))
for np_ in sorted({k[0] for k in d}):
    print(f"np={np_}")
    for c in ["bcast", "scatter", "scatterv", "gather", "gatherv"]:
        sizes = sorted({k[2] for k in d if k[0] == np_ and k[1] == c})
        print(f"  {c} " + " ".join(
            f"{s}:{statistics.median(d[(np_, c, s, 'auto')]) / statistics.median(d[(np_, c, s, 's4')]):.2f}"
            for s in sizes))
