#!/usr/bin/env python3
"""Medians over the rounds of bench/compare_builds.sh: per np, collective and size, the mean
latency (us) of the MPI alone, build A and build B, and the ratios B / A, A / MPI and B / MPI,
each the median of the rounds' own ratios (the runs of one round ran next to each other, so a
round in which the machine was slower counts once whatever its size).

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
    runs = collections.defaultdict(dict)  # (np, collective, bytes, label) -> {round: us}
    for path in glob.glob(os.path.join(folder, "*-np*-*.csv")):
        label, _, round_part = os.path.basename(path)[:-4].split("-")
        for row in csv.DictReader(open(path)):
            key = (int(row["ranks"]), row["collective"], int(row["bytes"]), label)
            runs[key][round_part] = float(row["avg_us"])

    def ratio(key, num, den):
        a, b = runs[key + (num,)], runs[key + (den,)]
        return statistics.median(a[r] / b[r] for r in a if r in b and b[r] > 0)

    print("Mean latency over ranks (us), median of the rounds; ratios: median of the rounds' own.\n")
    print("| np | collective | size | MPI alone | A | B | B / A | A / MPI | B / MPI |")
    print("|---|---|---|---|---|---|---|---|---|")
    for np, coll, size in sorted({k[:3] for k in runs}):
        key = (np, coll, size)
        m = {lab: statistics.median(runs[key + (lab,)].values())
             for lab in ("native", "A", "B") if key + (lab,) in runs}
        if len(m) < 3:
            continue
        print(f"| {np} | {coll} | {size_name(size)} | {m['native']:.1f} | {m['A']:.1f} | "
              f"{m['B']:.1f} | {ratio(key, 'B', 'A'):.2f} | {ratio(key, 'A', 'native'):.2f} | "
              f"{ratio(key, 'B', 'native'):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
