#!/usr/bin/env python3
"""Summarizes the per-rank files of bench/yield_split.cpp (one run of one collective at one size,
root 0, as mpi-bench runs it): medians over the calls after the first --skip fraction (warm-up).

usage: bench/yield_split.py DIR [--skip 0.25]

For the root: its call, its work before its first yield, the time inside that yield (the other
ranks on its CPU run meanwhile) and its work after it, over the calls that yielded inside.
For every other rank: when its call starts after the root's, how long it takes, and how long
after it ends the rank yields its CPU (in whatever the program does next).
"""
import glob
import os
import sys


def median(values):
    values = sorted(v for v in values if v == v)
    return values[len(values) // 2] if values else float("nan")


def load(path):
    calls = []
    with open(path) as f:
        for line in f:
            coll, entry, exit_, y0, y1 = line.split()
            calls.append((coll, float(entry), float(exit_), float(y0), float(y1)))
    return calls


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    skip = 0.25
    if "--skip" in args:
        skip = float(args[args.index("--skip") + 1])
    folder = args[0]
    ranks = sorted(glob.glob(os.path.join(folder, "rank*.txt")),
                   key=lambda p: int(os.path.basename(p)[4:-4]))
    calls = [load(p) for p in ranks]
    n = min(len(c) for c in calls)
    first = int(n * skip)
    for coll in sorted({c[0] for c in calls[0][first:n]}):
        idx = [i for i in range(first, n) if calls[0][i][0] == coll]
        root = [calls[0][i] for i in idx]
        inside = [c for c in root if c[3] != 0 and c[3] < c[2]]
        print(f"{coll}: {len(idx)} calls; root 0 yielded inside {len(inside)} of them")
        print(f"  root call {median([c[2] - c[1] for c in root]):.3f} us;"
              f" before its first yield {median([c[3] - c[1] for c in inside]):.3f},"
              f" inside it {median([c[4] - c[3] for c in inside]):.3f},"
              f" after it {median([c[2] - c[4] for c in inside]):.3f}")
        for r in range(1, len(calls)):
            mine = [calls[r][i] for i in idx]
            starts = [m[1] - c[1] for m, c in zip(mine, root)]
            after = [m[3] - m[2] if m[3] >= m[2] else float("nan") for m in mine]
            print(f"  rank {r}: starts {median(starts):+.3f} us after the root,"
                  f" call {median([m[2] - m[1] for m in mine]):.3f},"
                  f" yields {median(after):.3f} after its call")


if __name__ == "__main__":
    main()
