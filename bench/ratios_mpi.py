#!/usr/bin/env python3
"""Plugin / native ratios at every size, one line per collective, from bench/compare_mpi.sh runs.

usage: bench/ratios_mpi.py DIR [MPI]
For each np found in DIR and each collective: "bytes:ratio" for every size, where ratio is the
median over repetitions of MPI+shmcoll divided by the median of MPI natively (MPI: openmpi by
default). A compact view for finding the sizes at which the plugin is slower.
"""
import csv
import glob
import os
import statistics
import sys


def main(folder, mpi):
    data = {}
    for path in glob.glob(os.path.join(folder, f"{mpi}-*-np*-*.csv")):
        _mpi, mode, np_part, _rep = os.path.basename(path)[:-4].split("-")
        for row in csv.DictReader(open(path)):
            key = (int(np_part[2:]), row["collective"], int(row["bytes"]), mode)
            data.setdefault(key, []).append(float(row["avg_us"]))
    for n in sorted({k[0] for k in data}):
        print(f"np={n}")
        for coll in ["bcast", "scatter", "scatterv", "gather", "gatherv"]:
            cells = []
            for b in sorted({k[2] for k in data if k[0] == n and k[1] == coll}):
                native, plugin = data.get((n, coll, b, "native")), data.get((n, coll, b, "shmcoll"))
                if native and plugin:
                    cells.append(f"{b}:{statistics.median(plugin) / statistics.median(native):.1f}")
            print(coll, " ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".", sys.argv[2] if len(sys.argv) > 2 else "openmpi")
