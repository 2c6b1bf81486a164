#!/usr/bin/env python3
"""Medians over the rounds of bench/compare_builds.sh: per np, collective and size, the mean
latency (us) of the MPI alone, build A and build B, B / A, and each build against the MPI.

usage: bench/summarize_builds.py DIR
"""
import collections
import csv
import glob
import os
import statistics
import sys


def size_name(b):
    for unit, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= unit:
            return f"{b // unit} {name}"
    return f"{b} B"


def main(folder):
    runs = collections.defaultdict(list)
    for path in glob.glob(os.path.join(folder, "*-np*-*.csv")):
        label = os.path.basename(path).split("-")[0]
        for row in csv.DictReader(open(path)):
            key = (int(row["ranks"]), row["collective"], int(row["bytes"]), label)
            runs[key].append(float(row["avg_us"]))
    print("Mean latency over ranks (us), median of the rounds.\n")
    print("| np | collective | size | MPI alone | A | B | B / A | A / MPI | B / MPI |")
    print("|---|---|---|---|---|---|---|---|---|")
    for np, coll, size in sorted({k[:3] for k in runs}):
        m = {lab: statistics.median(runs[(np, coll, size, lab)])
             for lab in ("native", "A", "B") if (np, coll, size, lab) in runs}
        if len(m) < 3:
            continue
        print(f"| {np} | {coll} | {size_name(size)} | {m['native']:.1f} | {m['A']:.1f} | "
              f"{m['B']:.1f} | {m['B'] / m['A']:.2f} | {m['A'] / m['native']:.2f} | "
              f"{m['B'] / m['native']:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
