#!/usr/bin/env python3
"""Median tables from repeated shmcoll-bench runs.

usage: bench/summarize.py DIR
DIR holds files named r-np<N>-<checks>-<rep>.csv written by `shmcoll-bench --csv`. For every
rank count, collective and size, prints the median over repetitions of the OSU average and
of the p50 of the slowest rank, for each check level found.
"""
import csv
import glob
import os
import statistics
import sys

SIZES = [(8, "8 B"), (65536, "64 KiB"), (1 << 20, "1 MiB"), (4 << 20, "4 MiB"), (16 << 20, "16 MiB")]


def main(folder):
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "r-np*-*-*.csv"))):
        np_part, checks, _rep = os.path.basename(path)[2:-4].split("-")
        for row in csv.DictReader(open(path)):
            key = (int(np_part[2:]), checks, row["collective"], int(row["bytes"]))
            runs.setdefault(key, []).append((float(row["avg_us"]), float(row["p50_us"])))
    ranks = sorted({k[0] for k in runs})
    levels = sorted({k[1] for k in runs})
    colls = ["bcast", "scatter", "scatterv", "gather", "gatherv"]
    reps = max(len(v) for v in runs.values())
    print(f"Medians of {reps} runs; microseconds.\n")
    for n in ranks:
        header = " | ".join(f"{lv} avg | {lv} p50" for lv in levels)
        print(f"np={n}\n\n| collective | size | {header} |")
        print("|---|---|" + "---|---|" * len(levels))
        for c in colls:
            for size, label in SIZES:
                cells = []
                for lv in levels:
                    vals = runs.get((n, lv, c, size))
                    if not vals:
                        cells += ["-", "-"]
                        continue
                    cells += [f"{statistics.median(v[0] for v in vals):.2f}", f"{statistics.median(v[1] for v in vals):.2f}"]
                print(f"| {c} | {label} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
