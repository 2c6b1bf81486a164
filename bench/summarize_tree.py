#!/usr/bin/env python3
"""Median p50 of flat and tree per collective, team size and message size, and tree/flat.

usage: bench/summarize_tree.py DIR   (the CSVs of bench/compare_tree.sh)
"""
import csv
import glob
import os
import re
import statistics
import sys
from collections import defaultdict


def main():
    d = sys.argv[1]
    p50 = defaultdict(list)  # (coll, ranks, bytes, alg) -> [p50 per run]
    for path in glob.glob(os.path.join(d, "*.csv")):
        alg = re.match(r"(flat|tree)-", os.path.basename(path)).group(1)
        with open(path) as f:
            for row in csv.DictReader(f):
                key = (row["collective"], int(row["ranks"]), int(row["bytes"]), alg)
                p50[key].append(float(row["p50_us"]))
    keys = sorted({k[:3] for k in p50})
    print("| collective | ranks | bytes | flat p50 (us) | tree p50 (us) | tree / flat | runs |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for coll, n, b in keys:
        f, t = p50.get((coll, n, b, "flat"), []), p50.get((coll, n, b, "tree"), [])
        if not f or not t:
            continue
        mf, mt = statistics.median(f), statistics.median(t)
        print(f"| {coll} | {n} | {b} | {mf:.2f} | {mt:.2f} | {mt / mf:.2f} | {min(len(f), len(t))} |")


if __name__ == "__main__":
    main()
